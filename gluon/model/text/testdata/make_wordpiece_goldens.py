#!/usr/bin/python3
"""Vocabulary and goldens for gluon/model/text's BERT tokenizer tests.

Debian has no transformers package, so BERT's tokenizer is written out
below from its documented algorithm, in Python, whose str.lower (applied
to one character at a time, as transformers' tokenize() does) and
unicodedata are what Hugging Face's BertTokenizer relies on:

  basic tokenisation: drop U+0000, U+FFFD and control characters (category
  C but tab, newline, carriage return); turn whitespace (space, tab,
  newline, carriage return, category Zs) into spaces; put spaces around
  CJK ideographs (when asked); normalise to NFC; split on whitespace; for
  each word that is not a special token, lowercase (when uncased,
  character by character: a word-final capital sigma becomes σ) and
  strip accents (NFD, drop category Mn; by default when uncased); split
  off each punctuation character (ASCII symbols and category P);

  WordPiece: per word, greedy longest match first, continuation pieces
  prefixed "##"; a word that cannot be covered, or longer than 100
  characters, is [UNK] whole;

  special tokens written in the text ([CLS], [SEP], [PAD], [MASK], [UNK])
  are split out first and kept whole;

  encoding: [CLS] a [SEP] (b [SEP]), token types 0 then 1, truncation
  "longest_first" (one token at a time from the end of the longer text,
  the second on a tie), padding with [PAD], mask 0;

  decoding: tokens joined by spaces, " ##" removed, then the
  clean_up_tokenization replacements in order.

A small handmade vocabulary (wordpiece_vocab.txt) is written too. The
cases cover accents, CJK, punctuation, control characters and odd
whitespace, Greek final sigma and dotted capital I under lowercasing,
cased and uncased modes, long words, unknown words and pieces, special
tokens in the text, pairs, truncation and padding.

Run from the repository root:
    /usr/bin/python3 gluon/model/text/testdata/make_wordpiece_goldens.py
"""
import json
import os
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))

SPECIALS = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + ["¿", "¡", "—", "…", "。", "、", "「", "」"]
WORDS = """the quick brown fox jump ##s ##ed ##ing hello world ##world un ##aff ##able play ##ground
token ##ize ##r ##ization cafe naive resume facade don t i it s am mask a ##a ab ##ab x ##x
ang ##strom que em dash 20 ##24 5 istanbul σοφος ο λογος 我 爱 北 京 東 Hello World The Café
Ang ##ström ¿Qué""".split()
VOCAB = SPECIALS + PUNCT + WORDS
VOCAB += ["[unused%d]" % i for i in range(1, 113 - len(VOCAB))]  # 112 tokens, the tiny BERT's vocab_size


def is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c).startswith("C")


def is_punct(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def is_cjk(cp):
    return any(lo <= cp <= hi for lo, hi in [
        (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)])


def strip_accents(w):
    return "".join(c for c in unicodedata.normalize("NFD", w) if unicodedata.category(c) != "Mn")


def split_punct(w):
    out, cur = [], ""
    for c in w:
        if is_punct(c):
            if cur:
                out.append(cur)
            out.append(c)
            cur = ""
        else:
            cur += c
    if cur:
        out.append(cur)
    return out


def basic(text, lower, strip, cjk):
    cleaned = []
    for c in text:
        if ord(c) == 0 or ord(c) == 0xFFFD or is_control(c):
            continue
        cleaned.append(" " if is_whitespace(c) else c)
    text = "".join(cleaned)
    if cjk:
        text = "".join(" %s " % c if is_cjk(ord(c)) else c for c in text)
    text = unicodedata.normalize("NFC", text)
    words = []
    for w in text.split():
        if w in SPECIALS_KEPT:
            words.append(w)
            continue
        if lower:
            # one character at a time, as transformers' tokenize() lowers
            # the text (re.sub over "(.+?)") and the fast tokenizer's
            # per-character to_lowercase: a final capital sigma is σ, not
            # the ς of str.lower on the whole word
            w = "".join(c.lower() for c in w)
        if strip:
            w = strip_accents(w)
        words.extend(split_punct(w))
    return words


SPECIALS_KEPT = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]


def wordpiece(word, vocab):
    if word in SPECIALS_KEPT:
        return [word]
    if len(word) > 100:
        return ["[UNK]"]
    out, start = [], 0
    while start < len(word):
        end, piece = len(word), None
        while start < end:
            s = word[start:end]
            if start > 0:
                s = "##" + s
            if s in vocab:
                piece = s
                break
            end -= 1
        if piece is None:
            return ["[UNK]"]
        out.append(piece)
        start = end
    return out


def tokenize(text, vocab, opts):
    lower = not opts["cased"]
    strip = opts["accents"] == "strip" or (lower and opts["accents"] == "default")
    out = []
    while text:
        at, tok = -1, None
        for s in SPECIALS_KEPT:
            i = text.find(s)
            if i >= 0 and (at < 0 or i < at):
                at, tok = i, s
        chunk = text if at < 0 else text[:at]
        for w in basic(chunk, lower, strip, opts["cjk"]):
            out.extend(wordpiece(w, vocab))
        if tok is None:
            break
        out.append(tok)
        text = text[at + len(tok):]
    return out


def encode(a, b, vocab, max_length, pad):
    ids = lambda toks: [vocab.get(t, vocab["[UNK]"]) for t in toks]
    a, b = ids(a), (ids(b) if b is not None else None)
    specials = 2 if b is None else 3
    if max_length:
        for _ in range(len(a) + len(b or []) + specials - max_length):
            if b is None or len(a) > len(b):
                a = a[:-1]
            else:
                b = b[:-1]
    seq = [vocab["[CLS]"]] + a + [vocab["[SEP]"]]
    types = [0] * len(seq)
    if b is not None:
        seq += b + [vocab["[SEP]"]]
        types += [1] * (len(b) + 1)
    mask = [1] * len(seq)
    if pad:
        n = max_length - len(seq)
        seq, types, mask = seq + [vocab["[PAD]"]] * n, types + [0] * n, mask + [0] * n
    return seq, types, mask


def decode(ids, inv, skip):
    toks = [inv[i] for i in ids if not (skip and inv[i] in SPECIALS_KEPT)]
    s = " ".join(toks).replace(" ##", "").strip()
    for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
        s = s.replace(a, b)
    return s


UNCASED = {"cased": False, "accents": "default", "cjk": True}
CASED = {"cased": True, "accents": "default", "cjk": True}

CASES = [
    ("plain", "The quick brown fox jumped.", None, UNCASED, 0, False),
    ("pieces", "unaffable playground tokenizer tokenization", None, UNCASED, 0, False),
    ("accents", "Héllo Wörld! Café naïve résumé façade Ångström", None, UNCASED, 0, False),
    ("combining", "cafe\u0301 nai\u0308ve", None, UNCASED, 0, False),
    ("accents kept uncased", "Café naïve cafe İstanbul istanbul", None, {"cased": False, "accents": "keep", "cjk": True}, 0, False),
    ("cased", "Hello World, The Café Ångström hello", None, CASED, 0, False),
    ("cased stripped", "Café Ångström", None, {"cased": True, "accents": "strip", "cjk": True}, 0, False),
    ("cjk", "我爱北京 東京の", None, UNCASED, 0, False),
    ("cjk not split", "我爱北京 東", None, {"cased": False, "accents": "default", "cjk": False}, 0, False),
    ("punctuation", "Hello,world!! don't ¿Qué? em—dash a_b $5 x^2+x=... 「hello」、", None, UNCASED, 0, False),
    ("symbols not punctuation", "5€ 5° x±x", None, UNCASED, 0, False),
    ("control and whitespace", "hello\x00world\u200b!\tthe\nfox\r\u00a0jump\u3000s\ufffd\u2028play\x07ground", None, UNCASED, 0, False),
    ("greek final sigma", "ΣΟΦΟΣ Ο ΛΟΓΟΣ ΣΟΦΟΣ. ΣΟΦΟΣ' ΣΟΦΟΣ.Ο Σ ΟΣΟ", None, UNCASED, 0, False),
    ("dotted capital I", "İSTANBUL İstanbul", None, UNCASED, 0, False),
    ("long words", "ab" * 50 + " " + "ab" * 50 + "a " + "a" * 101 + " xx", None, UNCASED, 0, False),
    ("unknowns", "quickly zebra xyz the", None, UNCASED, 0, False),
    ("special tokens", "the [MASK] fox[SEP]jump [mask] [UNK]s [CLS]", None, UNCASED, 0, False),
    ("empty", "", None, UNCASED, 0, False),
    ("pair", "The quick brown fox", "hello world", UNCASED, 0, False),
    ("pair truncated", "the quick brown fox jumped over", "hello world", UNCASED, 9, False),
    ("pair truncated tie", "the quick brown", "hello world play", UNCASED, 7, False),
    ("single truncated padded", "the quick brown fox", None, UNCASED, 4, True),
    ("padded", "hello", None, UNCASED, 6, True),
    ("pair padded", "hello", "world", UNCASED, 8, True),
]


def main():
    with open(os.path.join(HERE, "wordpiece_vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(VOCAB) + "\n")
    vocab = {t: i for i, t in enumerate(VOCAB)}
    cases = []
    for name, text, pair, opts, max_length, pad in CASES:
        toks = tokenize(text, vocab, opts)
        ptoks = tokenize(pair, vocab, opts) if pair is not None else None
        ids, types, mask = encode(toks, ptoks, vocab, max_length, pad)
        cases.append({
            "name": name, "text": text, "pair": pair, "opts": opts, "max_length": max_length, "pad": pad,
            "tokens": toks, "ids": ids, "token_type_ids": types, "attention_mask": mask,
            "decoded": decode(ids, VOCAB, True), "decoded_all": decode(ids, VOCAB, False),
        })
    with open(os.path.join(HERE, "wordpiece_goldens.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": cases}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    for c in cases:
        print("%-26s %s" % (c["name"], " ".join(c["tokens"])[:110]))


if __name__ == "__main__":
    main()

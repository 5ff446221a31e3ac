#!/usr/bin/python3
"""A tiny GPT-2-style byte-level BPE tokenizer and goldens for bpe_test.go.

The reference cuts text with GPT-2's pre-tokenisation pattern through
the regex module (Debian's python3-regex; Python's re has no \\p{L}),
maps each piece's UTF-8 bytes through GPT-2's byte-to-unicode table and
applies the merges lowest rank first, as GPT-2's encoder does; tokens of
the form <|...|> in the text are special. The vocabulary is every byte
(ids 0-255, in byte order), then the result of each merge, then
<|endoftext|>; the merges are learnt here from a short text (the most
frequent adjacent pair each time, ties to the smallest pair).

decode_cases are ids with the text Hugging Face's decode gives for them
(the bytes decoded with errors="replace": one U+FFFD for each stray byte
or character cut short), valid UTF-8 or not.

Run from the repository root:
    /usr/bin/python3 gluon/model/text/testdata/make_bpe_goldens.py
It writes gluon/model/text/testdata/bpe_vocab.json, bpe_merges.txt and
bpe_goldens.json.
"""
import collections
import json
import os

import regex

HERE = os.path.dirname(os.path.abspath(__file__))
PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
SPECIAL = "<|endoftext|>"


def byte_table():
    """GPT-2's byte-to-unicode table as a list of 256 characters."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    table, n = [], 0
    for b in range(256):
        if b in keep:
            table.append(chr(b))
        else:
            table.append(chr(256 + n))
            n += 1
    return table


BYTES = byte_table()


def pieces(text):
    return PATTERN.findall(text)


def symbols(piece):
    return [BYTES[b] for b in piece.encode("utf-8")]


def learn_merges(corpus, n):
    words = collections.Counter(tuple(symbols(p)) for p in pieces(corpus))
    merges = []
    for _ in range(n):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        top = max(pairs.values())
        best = min(p for p, c in pairs.items() if c == top)
        merges.append(best)
        words = collections.Counter({tuple(merge(list(w), best)): c for w, c in words.items()})
    return merges


def merge(syms, pair):
    out, i = [], 0
    while i < len(syms):
        if i + 1 < len(syms) and (syms[i], syms[i + 1]) == pair:
            out.append(syms[i] + syms[i + 1])
            i += 2
        else:
            out.append(syms[i])
            i += 1
    return out


def bpe(piece, ranks):
    syms = symbols(piece)
    while len(syms) > 1:
        cands = [(ranks[p], p) for p in zip(syms, syms[1:]) if p in ranks]
        if not cands:
            break
        syms = merge(syms, min(cands)[1])
    return syms


def encode(text, vocab, ranks):
    ids, cuts = [], []
    parts = text.split(SPECIAL)
    for k, part in enumerate(parts):
        for p in pieces(part):
            cuts.append(p)
            ids.extend(vocab[s] for s in bpe(p, ranks))
        if k + 1 < len(parts):
            cuts.append(SPECIAL)
            ids.append(vocab[SPECIAL])
    return ids, cuts


CORPUS = """The quick brown fox jumps over the lazy dog. The dog didn't mind;
the fox's friends weren't there, and they'll say they've seen it all.
I'm sure the 2024 results, 1,234 of them, are in the other other file!!
   Indented lines, tabs\tand newlines\n\nmatter to the tokenizer too."""

CASES = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "I'm here, you're there; they'll come, we've gone, he'd go, it's done, don't.",
    "I'M LOUD and 'QUOTED' 'sss 'tis",
    "a  b   c    d",
    "trailing spaces   ",
    "   leading spaces",
    "x\n\ny\r\nz\t\tw \t v",
    "tabs\tbefore\t\twords",
    "numbers 12345 and 3.14159, 1,000,000; ½ ² Ⅻ ٣٤",
    "mixed42abc 42abc abc42",
    "punctuation!!! ?!? ... --- (a) [b] {c} <d> \"e\" 'f'",
    "héllo wörld, naïve café, e\u0301 combining",
    "日本語のテキスト 中文 한국어",
    "emoji 😀 👍🏽 ❤️ flags 🇫🇷",
    "nbsp\u00a0here, ideographic\u3000space, line\u2028sep, thin\u2009space",
    "controls \x1c\x1d\x1e\x1f and \x0b\x0c bell\x07",
    "end of text<|endoftext|>and the next<|endoftext|><|endoftext|> twice",
    "<|endoftext|>",
    "",
    " ",
    "\n",
    "Ġ and Ċ are just letters here",
    "The other other dog didn't jump over the fox.",
]

# Byte strings to decode, valid UTF-8 or not: stray bytes, characters cut
# short (the longest start of one is a single U+FFFD), surrogates,
# overlong forms, code points past U+10FFFF, a U+FFFD in the text.
DECODE_BYTES = [
    b"caf\xc3\xa9", b"\xe2", b"\xe2 the", b"the \xe2\x82", b"\xe2\x82\xe2\x82\xac", b"\xff\xfe", b"\x80abc",
    b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x9f\x98", b"\xf0\x9f\x98\x80", b"\xf0\x9f\x98 ok", b"\xf4\x90\x80\x80",
    b"\xf4\x8f\xbf\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\xa0\x80", b"\xf0\x80\x80\x80",
    b"\xf5\x80\x80\x80", b"\xef\xbf\xbd", b"\xc3\xc3\xa9", b"\xe6\x97\xa5\xe6\x97",
]


def decode_cases(vocab, ranks):
    """Ids and the text transformers' GPT2Tokenizer.decode gives for them:
    the tokens' bytes through the inverse byte table, then
    bytearray.decode("utf-8", errors="replace")."""
    import random
    rng = random.Random(11)
    pool = [b"a", b" the", b"\xc3", b"\xa9", b"\xe2", b"\x82", b"\xac", b"\xf0", b"\x9f", b"\x98", b"\x80", b"\xff",
            b"\xed", b"\xa0", b"\xbf", b"\xc0", b"\xf4", b"\x90", b"\xe0"]
    chunked = [[raw] for raw in DECODE_BYTES]
    chunked += [[rng.choice(pool) for _ in range(rng.randint(1, 12))] for _ in range(60)]
    inverse = {i: s for s, i in vocab.items()}
    unbyte = {c: b for b, c in enumerate(BYTES)}

    def case(ids):
        raw = bytes(unbyte[c] for i in ids for c in inverse[i])
        return {"ids": ids, "text": raw.decode("utf-8", errors="replace")}

    cases = []
    for chunks in chunked:
        ids = []
        for chunk in chunks:  # a chunk the vocabulary has is one token, else its bytes (ids 0-255)
            sym = "".join(BYTES[b] for b in chunk)
            ids.extend([vocab[sym]] if sym in vocab else list(chunk))
        cases.append(case(ids))
    ids, _ = encode("The dog didn't mind", vocab, ranks)
    cases.append(case(ids + [0xE2]))  # a stray byte token after a valid text
    return cases


def main():
    merges = learn_merges(CORPUS, 80)
    vocab = {s: i for i, s in enumerate(BYTES)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    vocab[SPECIAL] = len(vocab)
    ranks = {m: r for r, m in enumerate(merges)}
    with open(os.path.join(HERE, "bpe_vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(HERE, "bpe_merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write("%s %s\n" % (a, b))
    cases = []
    for text in CASES:
        ids, cuts = encode(text, vocab, ranks)
        cases.append({"text": text, "pieces": cuts, "ids": ids})
    with open(os.path.join(HERE, "bpe_goldens.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": cases, "decode_cases": decode_cases(vocab, ranks)}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("%d merges, %d tokens, %d cases" % (len(merges), len(vocab), len(cases)))


if __name__ == "__main__":
    main()

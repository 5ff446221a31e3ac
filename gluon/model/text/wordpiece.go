package text

import (
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Accents says whether BertTokenizer strips accents (Hugging Face's
// strip_accents).
type Accents int

const (
	// AccentsDefault strips accents when the tokenizer lowercases (uncased
	// models) and keeps them otherwise (strip_accents None).
	AccentsDefault Accents = iota
	// AccentsStrip strips them always (strip_accents True).
	AccentsStrip
	// AccentsKeep keeps them always (strip_accents False).
	AccentsKeep
)

// BertTokenizerOpts configure a BertTokenizer. The zero value is
// bert-base-uncased's tokenizer: lowercase, strip accents, split CJK
// characters.
type BertTokenizerOpts struct {
	// Cased keeps the text's case (bert-base-cased; do_lower_case False).
	Cased bool
	// Accents says whether accents are stripped.
	Accents Accents
	// NoCJKSplit keeps CJK ideographs together with their neighbours
	// instead of making each one a word (tokenize_chinese_chars False).
	NoCJKSplit bool
}

// The special tokens of BERT's vocabularies.
const (
	unkToken  = "[UNK]"
	clsToken  = "[CLS]"
	sepToken  = "[SEP]"
	padToken  = "[PAD]"
	maskToken = "[MASK]"
)

// maxWordChars is the length above which a word is [UNK] whole
// (max_input_chars_per_word).
const maxWordChars = 100

// BertTokenizer is BERT's WordPiece tokenizer (Hugging Face's
// BertTokenizer), reading a vocab.txt. Tokenize runs the basic
// tokenisation — drop control characters and U+FFFD, turn whitespace into
// spaces, make each CJK ideograph a word, normalise to NFC, split on
// whitespace, lowercase (one character at a time, as Hugging Face's
// tokenizers do: a capital sigma is σ even at the end of a word) and
// strip accents (NFD, combining marks dropped) as configured, split off
// each punctuation character — and then
// WordPiece on each word: the longest vocabulary entry from the start,
// then the longest "##"-prefixed entry from where it ended, and so on; a
// word that cannot be covered so, or that is over 100 characters long,
// becomes [UNK]. The special tokens [CLS], [SEP], [PAD], [MASK] and
// [UNK] written in the text stay whole.
//
// Encode and EncodePair add [CLS] and [SEP] and give the token types and
// the attention mask that Bert.Run takes; EncodeBatch pads a batch.
type BertTokenizer struct {
	vocab  map[string]int64
	tokens []string
	opts   BertTokenizerOpts
	unk    int64
	cls    int64
	sep    int64
	pad    int64
}

// NewBertTokenizer returns the tokenizer of a vocabulary whose token i has
// id i. It must hold [UNK], [CLS], [SEP] and [PAD]; where a token appears
// twice its last id counts.
func NewBertTokenizer(tokens []string, opts BertTokenizerOpts) (*BertTokenizer, error) {
	t := &BertTokenizer{vocab: make(map[string]int64, len(tokens)), tokens: tokens, opts: opts}
	for i, tok := range tokens {
		t.vocab[tok] = int64(i)
	}
	var missing []string
	for _, s := range []struct {
		tok string
		id  *int64
	}{{unkToken, &t.unk}, {clsToken, &t.cls}, {sepToken, &t.sep}, {padToken, &t.pad}} {
		id, ok := t.vocab[s.tok]
		if !ok {
			missing = append(missing, s.tok)
		}
		*s.id = id
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("text: BERT vocabulary of %d tokens lacks %s", len(tokens), strings.Join(missing, ", "))
	}
	return t, nil
}

// LoadBertTokenizer reads a vocab.txt (one token a line, the line number
// from 0 its id) and returns its tokenizer; see NewBertTokenizer.
func LoadBertTokenizer(vocabPath string, opts BertTokenizerOpts) (*BertTokenizer, error) {
	raw, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("text: %w", err)
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("text: %s: not UTF-8", vocabPath)
	}
	s := strings.ReplaceAll(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	t, err := NewBertTokenizer(lines, opts)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, vocabPath)
	}
	return t, nil
}

// VocabSize returns the number of ids.
func (t *BertTokenizer) VocabSize() int { return len(t.tokens) }

// ID returns the id of token and whether the vocabulary has it.
func (t *BertTokenizer) ID(token string) (int64, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// Token returns the token of id ("" for an id outside the vocabulary).
func (t *BertTokenizer) Token(id int64) string {
	if id < 0 || id >= int64(len(t.tokens)) {
		return ""
	}
	return t.tokens[id]
}

// special reports whether tok is one of the special tokens.
func special(tok string) bool {
	switch tok {
	case unkToken, clsToken, sepToken, padToken, maskToken:
		return true
	}
	return false
}

// Tokenize returns the WordPiece tokens of text.
func (t *BertTokenizer) Tokenize(text string) []string {
	var out []string
	for len(text) > 0 {
		// The next special token written in the text, if any.
		at, tok := -1, ""
		for _, s := range []string{unkToken, clsToken, sepToken, padToken, maskToken} {
			if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
				at, tok = i, s
			}
		}
		if at < 0 {
			at = len(text)
		}
		for _, w := range t.basic(text[:at]) {
			out = t.wordPiece(out, w)
		}
		if tok == "" {
			break
		}
		out = append(out, tok)
		text = text[at+len(tok):]
	}
	return out
}

// basic is the basic tokenisation of text: its words and punctuation.
func (t *BertTokenizer) basic(text string) []string {
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case !t.opts.NoCJKSplit && isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	lower := !t.opts.Cased
	strip := t.opts.Accents == AccentsStrip || (lower && t.opts.Accents == AccentsDefault)
	var words []string
	for _, w := range strings.Fields(norm.NFC.String(b.String())) {
		if !special(w) {
			if lower {
				w = lowerChars(w)
			}
			if strip {
				w = stripAccents(w)
			}
		}
		words = splitPunct(words, w)
	}
	return words
}

// splitPunct appends w to words with each punctuation character a word of
// its own (a special token stays whole).
func splitPunct(words []string, w string) []string {
	if special(w) {
		return append(words, w)
	}
	start := 0
	for i, r := range w {
		if isPunct(r) {
			if i > start {
				words = append(words, w[start:i])
			}
			n := utf8.RuneLen(r)
			words = append(words, w[i:i+n])
			start = i + n
		}
	}
	if start < len(w) {
		words = append(words, w[start:])
	}
	return words
}

// wordPiece appends the WordPiece tokens of word to out.
func (t *BertTokenizer) wordPiece(out []string, word string) []string {
	if special(word) {
		return append(out, word)
	}
	runes := []rune(word)
	if len(runes) > maxWordChars {
		return append(out, unkToken)
	}
	n := len(out)
	for start := 0; start < len(runes); {
		end, piece := len(runes), ""
		for ; end > start; end-- {
			s := string(runes[start:end])
			if start > 0 {
				s = "##" + s
			}
			if _, ok := t.vocab[s]; ok {
				piece = s
				break
			}
		}
		if piece == "" {
			return append(out[:n], unkToken)
		}
		out = append(out, piece)
		start = end
	}
	return out
}

// isWhitespace is BERT's whitespace: space, tab, newline, carriage return
// and the space separators (Zs).
func isWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r)
}

// isControl is BERT's control character: any of category C (control,
// format, private use, surrogate, unassigned) but tab, newline and
// carriage return.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isPunct is BERT's punctuation: the ASCII symbols and punctuation
// (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~) and category P.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK reports whether r is in the CJK Unified Ideographs blocks and
// their extensions A to E, or the compatibility ideographs (the ranges
// BERT's tokenizer splits).
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// stripAccents decomposes s (NFD) and drops the nonspacing marks (Mn).
func stripAccents(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// lowerChars lowercases s one character at a time, as Hugging Face's
// BERT tokenizers do: the slow BertTokenizer lowercases the text
// character by character (PreTrainedTokenizer.tokenize's re.sub over
// "(.+?)", each match lowered alone) before its basic tokenisation, and
// the fast one with Rust's per-character to_lowercase. So a capital sigma
// is always σ, never the word-final ς of Python's str.lower on a whole
// word; İ (U+0130) becomes i and a combining dot above, as both do.
func lowerChars(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

package text

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// BPE is GPT-2's byte-level byte-pair-encoding tokenizer. Text is cut
// into pieces (words with their leading space, runs of digits or of
// punctuation, whitespace, English contractions: GPT-2's
// pre-tokenisation pattern, written out by hand since Go's regexp has no
// look-ahead), each piece's UTF-8 bytes become printable characters
// (GPT-2's byte-to-unicode table: "Ġ" for a space), and the merges are
// applied to each piece, lowest rank first, until none applies. Tokens of
// the vocabulary of the form <|...|> (GPT-2's <|endoftext|>, 50256) are
// special: where one occurs in the text it is its token, as Hugging
// Face's GPT2Tokenizer treats it.
//
// Decode inverts Encode exactly for any string, valid UTF-8 or not (it
// returns raw bytes); DecodeString replaces invalid UTF-8 as Hugging
// Face's decode does. A BPE is safe for concurrent use.
type BPE struct {
	vocab    map[string]int64
	tokens   map[int64]string
	ranks    map[[2]string]int
	specials []string // longest first

	mu    sync.Mutex
	cache map[string][]int64
}

// LoadBPE reads GPT-2's tokenizer files: vocabPath is the JSON object of
// token → id (Hugging Face's vocab.json, OpenAI's encoder.json) and
// mergesPath the merges, one pair a line, in rank order (merges.txt,
// OpenAI's vocab.bpe; a first line "#version: ..." is skipped).
func LoadBPE(vocabPath, mergesPath string) (*BPE, error) {
	raw, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("text: %w", err)
	}
	var vocab map[string]int64
	if err := json.Unmarshal(raw, &vocab); err != nil {
		return nil, fmt.Errorf("text: vocabulary %s: %w", vocabPath, err)
	}
	f, err := os.Open(mergesPath)
	if err != nil {
		return nil, fmt.Errorf("text: %w", err)
	}
	defer f.Close()
	var merges [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || n == 1 && strings.HasPrefix(line, "#version") {
			continue
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fmt.Errorf("text: merges %s:%d: %q is not two symbols separated by a space", mergesPath, n, line)
		}
		merges = append(merges, [2]string{a, b})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("text: merges %s: %w", mergesPath, err)
	}
	return NewBPE(vocab, merges)
}

// NewBPE returns the tokenizer of a vocabulary (token → id, tokens in
// GPT-2's byte-to-unicode form) and merges in rank order. Ids must be
// distinct and not negative; a merge's result need not be in the
// vocabulary (Encode fails on a text that needs it).
func NewBPE(vocab map[string]int64, merges [][2]string) (*BPE, error) {
	t := &BPE{vocab: map[string]int64{}, tokens: map[int64]string{}, ranks: map[[2]string]int{}, cache: map[string][]int64{}}
	for tok, id := range vocab {
		if id < 0 {
			return nil, fmt.Errorf("text: token %q has the negative id %d", tok, id)
		}
		if other, dup := t.tokens[id]; dup {
			return nil, fmt.Errorf("text: tokens %q and %q share the id %d", other, tok, id)
		}
		t.vocab[tok], t.tokens[id] = id, tok
		if len(tok) > 4 && strings.HasPrefix(tok, "<|") && strings.HasSuffix(tok, "|>") {
			t.specials = append(t.specials, tok)
		}
	}
	sort.Slice(t.specials, func(i, j int) bool {
		a, b := t.specials[i], t.specials[j]
		return len(a) > len(b) || len(a) == len(b) && a < b
	})
	for r, m := range merges {
		if _, dup := t.ranks[m]; !dup { // the first rank of a repeated pair counts
			t.ranks[m] = r
		}
	}
	return t, nil
}

// VocabSize returns the number of tokens.
func (t *BPE) VocabSize() int { return len(t.vocab) }

// ID returns the id of a token (in byte-to-unicode form: "Ġthe",
// "<|endoftext|>") and whether the vocabulary has it.
func (t *BPE) ID(token string) (int64, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// Encode returns the token ids of s. It fails when a piece merges into a
// symbol the vocabulary lacks (never with GPT-2's files, whose
// vocabulary holds every byte and every merge).
func (t *BPE) Encode(s string) ([]int64, error) {
	var ids []int64
	for s != "" {
		at, special := t.nextSpecial(s)
		for _, piece := range pretokenize(s[:at]) {
			p, err := t.encodePiece(piece)
			if err != nil {
				return nil, err
			}
			ids = append(ids, p...)
		}
		if special == "" {
			break
		}
		ids = append(ids, t.vocab[special])
		s = s[at+len(special):]
	}
	return ids, nil
}

// nextSpecial returns the position of the first special token in s and
// the token (the longest at that position), or len(s) and "".
func (t *BPE) nextSpecial(s string) (int, string) {
	at, tok := len(s), ""
	for _, sp := range t.specials {
		if i := strings.Index(s, sp); i >= 0 && i < at {
			at, tok = i, sp
		}
	}
	return at, tok
}

// encodePiece applies the merges to one piece of pre-tokenised text.
func (t *BPE) encodePiece(piece string) ([]int64, error) {
	t.mu.Lock()
	ids, ok := t.cache[piece]
	t.mu.Unlock()
	if ok {
		return ids, nil
	}
	syms := make([]string, len(piece))
	for i := range len(piece) {
		syms[i] = string(byteRune[piece[i]])
	}
	for len(syms) > 1 {
		best, bestRank := -1, 0
		for i := range len(syms) - 1 {
			if r, ok := t.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < bestRank) {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		a, b := syms[best], syms[best+1]
		merged := make([]string, 0, len(syms)-1)
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == a && syms[i+1] == b {
				merged = append(merged, a+b)
				i++
			} else {
				merged = append(merged, syms[i])
			}
		}
		syms = merged
	}
	ids = make([]int64, len(syms))
	for i, s := range syms {
		id, ok := t.vocab[s]
		if !ok {
			return nil, fmt.Errorf("text: encode %q: the vocabulary has no token %q", piece, s)
		}
		ids[i] = id
	}
	t.mu.Lock()
	t.cache[piece] = ids
	t.mu.Unlock()
	return ids, nil
}

// Decode returns the text of ids: the tokens' bytes one after the other,
// raw. A sequence cut inside a character, or a token that is a stray
// byte, gives those bytes: the result need not be valid UTF-8 (Decode of
// Encode(s) is s exactly). Hugging Face's tokenizer.decode replaces
// invalid bytes by U+FFFD instead: DecodeString does so. An id the
// vocabulary lacks is an error.
func (t *BPE) Decode(ids []int64) (string, error) {
	var b strings.Builder
	for i, id := range ids {
		tok, ok := t.tokens[id]
		if !ok {
			return "", fmt.Errorf("text: decode: no token has the id %d (at %d)", id, i)
		}
		for _, r := range tok {
			c, ok := runeByte[r]
			if !ok {
				return "", fmt.Errorf("text: decode: token %d (%q) holds %q, which stands for no byte", id, tok, r)
			}
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// DecodeString returns the text of ids as Hugging Face's decode does
// (GPT2Tokenizer's bytes.decode("utf-8", errors="replace"), the fast
// tokenizer's from_utf8_lossy): Decode's bytes with each invalid
// sequence — a stray byte, or the longest start of a character that
// does not complete — replaced by one U+FFFD, the rest unchanged. The
// result is valid UTF-8.
func (t *BPE) DecodeString(ids []int64) (string, error) {
	s, err := t.Decode(ids)
	if err != nil {
		return "", err
	}
	return replaceInvalidUTF8(s), nil
}

// replaceInvalidUTF8 replaces each maximal subpart of an ill-formed
// sequence in s by U+FFFD, Unicode's recommended practice that Python's
// "replace" and Rust's from_utf8_lossy follow: a byte that cannot start
// a character is one U+FFFD, and so is a lead byte with the continuation
// bytes that may follow it when the character is cut short.
func replaceInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 { // a character (U+FFFD written in the text has n 3)
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += invalidPrefix(s[i:])
	}
	return b.String()
}

// invalidPrefix returns the length of the maximal subpart at the start of
// s, which does not begin with a valid character: the lead byte and the
// continuation bytes that a character starting with it could have, at
// least 1.
func invalidPrefix(s string) int {
	var size int
	lo, hi := byte(0x80), byte(0xBF) // the second byte's range
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		size = 2
	case c == 0xE0:
		size, lo = 3, 0xA0
	case c == 0xED:
		size, hi = 3, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		size = 3
	case c == 0xF0:
		size, lo = 4, 0x90
	case c == 0xF4:
		size, hi = 4, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		size = 4
	default:
		return 1
	}
	n := 1
	for n < size && n < len(s) && s[n] >= lo && s[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}

// byteRune is GPT-2's byte-to-unicode table: the printable bytes of
// Latin-1 ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves, the other
// 68 bytes, in increasing order, for U+0100 onwards (a space is 'Ġ',
// U+0120). runeByte is its inverse.
var byteRune, runeByte = func() ([256]rune, map[rune]byte) {
	var enc [256]rune
	dec := map[rune]byte{}
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE {
			enc[b] = rune(b)
		} else {
			enc[b] = rune(256 + n)
			n++
		}
		dec[enc[b]] = byte(b)
	}
	return enc, dec
}()

// The character classes of GPT-2's pre-tokenisation pattern.
const (
	classSpace  = iota // \s
	classLetter        // \p{L}
	classNumber        // \p{N}
	classOther         // anything else (an invalid UTF-8 byte too)
)

func classOf(r rune) int {
	switch {
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	}
	return classOther
}

// contractions are the pattern's first alternatives, in its order.
var contractions = []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}

// pretokenize cuts s as GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// does, matching leftmost-first at each position; the pieces join to s.
func pretokenize(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		n := pieceAt(s, i)
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// pieceAt returns the length of the piece that starts at s[i:].
func pieceAt(s string, i int) int {
	for _, c := range contractions {
		if strings.HasPrefix(s[i:], c) {
			return len(c)
		}
	}
	// An optional space, then a run of letters, digits or other
	// characters.
	j := i
	if s[j] == ' ' {
		j++
	}
	if j < len(s) {
		r, w := utf8.DecodeRuneInString(s[j:])
		if cls := classOf(r); cls != classSpace {
			k := j + w
			for k < len(s) {
				r, w := utf8.DecodeRuneInString(s[k:])
				if classOf(r) != cls {
					break
				}
				k += w
			}
			return k - i
		}
	}
	// Whitespace (s[i] is: anything else matched above). The run, but
	// for its last character when a non-space follows and the run has
	// more than one (\s+(?!\S)); else the run (\s+).
	k, last := i, i
	for k < len(s) {
		r, w := utf8.DecodeRuneInString(s[k:])
		if classOf(r) != classSpace {
			break
		}
		last = k
		k += w
	}
	if k < len(s) && last > i {
		return last - i
	}
	return k - i
}

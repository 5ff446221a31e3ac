package text_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/goldentest"
)

var wordpieceVocab = filepath.Join("testdata", "wordpiece_vocab.txt")

// wordpieceCase is one case of testdata/wordpiece_goldens.json.
type wordpieceCase struct {
	Name string  `json:"name"`
	Text string  `json:"text"`
	Pair *string `json:"pair"`
	Opts struct {
		Cased   bool   `json:"cased"`
		Accents string `json:"accents"`
		CJK     bool   `json:"cjk"`
	} `json:"opts"`
	MaxLength     int      `json:"max_length"`
	Pad           bool     `json:"pad"`
	Tokens        []string `json:"tokens"`
	IDs           []int64  `json:"ids"`
	TokenTypeIDs  []int64  `json:"token_type_ids"`
	AttentionMask []int64  `json:"attention_mask"`
	Decoded       string   `json:"decoded"`
	DecodedAll    string   `json:"decoded_all"`
}

func (c wordpieceCase) tokenizer(t *testing.T) *text.BertTokenizer {
	t.Helper()
	o := text.BertTokenizerOpts{Cased: c.Opts.Cased, NoCJKSplit: !c.Opts.CJK}
	switch c.Opts.Accents {
	case "strip":
		o.Accents = text.AccentsStrip
	case "keep":
		o.Accents = text.AccentsKeep
	}
	tok, err := text.LoadBertTokenizer(wordpieceVocab, o)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestWordPieceGoldens: tokens, ids, token types, masks and decoded text
// equal those of testdata/make_wordpiece_goldens.py's reference (BERT's
// tokenizer written from its documented algorithm in Python, whose
// str.lower and unicodedata BertTokenizer uses), over accents, CJK,
// punctuation, control characters, odd whitespace, Greek final sigma,
// cased and uncased modes, long and unknown words, special tokens in the
// text, pairs, truncation and padding.
func TestWordPieceGoldens(t *testing.T) {
	for _, c := range goldentest.Cases[wordpieceCase](t, filepath.Join("testdata", "wordpiece_goldens.json")) {
		t.Run(c.Name, func(t *testing.T) {
			tok := c.tokenizer(t)
			if got := tok.Tokenize(c.Text); !slices.Equal(got, c.Tokens) && len(got)+len(c.Tokens) > 0 {
				t.Errorf("Tokenize(%q)\n = %q\nwant %q", c.Text, got, c.Tokens)
			}
			o := text.BertEncodeOpts{MaxLength: c.MaxLength, PadToMax: c.Pad}
			var e text.BertEncoding
			var err error
			if c.Pair == nil {
				e, err = tok.Encode(c.Text, o)
			} else {
				e, err = tok.EncodePair(c.Text, *c.Pair, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(e.IDs, c.IDs) || !slices.Equal(e.TokenTypeIDs, c.TokenTypeIDs) || !slices.Equal(e.AttentionMask, c.AttentionMask) {
				t.Errorf("encoding %+v\nwant ids %v, types %v, mask %v", e, c.IDs, c.TokenTypeIDs, c.AttentionMask)
			}
			if got := tok.Decode(e.IDs, true); got != c.Decoded {
				t.Errorf("Decode(skip special) = %q, want %q", got, c.Decoded)
			}
			if got := tok.Decode(e.IDs, false); got != c.DecodedAll {
				t.Errorf("Decode = %q, want %q", got, c.DecodedAll)
			}
		})
	}
}

// TestWordPieceBatch: EncodeBatch pads to the longest encoding (or to
// MaxLength with PadToMax), and Arrays gives the [B, T] inputs of
// Bert.Run.
func TestWordPieceBatch(t *testing.T) {
	tok, err := text.LoadBertTokenizer(wordpieceVocab, text.BertTokenizerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"hello world", "the quick brown fox jumped", "fox"}
	b, err := tok.EncodeBatch(texts, nil, text.BertEncodeOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		e, _ := tok.Encode(s, text.BertEncodeOpts{})
		n := len(e.IDs)
		if len(b.IDs[i]) != 8 || !slices.Equal(b.IDs[i][:n], e.IDs) || slices.ContainsFunc(b.AttentionMask[i][n:], func(v int64) bool { return v != 0 }) ||
			slices.Contains(b.AttentionMask[i][:n], 0) {
			t.Errorf("row %d: ids %v, mask %v; alone %v", i, b.IDs[i], b.AttentionMask[i], e.IDs)
		}
	}
	ids, types, mask := b.Arrays(ctx.CPU(0))
	if !slices.Equal(ids.Shape(), []int{3, 8}) || !slices.Equal(types.Shape(), []int{3, 8}) || mask.Int64s()[8+7] != 1 || mask.Int64s()[16+3] != 0 {
		t.Errorf("arrays %v %v, mask %v", ids.Shape(), types.Shape(), mask.Int64s())
	}
	pairs, err := tok.EncodeBatch([]string{"hello", "the fox"}, []string{"world", "jumped"}, text.BertEncodeOpts{MaxLength: 10, PadToMax: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs.IDs[0]) != 10 || !slices.Equal(pairs.TokenTypeIDs[1], []int64{0, 0, 0, 0, 1, 1, 1, 0, 0, 0}) {
		t.Errorf("pairs %+v", pairs)
	}
	for _, bad := range []struct {
		texts, pairs []string
		o            text.BertEncodeOpts
	}{
		{nil, nil, text.BertEncodeOpts{}},
		{[]string{"a"}, []string{"b", "c"}, text.BertEncodeOpts{}},
		{[]string{"a"}, nil, text.BertEncodeOpts{MaxLength: 1}},
		{[]string{"a"}, []string{"b"}, text.BertEncodeOpts{MaxLength: 2}},
		{[]string{"a"}, nil, text.BertEncodeOpts{PadToMax: true}},
	} {
		if _, err := tok.EncodeBatch(bad.texts, bad.pairs, bad.o); err == nil || !strings.HasPrefix(err.Error(), "text: ") {
			t.Errorf("EncodeBatch(%q, %q, %+v): %v, want a text error", bad.texts, bad.pairs, bad.o, err)
		}
	}
}

// TestWordPieceVocab: vocab.txt lines are the ids (CRLF endings too); the
// special tokens are required; ID and Token map both ways.
func TestWordPieceVocab(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tok, err := text.LoadBertTokenizer(write("crlf.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhi\r\n##s\r\n"), text.BertTokenizerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 6 {
		t.Errorf("VocabSize %d, want 6", tok.VocabSize())
	}
	if id, ok := tok.ID("##s"); !ok || id != 5 || tok.Token(4) != "hi" || tok.Token(6) != "" || tok.Token(-1) != "" {
		t.Errorf("ID(##s) = %d, %v; Token(4) = %q", id, ok, tok.Token(4))
	}
	if e, _ := tok.Encode("His hi", text.BertEncodeOpts{}); !slices.Equal(e.IDs, []int64{2, 4, 5, 4, 3}) {
		t.Errorf("ids %v", e.IDs)
	}
	for name, s := range map[string]string{"no unk": "[PAD]\n[CLS]\n[SEP]\n", "not utf8": "[PAD]\n\xff\n"} {
		if _, err := text.LoadBertTokenizer(write("bad.txt", s), text.BertTokenizerOpts{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := text.LoadBertTokenizer(filepath.Join(dir, "none.txt"), text.BertTokenizerOpts{}); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestWordPieceCapitalSigma: uncased, a capital sigma lowercases to σ
// wherever it stands, the end of a word too, as Hugging Face's slow and
// fast BERT tokenizers lowercase one character at a time (not to the ς of
// Python's str.lower on a whole word); a ς written in the text stays.
func TestWordPieceCapitalSigma(t *testing.T) {
	tok, err := text.NewBertTokenizer([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "'",
		"σοφοσ", "σοφος", "λογοσ", "ο", "##σ", "##ς", "a", "##σο"}, text.BertTokenizerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string][]string{
		"ΣΟΦΟΣ ΛΟΓΟΣ.": {"σοφοσ", "λογοσ", "."},
		"ΟΣ' AΣ":       {"ο", "##σ", "'", "a", "##σ"},
		"AΣΟ":          {"a", "##σο"},
		"σοφος σοφοσ":  {"σοφος", "σοφοσ"},
		"Οσ Ος":        {"ο", "##σ", "ο", "##ς"},
	} {
		if got := tok.Tokenize(in); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

package text

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/internal/goldentest"
)

// bpeCase is one case of testdata/bpe_goldens.json.
type bpeCase struct {
	Text   string   `json:"text"`
	Pieces []string `json:"pieces"`
	IDs    []int64  `json:"ids"`
}

// TestPretokenizeGoldens: the hand-written splitter cuts every golden
// text as GPT-2's pattern does in Python's regex module (special tokens
// are cut out first, as Encode does).
func TestPretokenizeGoldens(t *testing.T) {
	for _, c := range goldentest.Cases[bpeCase](t, filepath.Join("testdata", "bpe_goldens.json")) {
		var got []string
		parts := strings.Split(c.Text, "<|endoftext|>")
		for i, p := range parts {
			got = append(got, pretokenize(p)...)
			if i+1 < len(parts) {
				got = append(got, "<|endoftext|>")
			}
		}
		if !slices.Equal(got, c.Pieces) && !(len(got) == 0 && len(c.Pieces) == 0) {
			t.Errorf("%q: pieces %q, GPT-2's pattern %q", c.Text, got, c.Pieces)
		}
	}
}

// TestByteTable: the byte-to-unicode table is a bijection with GPT-2's
// landmarks: a space is Ġ, a newline Ċ, printable ASCII itself.
func TestByteTable(t *testing.T) {
	if len(runeByte) != 256 {
		t.Fatalf("%d distinct characters for 256 bytes", len(runeByte))
	}
	for b, want := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', 'a': 'a', '!': '!', 0: 'Ā', 0xAD: 'Ń', 0xFF: 'ÿ'} {
		if byteRune[b] != want {
			t.Errorf("byte %#x stands for %q, want %q", b, byteRune[b], want)
		}
	}
}

package text_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/goldentest"
)

// bpeCase is one case of testdata/bpe_goldens.json.
type bpeCase struct {
	Text string  `json:"text"`
	IDs  []int64 `json:"ids"`
}

func tinyBPE(t testing.TB) *text.BPE {
	t.Helper()
	tok, err := text.LoadBPE(filepath.Join("testdata", "bpe_vocab.json"), filepath.Join("testdata", "bpe_merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestBPEGoldens: Encode gives the reference encoder's ids for every
// golden text (a handmade vocabulary of 337 tokens with 80 merges, see
// testdata/make_bpe_goldens.py) and Decode gives the text back.
func TestBPEGoldens(t *testing.T) {
	tok := tinyBPE(t)
	if tok.VocabSize() != 337 {
		t.Errorf("%d tokens, want 337", tok.VocabSize())
	}
	for _, c := range goldentest.Cases[bpeCase](t, filepath.Join("testdata", "bpe_goldens.json")) {
		ids, err := tok.Encode(c.Text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids, c.IDs) && len(ids)+len(c.IDs) > 0 {
			t.Errorf("%q: ids %v, the reference %v", c.Text, ids, c.IDs)
		}
		back, err := tok.Decode(ids)
		if err != nil || back != c.Text {
			t.Errorf("%q decodes to %q (%v)", c.Text, back, err)
		}
	}
}

// TestBPERoundTrip: any byte string, valid UTF-8 or not, decodes back
// from its encoding, whatever goroutine encodes it.
func TestBPERoundTrip(t *testing.T) {
	tok := tinyBPE(t)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "e", "the", " ", "  ", "\n", "'s", "'", "1", "é", "日", "😀", "\xff", "\xe6\x97", "!", "<|endoftext|>", "<|end"}
	done := make(chan string, 8)
	for g := range 8 {
		go func(seed uint64) {
			rng := rand.New(rand.NewPCG(seed, 3))
			for range 200 {
				var b strings.Builder
				for range rng.IntN(30) {
					if rng.IntN(4) == 0 {
						b.WriteByte(byte(rng.IntN(256)))
					} else {
						b.WriteString(alphabet[rng.IntN(len(alphabet))])
					}
				}
				s := b.String()
				ids, err := tok.Encode(s)
				if err != nil {
					done <- err.Error()
					return
				}
				if back, err := tok.Decode(ids); err != nil || back != s {
					done <- "round trip of " + s + " gave " + back
					return
				}
			}
			done <- ""
		}(uint64(g) + rng.Uint64()%1000)
	}
	for range 8 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// TestBPEErrors: broken files, duplicate ids, symbols the vocabulary
// lacks and unknown ids are errors.
func TestBPEErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	vocab := write("vocab.json", `{"a": 0, "b": 1, "ab": 2}`)
	merges := write("merges.txt", "#version: 0.2\na b\n")
	for _, tc := range []struct {
		name          string
		vocab, merges string
		want          string
	}{
		{"no vocabulary", filepath.Join(dir, "none.json"), merges, "none.json"},
		{"broken vocabulary", write("broken.json", `{"a": `), merges, "broken.json"},
		{"duplicate ids", write("dup.json", `{"a": 0, "b": 0}`), merges, "share the id 0"},
		{"negative id", write("neg.json", `{"a": -1}`), merges, "negative id"},
		{"no merges", vocab, filepath.Join(dir, "none.txt"), "none.txt"},
		{"bad merge", vocab, write("bad.txt", "a b\nabc\n"), "bad.txt:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := text.LoadBPE(tc.vocab, tc.merges); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error about %q", err, tc.want)
			}
		})
	}
	tok, err := text.LoadBPE(vocab, merges)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := tok.Encode("abab"); err != nil || !slices.Equal(ids, []int64{2, 2}) {
		t.Errorf("abab: %v, %v; want [2 2]", ids, err)
	}
	if _, err := tok.Encode("abc"); err == nil || !strings.Contains(err.Error(), `no token "c"`) {
		t.Errorf("a symbol outside the vocabulary: %v", err)
	}
	if _, err := tok.Decode([]int64{0, 7}); err == nil || !strings.Contains(err.Error(), "id 7") {
		t.Errorf("an unknown id: %v", err)
	}
	if id, ok := tok.ID("ab"); !ok || id != 2 {
		t.Errorf("ID(ab) = %d, %v", id, ok)
	}
}

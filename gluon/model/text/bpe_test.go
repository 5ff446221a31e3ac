package text_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestBPEDecodeString: DecodeString gives the text Hugging Face's decode
// gives (bytes.decode("utf-8", errors="replace"): one U+FFFD for each
// stray byte or character cut short; testdata/make_bpe_goldens.py's
// decode_cases), while Decode keeps the raw bytes.
func TestBPEDecodeString(t *testing.T) {
	tok := tinyBPE(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "bpe_goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		DecodeCases []bpeCase `json:"decode_cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.DecodeCases) < 80 {
		t.Fatalf("%d decode cases", len(f.DecodeCases))
	}
	invalid := 0
	for _, c := range f.DecodeCases {
		got, err := tok.DecodeString(c.IDs)
		if err != nil || got != c.Text {
			t.Errorf("%v: %q (%v), Hugging Face %q", c.IDs, got, err, c.Text)
		}
		bytes, err := tok.Decode(c.IDs)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(bytes) {
			invalid++
		} else if bytes != got {
			t.Errorf("%v: valid %q replaced to %q", c.IDs, bytes, got)
		}
	}
	if invalid < 40 {
		t.Errorf("only %d cases hold invalid UTF-8", invalid)
	}
	if _, err := tok.DecodeString([]int64{1, 9999}); err == nil {
		t.Error("DecodeString took an unknown id")
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

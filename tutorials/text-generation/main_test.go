package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// modelDir writes a small randomly initialised GPT-2 in the hub's layout
// (weights as weightsFile) with the text package's test tokenizer, and
// returns the folder and the model.
func modelDir(t *testing.T, weightsFile string) (string, *text.GPT2) {
	t.Helper()
	dir := t.TempDir()
	tok := filepath.Join("..", "..", "gluon", "model", "text", "testdata")
	for _, f := range []string{"vocab.json", "merges.txt"} {
		b, err := os.ReadFile(filepath.Join(tok, "bpe_"+f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bpe, err := text.LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := text.GPT2Config{VocabSize: bpe.VocabSize(), NPositions: 64, NEmbd: 32, NLayer: 2, NHead: 4}
	raw, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	m := text.NewGPT2(cfg)
	if err := gluon.CollectParams(m).Initialize(initializer.Normal{Sigma: 0.5}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	if err := text.Save(m, filepath.Join(dir, weightsFile)); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// TestGenerates: the program streams the same greedy continuation that
// Generate and Decode give, from either weights file, and says how fast.
func TestGenerates(t *testing.T) {
	for _, weights := range []string{"model.safetensors", "pytorch_model.bin"} {
		t.Run(weights, func(t *testing.T) {
			dir, m := modelDir(t, weights)
			bpe, _ := text.LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"))
			const prompt = "the cat sat"
			ids, _ := bpe.Encode(prompt)
			want, err := m.Generate(ids, 12, text.GenerateOpts{Greedy: true})
			if err != nil {
				t.Fatal(err)
			}
			var wantText string
			var out bytes.Buffer
			if err := run([]string{"-model", dir, "-prompt", prompt, "-n", "12", "-greedy"}, &out); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if wantText, _ = bpe.DecodeString(want); !strings.HasPrefix(got, prompt+wantText+"\n\n") {
				t.Errorf("output %q, want the prompt and %q first", got, wantText)
			}
			if !strings.Contains(got, "12 new in") {
				t.Errorf("no speed line in %q", got)
			}
		})
	}
}

// TestSampledIsSeeded: the same seed gives the same text.
func TestSampledIsSeeded(t *testing.T) {
	dir, _ := modelDir(t, "model.safetensors")
	texts := make([]string, 2)
	for i := range texts {
		var out bytes.Buffer
		if err := run([]string{"-model", dir, "-n", "10", "-seed", "7", "-temperature", "0.8", "-top-p", "0.9"}, &out); err != nil {
			t.Fatal(err)
		}
		texts[i], _, _ = strings.Cut(out.String(), "\n\n")
	}
	if texts[0] != texts[1] {
		t.Errorf("one seed, two texts: %q and %q", texts[0], texts[1])
	}
}

func TestErrors(t *testing.T) {
	dir, _ := modelDir(t, "model.safetensors")
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no -model folder"},
		{[]string{"-model", t.TempDir()}, "config.json"},
		{[]string{"-model", dir, "-prompt", ""}, "prompt is empty"},
		{[]string{"-model", dir, "-n", "-1"}, "generate"},
	}
	for _, c := range cases {
		err := run(c.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// scriptDir writes a GPT-2 whose greedy continuation of the prompt "hi"
// is the given tokens (in the byte-level vocabulary's spelling: "Ġthe",
// "â" for the byte 0xE2), with the text package's test tokenizer, and
// returns the folder. The blocks add nothing (zero weights); wte's rows
// are zero-mean and of unit norm, and wpe at each position is a large
// multiple of the row of the token wanted next, which ln_f and the tied
// head then pick.
func scriptDir(t *testing.T, tokens ...string) string {
	t.Helper()
	dir, _ := modelDir(t, "model.safetensors")
	bpe, err := text.LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := bpe.Encode("hi")
	v, e := bpe.VocabSize(), 64
	cfg := text.GPT2Config{VocabSize: v, NPositions: 64, NEmbd: e, NLayer: 1, NHead: 4}
	raw, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	m := text.NewGPT2(cfg)
	params := gluon.CollectParams(m)
	if err := params.Initialize(initializer.Zero(), []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	wte := make([]float32, v*e)
	for i := range v {
		row, mean, norm := wte[i*e:(i+1)*e], 0.0, 0.0
		for j := range row {
			row[j] = float32(math.Cos(float64(i*97+j*13) * 0.61))
			mean += float64(row[j]) / float64(e)
		}
		for j := range row {
			row[j] -= float32(mean)
			norm += float64(row[j]) * float64(row[j])
		}
		for j := range row {
			row[j] /= float32(math.Sqrt(norm))
		}
	}
	wpe := make([]float32, 64*e)
	for k, s := range tokens {
		id, ok := bpe.ID(s)
		if !ok {
			t.Fatalf("no token %q", s)
		}
		p := len(ids) - 1 + k // the position whose logits choose token k
		for j := range e {
			wpe[p*e+j] = 1000 * wte[int(id)*e+j]
		}
	}
	ones := make([]float32, e)
	for i := range ones {
		ones[i] = 1
	}
	for name, data := range map[string][]float32{"transformer.wte.weight": wte, "transformer.wpe.weight": wpe, "transformer.ln_f.weight": ones} {
		params.Get(name).SetData(nd.FromSlice(ctx.CPU(0), data, params.Get(name).Shape()...))
	}
	if err := text.Save(m, filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeLog keeps each Write as a string.
type writeLog struct{ writes []string }

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// TestStreaming: the text streams token by token as Hugging Face's decode
// writes it: a byte that cannot form a character is U+FFFD as soon as
// that is known and the text after it keeps streaming, a character split
// over two tokens appears once whole, one cut off by the end is U+FFFD.
func TestStreaming(t *testing.T) {
	const the, stray, c3, a9 = "Ġthe", "â", "Ã", "©" // " the", 0xE2, 0xC3 0xA9 (é)
	for _, tc := range []struct {
		name   string
		tokens []string
		writes []string // after the prompt, before the speed line
	}{
		{"stray byte", []string{the, stray, the, the, the, the, the, the},
			[]string{" the", "\uFFFD the", " the", " the", " the", " the", " the"}},
		{"split character", []string{the, c3, a9, the, c3, c3, a9, the},
			[]string{" the", "é", " the", "\uFFFD", "é", " the"}},
		{"cut off", []string{the, c3}, []string{" the", "\uFFFD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := scriptDir(t, tc.tokens...)
			var w writeLog
			if err := run([]string{"-model", dir, "-prompt", "hi", "-n", strconv.Itoa(len(tc.tokens)), "-greedy"}, &w); err != nil {
				t.Fatal(err)
			}
			if len(w.writes) < 2 || w.writes[0] != "hi" || !strings.HasPrefix(w.writes[len(w.writes)-1], "\n\n") {
				t.Fatalf("writes %q", w.writes)
			}
			if got := w.writes[1 : len(w.writes)-1]; !slices.Equal(got, tc.writes) {
				t.Errorf("writes %q, want %q", got, tc.writes)
			}
		})
	}
}

// TestTemperatureZero: -temperature 0 is greedy decoding.
func TestTemperatureZero(t *testing.T) {
	dir, _ := modelDir(t, "model.safetensors")
	texts := make([]string, 2)
	for i, args := range [][]string{{"-greedy"}, {"-temperature", "0", "-seed", "5"}} {
		var out bytes.Buffer
		if err := run(append([]string{"-model", dir, "-n", "10"}, args...), &out); err != nil {
			t.Fatal(err)
		}
		texts[i], _, _ = strings.Cut(out.String(), "\n\n")
	}
	if texts[0] != texts[1] {
		t.Errorf("-greedy gave %q, -temperature 0 %q", texts[0], texts[1])
	}
}

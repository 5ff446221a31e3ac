package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/text"
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
			wantText, _ := bpe.Decode(want)
			var out bytes.Buffer
			if err := run([]string{"-model", dir, "-prompt", prompt, "-n", "12", "-greedy"}, &out); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if !strings.HasPrefix(got, prompt+strings.ToValidUTF8(wantText, "\uFFFD")+"\n\n") {
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

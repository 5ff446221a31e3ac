package text_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// readFixture returns the fixture's tensors.
func readFixture(t testing.TB) *safetensors.File {
	t.Helper()
	f, err := safetensors.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// rewrite writes the fixture's tensors, changed by edit, to a new file
// and returns its path.
func rewrite(t testing.TB, edit func(map[string]safetensors.Tensor)) string {
	t.Helper()
	f := readFixture(t)
	edit(f.Tensors)
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := safetensors.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// logitsOf runs m on a fixed batch in predict mode.
func logitsOf(m *text.GPT2) []float32 {
	ids := nd.FromSlice(ctx.CPU(0), []int64{1, 50, 3, 96, 7, 0, 12, 44}, 2, 4)
	var y []float32
	autograd.PredictMode(func() { y = m.Forward(ids).Float32s() })
	return y
}

// TestLoadLayouts: the state dict loads in the layouts Hugging Face's
// files have — GPT2LMHeadModel.state_dict() with the head and the mask
// buffers (the fixture), save_pretrained's (no head, no buffers), the
// hub's gpt2 checkpoint (GPT2Model's keys without "transformer.", with
// the buffers) — and the models compute the same logits.
func TestLoadLayouts(t *testing.T) {
	want := logitsOf(loadTiny(t, tinyConfig()))
	dropExtras := func(ts map[string]safetensors.Tensor) {
		for k := range ts {
			if k == "lm_head.weight" || strings.HasSuffix(k, ".attn.bias") || strings.HasSuffix(k, ".attn.masked_bias") {
				delete(ts, k)
			}
		}
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]safetensors.Tensor)
	}{
		{"state_dict", func(map[string]safetensors.Tensor) {}},
		{"save_pretrained", dropExtras},
		{"hub gpt2", func(ts map[string]safetensors.Tensor) {
			delete(ts, "lm_head.weight")
			for k, v := range ts {
				delete(ts, k)
				ts[strings.TrimPrefix(k, "transformer.")] = v
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadTiny(t, tinyConfig(), ctx.CPU(0))
			if err := text.Load(m, rewrite(t, tc.edit)); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(logitsOf(m), want) {
				t.Error("the model computes other logits")
			}
		})
	}
}

// TestLoadErrors: a state dict that does not fit is a *LoadError listing
// every missing key, unexpected key and wrong shape at once (or an
// untied head), and leaves the model as it was.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		edit                          func(map[string]safetensors.Tensor)
		missing, unexpected, badShape []string
		untied                        bool
	}{
		{
			name: "all kinds",
			edit: func(ts map[string]safetensors.Tensor) {
				delete(ts, "transformer.h.1.mlp.c_fc.bias")
				delete(ts, "transformer.ln_f.weight")
				ts["transformer.h.2.ln_1.weight"] = ts["transformer.h.1.ln_1.weight"]
				ts["score.weight"] = ts["transformer.ln_f.bias"]
				w := ts["transformer.h.0.attn.c_attn.weight"] // [48, 144] as a Linear's [144, 48]
				ts["transformer.h.0.attn.c_attn.weight"] = safetensors.Tensor{DType: w.DType, Shape: []int{144, 48}, Data: w.Data}
				ts["transformer.wpe.weight"] = safetensors.FromFloat32([]int{16, 48}, make([]float32, 16*48))
			},
			missing:    []string{"transformer.ln_f.weight", "transformer.h.1.mlp.c_fc.bias"},
			unexpected: []string{"score.weight", "transformer.h.2.ln_1.weight"},
			badShape:   []string{"transformer.wpe.weight: the file holds [16 48]", "transformer.h.0.attn.c_attn.weight: the file holds [144 48], the model wants [48 144]"},
		},
		{
			name: "untied head",
			edit: func(ts map[string]safetensors.Tensor) {
				ts["lm_head.weight"] = safetensors.FromFloat32([]int{97, 48}, make([]float32, 97*48))
			},
			untied: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadTiny(t, tinyConfig())
			before := logitsOf(m)
			err := text.Load(m, rewrite(t, tc.edit))
			var le *text.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("%v, want a *text.LoadError", err)
			}
			t.Log(err)
			for _, n := range tc.missing {
				if !slices.Contains(le.Missing, n) {
					t.Errorf("missing %v lacks %s", le.Missing, n)
				}
			}
			for _, n := range tc.unexpected {
				if !slices.Contains(le.Unexpected, n) {
					t.Errorf("unexpected %v lacks %s", le.Unexpected, n)
				}
			}
			for _, s := range tc.badShape {
				if !slices.ContainsFunc(le.Shapes, func(x string) bool { return strings.HasPrefix(x, s) }) {
					t.Errorf("shapes %q lack %q", le.Shapes, s)
				}
			}
			if len(le.Missing) != len(tc.missing) || len(le.Unexpected) != len(tc.unexpected) || len(le.Shapes) != len(tc.badShape) || le.Untied != tc.untied {
				t.Errorf("got %+v", le)
			}
			for _, n := range append(append(tc.missing, tc.unexpected...), "untied") {
				if (n != "untied" || tc.untied) && !strings.Contains(err.Error(), strings.TrimSuffix(n, "untied")) {
					t.Errorf("the message lacks %s:\n%v", n, err)
				}
			}
			if !slices.Equal(logitsOf(m), before) {
				t.Error("a failed load changed the model")
			}
		})
	}
	for name, path := range map[string]string{
		"no file":  filepath.Join(t.TempDir(), "none.safetensors"),
		"not one":  writeFile(t, []byte("not a safetensors file at all")),
		"bad json": writeFile(t, append([]byte{4, 0, 0, 0, 0, 0, 0, 0}, "{{{{"...)),
	} {
		if err := text.Load(text.NewGPT2(tinyConfig()), path); err == nil || !strings.HasPrefix(err.Error(), "text: ") {
			t.Errorf("%s: %v, want a text error", name, err)
		}
	}
	if _, err := text.LoadGPT2(fixture, text.GPT2Config{VocabSize: 97}); err == nil {
		t.Error("LoadGPT2 took an invalid config")
	}
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file.safetensors")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSave: Save writes save_pretrained's keys and shapes (the fixture's
// without the head and the buffers) with metadata format "pt", and the
// file loads back into a model computing the same logits.
func TestSave(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := text.Save(m, path); err != nil {
		t.Fatal(err)
	}
	saved, torch := readFile(t, path), readFixture(t)
	var want []string
	for _, k := range torch.Names() {
		if k != "lm_head.weight" && !strings.HasSuffix(k, ".attn.bias") && !strings.HasSuffix(k, ".attn.masked_bias") {
			want = append(want, k)
			if !slices.Equal(saved.Tensors[k].Shape, torch.Tensors[k].Shape) || !slices.Equal(saved.Tensors[k].Data, torch.Tensors[k].Data) {
				t.Errorf("%s: saved %v, the fixture %v (or other values)", k, saved.Tensors[k].Shape, torch.Tensors[k].Shape)
			}
		}
	}
	if !slices.Equal(saved.Names(), want) {
		t.Errorf("saved keys %v, want %v", saved.Names(), want)
	}
	if saved.Metadata["format"] != "pt" {
		t.Errorf("metadata %v, want format pt", saved.Metadata)
	}
	b := text.NewGPT2(tinyConfig())
	if err := text.Load(b, path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(logitsOf(b), logitsOf(m)) {
		t.Error("the reloaded model computes other logits")
	}
	if err := text.Save(text.NewGPT2(tinyConfig()), path); err == nil {
		t.Error("saved an uninitialised model")
	}
}

func readFile(t testing.TB, path string) *safetensors.File {
	t.Helper()
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestInitialize: a fresh model initialises as GPT-2 does: layer norms
// one and zero, biases zero, weights with standard deviation 0.02 (the
// residual projections' 0.02/√(2·layers)).
func TestInitialize(t *testing.T) {
	nd.Seed(1)
	cfg := text.GPT2Config{VocabSize: 300, NPositions: 64, NEmbd: 64, NLayer: 8, NHead: 4}
	m := text.NewGPT2(cfg)
	params := gluon.CollectParams(m)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range params.Names() {
		v := params.Get(name).Data(ctx.CPU(0)).Float64s()
		mean, sd := stats(v)
		var wantMean, wantSD float64
		switch {
		case strings.Contains(name, ".ln_") && strings.HasSuffix(name, ".weight"):
			wantMean = 1
		case strings.HasSuffix(name, ".bias"):
		case strings.HasSuffix(name, "c_proj.weight"):
			wantSD = 0.02 / 4
		default:
			wantSD = 0.02
		}
		if math.Abs(mean-wantMean) > 0.003 || math.Abs(sd-wantSD) > 0.1*wantSD+1e-9 {
			t.Errorf("%s: mean %.4f, sd %.5f; want %g and %g", name, mean, sd, wantMean, wantSD)
		}
	}
}

func stats(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)))
}

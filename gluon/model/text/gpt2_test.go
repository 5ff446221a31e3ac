package text_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// fixture is the tiny GPT-2 of testdata/make_goldens.py.
var fixture = filepath.Join("testdata", "gpt2_tiny.safetensors")

// goldens is testdata/goldens.json.
type goldens struct {
	Config    map[string]float64           `json:"config"`
	IDs       [][]int64                    `json:"ids"`
	Logits    goldentest.Tensor            `json:"logits"`
	Loss      float64                      `json:"loss"`
	Grads     map[string]goldentest.Tensor `json:"grads"`
	Prompt    []int64                      `json:"prompt"`
	Greedy    []int64                      `json:"greedy"`
	GreedyGap float64                      `json:"greedy_gap"`
	// AttnVariants are the logits of IDs under config.json's attention
	// flags (scale_attn_weights, scale_attn_by_inverse_layer_idx).
	AttnVariants map[string]struct {
		Config map[string]bool   `json:"config"`
		Logits goldentest.Tensor `json:"logits"`
	} `json:"attn_variants"`
}

func readGoldens(t testing.TB) goldens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// tinyConfig is the fixture's configuration, dropout off.
func tinyConfig() text.GPT2Config {
	return text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 2, NHead: 4}
}

// loadTiny returns the fixture's model on devs (cpu(0) when none).
func loadTiny(t testing.TB, cfg text.GPT2Config, devs ...ctx.Context) *text.GPT2 {
	t.Helper()
	m, err := text.LoadGPT2(fixture, cfg, devs...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func idsArray(dev ctx.Context, rows [][]int64) *nd.NDArray {
	var flat []int64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	return nd.FromSlice(dev, flat, len(rows), len(rows[0]))
}

// TestGoldens: the fixture's logits for a batch of two sequences, the
// loss of those sequences as their own labels and the loss's gradients
// to three parameters equal the plain-torch GPT2LMHeadModel's (computed
// in float64 from the same float32 weights) within 1e-4, relative to
// 1+|value|, and within 1e-5 in relative L2 norm.
func TestGoldens(t *testing.T) {
	g := readGoldens(t)
	if c := tinyConfig(); g.Config["vocab_size"] != float64(c.VocabSize) || g.Config["n_embd"] != float64(c.NEmbd) ||
		g.Config["n_layer"] != float64(c.NLayer) || g.Config["n_head"] != float64(c.NHead) || g.Config["n_positions"] != float64(c.NPositions) {
		t.Fatalf("the goldens' config %v is not the tests' %+v", g.Config, c)
	}
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	params := gluon.CollectParams(m)
	ids := idsArray(dev, g.IDs)
	var logits, loss *nd.NDArray
	autograd.Record(func() {
		logits = m.Forward(ids)
		loss = text.LMLoss(logits, ids)
		autograd.Backward(loss)
	})
	const tol = 1e-4
	worst := goldentest.Compare(t, "logits", logits, g.Logits, tol)
	if got := loss.Float64s()[0]; math.Abs(got-g.Loss) > tol*(1+math.Abs(g.Loss)) {
		t.Errorf("loss %.8g, PyTorch %.8g", got, g.Loss)
	}
	relL2 := func(what string, got *nd.NDArray, want goldentest.Tensor) {
		if r := numcmp.RelL2(got.Float64s(), want.Data); !(r <= 1e-5) {
			t.Errorf("%s: relative L2 difference %.3g", what, r)
		}
	}
	relL2("logits", logits, g.Logits)
	for _, name := range []string{"transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", "transformer.ln_f.weight"} {
		want, ok := g.Grads[name]
		if !ok {
			t.Fatalf("no golden gradient of %s", name)
		}
		p := params.Get(name)
		if p == nil {
			t.Fatalf("no parameter %s among %v", name, params.Names())
		}
		worst = max(worst, goldentest.Compare(t, "grad "+name, p.Grad(dev), want, tol))
		relL2("grad "+name, p.Grad(dev), want)
	}
	t.Logf("largest difference %.3g (relative to 1+|PyTorch|)", worst)
}

// TestGreedyGolden: greedy generation from the fixture continues the
// prompt as the plain-torch model's argmax does, with and without the
// cache (Generate uses it; the reference recomputes the whole sequence).
func TestGreedyGolden(t *testing.T) {
	g := readGoldens(t)
	m := loadTiny(t, tinyConfig())
	got, err := m.Generate(g.Prompt, len(g.Greedy), text.GenerateOpts{Greedy: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, g.Greedy) {
		t.Errorf("greedy continuation %v, PyTorch %v", got, g.Greedy)
	}
	// Without the cache: the argmax of Forward on the whole sequence.
	seq := slices.Clone(g.Prompt)
	autograd.PredictMode(func() {
		for range g.Greedy {
			logits := m.Forward(nd.FromSlice(ctx.CPU(0), seq, 1, len(seq)))
			last := nd.SliceAxis(logits, len(seq)-1, len(seq), 1).Float64s()
			seq = append(seq, int64(argmax(last)))
		}
	})
	if !slices.Equal(seq[len(g.Prompt):], g.Greedy) {
		t.Errorf("uncached greedy continuation %v, PyTorch %v", seq[len(g.Prompt):], g.Greedy)
	}
}

// TestGoldensAttnScaling: a config.json with scale_attn_weights false or
// scale_attn_by_inverse_layer_idx true (or both) gives the logits of
// transformers' GPT2Attention with those flags (the scores not divided
// by √head_dim; divided by layer_idx+1), through Forward and through the
// cache, within 1e-4.
func TestGoldensAttnScaling(t *testing.T) {
	g := readGoldens(t)
	if len(g.AttnVariants) != 3 {
		t.Fatalf("%d attention variants in the goldens, want 3", len(g.AttnVariants))
	}
	dev := ctx.CPU(0)
	ids := idsArray(dev, g.IDs)
	n := len(g.IDs[0])
	for name, v := range g.AttnVariants {
		t.Run(name, func(t *testing.T) {
			file := map[string]any{"vocab_size": 97, "n_positions": 32, "n_embd": 48, "n_layer": 2, "n_head": 4}
			for k, b := range v.Config {
				file[k] = b
			}
			raw, _ := json.Marshal(file)
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := text.LoadGPT2Config(path)
			if err != nil {
				t.Fatal(err)
			}
			m := loadTiny(t, cfg)
			autograd.PredictMode(func() {
				goldentest.Compare(t, "logits", m.Forward(ids), v.Logits, 1e-4)
				c := m.NewCache()
				defer c.Release()
				first := m.ForwardCached(nd.SliceAxis(ids, 0, 4, 1), c)
				rest := m.ForwardCached(nd.SliceAxis(ids, 4, n, 1), c)
				goldentest.Compare(t, "cached logits", nd.Concat([]*nd.NDArray{first, rest}, 1), v.Logits, 1e-4)
			})
		})
	}
}

func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// TestLMLossIgnore: labels −100 drop out of LMLoss's mean, as PyTorch's
// ignore_index; the loss is the mean of the other positions' −log p.
func TestLMLossIgnore(t *testing.T) {
	dev := ctx.CPU(0)
	logits := nd.RandomNormal(dev, nd.Float64, 0, 2, 2, 4, 5)
	for _, tc := range []struct {
		name   string
		labels []int64
	}{
		{"none ignored", []int64{0, 1, 2, 3, 4, 3, 2, 1}},
		{"some ignored", []int64{0, -100, 2, 3, 4, 3, -100, -100}},
		{"first ignored only", []int64{-100, 1, 2, 3, -100, 3, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := text.LMLoss(logits, nd.FromSlice(dev, tc.labels, 2, 4)).Float64s()[0]
			lp := nd.LogSoftmax(logits, -1).Float64s()
			sum, n := 0.0, 0
			for b := range 2 {
				for i := range 3 {
					if y := tc.labels[b*4+i+1]; y != -100 {
						sum -= lp[(b*4+i)*5+int(y)]
						n++
					}
				}
			}
			if want := sum / float64(n); math.Abs(got-want) > 1e-12 {
				t.Errorf("LMLoss %.15g, want %.15g", got, want)
			}
		})
	}
}

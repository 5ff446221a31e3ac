package text_test

import (
	"encoding/json"
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
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// batchGoldens is testdata/gpt2_batch_goldens.json
// (make_gpt2_batch_goldens.py).
type batchGoldens struct {
	Prompts   [][]int64         `json:"prompts"`
	IDs       [][]int64         `json:"ids"`
	Mask      [][]int64         `json:"mask"`
	Logits    goldentest.Tensor `json:"logits"`
	Greedy    [][]int64         `json:"greedy"`
	GreedyGap float64           `json:"greedy_gap"`
}

func readBatchGoldens(t testing.TB) batchGoldens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "gpt2_batch_goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g batchGoldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// keptLogits returns the rows of logits [B, T, V] at the positions whose
// mask is 1, in order, and the largest |value| at the others (NaN if one
// is not finite).
func keptLogits(logits []float64, mask [][]int64, v int) (kept []float64, padMax float64) {
	t := len(mask[0])
	for b, row := range mask {
		for i, keep := range row {
			at := logits[(b*t+i)*v : (b*t+i+1)*v]
			if keep != 0 {
				kept = append(kept, at...)
				continue
			}
			for _, x := range at {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return kept, math.NaN()
				}
				padMax = max(padMax, math.Abs(x))
			}
		}
	}
	return kept, padMax
}

// TestForwardMaskedGolden: the logits of a left-padded batch (arbitrary
// ids at the padding) equal, at the tokens, those of the plain-torch
// GPT-2 with transformers' attention mask and generate's position ids
// (float64 from the same float32 weights): within 1e-5 relative to
// 1+|value| in float32 and 1e-12 in float64, through ForwardMasked and
// through the cache in pieces (a masked prompt, a masked step, an
// unmasked rest); the padding's logits are finite.
func TestForwardMaskedGolden(t *testing.T) {
	g := readBatchGoldens(t)
	dev := ctx.CPU(0)
	ids, mask := idsArray(dev, g.IDs), idsArray(dev, g.Mask)
	n, v := len(g.IDs[0]), g.Logits.Shape[2]
	kept := func(x []float64) []float64 { k, _ := keptLogits(x, g.Mask, v); return k }
	want := goldentest.Tensor{Data: kept(g.Logits.Data)}
	want.Shape = []int{len(want.Data)}
	for _, tc := range []struct {
		name string
		dt   nd.DType
		tol  float64
	}{{"float32", nd.Float32, 1e-5}, {"float64", nd.Float64, 1e-12}} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadTiny(t, tinyConfig())
			if err := gluon.Cast(m, tc.dt); err != nil {
				t.Fatal(err)
			}
			check := func(what string, logits *nd.NDArray) {
				t.Helper()
				all := logits.Float64s()
				k, padMax := keptLogits(all, g.Mask, v)
				if math.IsNaN(padMax) {
					t.Errorf("%s: a logit at the padding is not finite", what)
				}
				worst := goldentest.Compare(t, what, nd.FromSlice(dev, k, len(k)), want, tc.tol)
				t.Logf("%s: largest difference %.3g (relative to 1+|PyTorch|)", what, worst)
			}
			autograd.PredictMode(func() {
				check("ForwardMasked", m.ForwardMasked(ids, mask))
				c := m.NewCache()
				defer c.Release()
				a := m.ForwardCachedMasked(nd.SliceAxis(ids, 0, 5, 1), nd.SliceAxis(mask, 0, 5, 1), c)
				b := m.ForwardCachedMasked(nd.SliceAxis(ids, 5, 6, 1), nd.SliceAxis(mask, 0, 6, 1), c)
				rest := m.ForwardCached(nd.SliceAxis(ids, 6, n, 1), c) // the cache's mask, extended by ones
				check("cached", nd.Concat([]*nd.NDArray{a, b, rest}, 1))
			})
		})
	}
}

// TestForwardMaskedIsolates: each row of a batch padded on the left or
// on the right, with any ids at the padding, gets at its tokens the
// logits Forward gives the row alone; a mask of ones (Bool or Int64) is
// no mask.
func TestForwardMaskedIsolates(t *testing.T) {
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	rows := [][]int64{{5, 9, 33, 2, 71, 8}, {40, 1}, {12, 19, 77, 60}}
	alone := make([][]float32, len(rows))
	autograd.PredictMode(func() {
		for i, r := range rows {
			alone[i] = m.Forward(idsArray(dev, [][]int64{r})).Float32s()
		}
	})
	for _, left := range []bool{true, false} {
		ids, mask := make([][]int64, len(rows)), make([][]int64, len(rows))
		for i, r := range rows {
			p := 6 - len(r)
			junk := make([]int64, p)
			for j := range junk {
				junk[j] = int64(90 - 7*j - i)
			}
			ones, zeros := slices.Repeat([]int64{1}, len(r)), make([]int64, p)
			if left {
				ids[i], mask[i] = slices.Concat(junk, r), slices.Concat(zeros, ones)
			} else {
				ids[i], mask[i] = slices.Concat(r, junk), slices.Concat(ones, zeros)
			}
		}
		autograd.PredictMode(func() {
			got := m.ForwardMasked(idsArray(dev, ids), idsArray(dev, mask)).Float32s()
			for i, r := range rows {
				start := 0
				if left {
					start = 6 - len(r)
				}
				row := got[(i*6+start)*97 : (i*6+start+len(r))*97]
				if d := numcmp.RelL2(row, alone[i]); !(d < 1e-6) {
					t.Errorf("left %v, row %d: relative L2 difference %.3g from the row alone", left, i, d)
				}
			}
		})
	}
	full := idsArray(dev, [][]int64{rows[0], rows[0]})
	autograd.PredictMode(func() {
		want := m.Forward(full).Float32s()
		for _, dt := range []nd.DType{nd.Int64, nd.Bool, nd.Float32} {
			if got := m.ForwardMasked(full, nd.Ones(dev, dt, 2, 6)).Float32s(); !slices.Equal(got, want) {
				t.Errorf("a %v mask of ones changes the logits", dt)
			}
		}
	})
}

// TestGenerateBatchGreedy: greedy batched generation gives every row the
// tokens Generate gives its prompt alone, and the plain-torch batch's
// greedy continuation; with end tokens each row stops at its own, the
// others going on.
func TestGenerateBatchGreedy(t *testing.T) {
	g := readBatchGoldens(t)
	m := loadTiny(t, tinyConfig())
	alone := func(prompts [][]int64, n int, o text.GenerateOpts) [][]int64 {
		t.Helper()
		var out [][]int64
		for _, p := range prompts {
			r, err := m.Generate(p, n, o)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	mixed := [][]int64{{1}, {5, 9, 33, 2, 71, 8, 14, 3}, {40, 1, 60}, {40, 1, 60}}
	for _, tc := range []struct {
		name    string
		prompts [][]int64
		n       int
		eos     []int64
		want    [][]int64 // nil: Generate's per row
	}{
		{"goldens", g.Prompts, len(g.Greedy[0]), nil, g.Greedy},
		{"goldens, end tokens", g.Prompts, len(g.Greedy[0]), []int64{12, 76}, [][]int64{{27, 27, 12}, {85, 76}, {17, 91, 12}, {18, 27, 27, 12}}},
		{"one row", g.Prompts[2:3], 6, nil, nil},
		{"equal lengths", [][]int64{{3, 4}, {50, 51}}, 9, nil, nil},
		{"mixed", mixed, 12, nil, nil},
		{"mixed, end tokens", mixed, 12, []int64{12, 27, 96}, nil},
		{"full context", [][]int64{slices.Repeat([]int64{7}, 30), {2}}, 3, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := text.GenerateOpts{Greedy: true, EOS: tc.eos}
			got, err := m.GenerateBatch(tc.prompts, tc.n, o)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = alone(tc.prompts, tc.n, o)
			} else if per := alone(tc.prompts, tc.n, o); !slices.EqualFunc(per, want, slices.Equal) {
				t.Errorf("Generate row by row %v, PyTorch %v", per, want)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("GenerateBatch %v, want %v", got, want)
			}
		})
	}
}

// TestGenerateBatchSampling: sampling a batch is reproducible for a seed
// whatever is drawn in between, other seeds give other tokens, rows with
// the same prompt draw different samples, and every token lies in the
// vocabulary; top-k 1 is greedy.
func TestGenerateBatchSampling(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	prompts := [][]int64{{11, 42, 7}, {11, 42, 7}, {5}, {60, 2, 9, 31, 8}}
	gen := func(o text.GenerateOpts) [][]int64 {
		t.Helper()
		out, err := m.GenerateBatch(prompts, 15, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	nd.Seed(3)
	a := gen(text.GenerateOpts{Seed: 1, Temperature: 1.5, TopP: 0.95})
	nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, 5) // other draws in between
	b := gen(text.GenerateOpts{Seed: 1, Temperature: 1.5, TopP: 0.95})
	c := gen(text.GenerateOpts{Seed: 2, Temperature: 1.5, TopP: 0.95})
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Errorf("seed 1 gave %v, then %v", a, b)
	}
	if slices.EqualFunc(a, c, slices.Equal) {
		t.Errorf("seeds 1 and 2 both gave %v", a)
	}
	if slices.Equal(a[0], a[1]) {
		t.Errorf("rows 0 and 1 (the same prompt) drew the same %v", a[0])
	}
	for _, row := range slices.Concat(a, c) {
		if len(row) != 15 {
			t.Errorf("%d tokens, want 15", len(row))
		}
		for _, tok := range row {
			if tok < 0 || tok >= 97 {
				t.Fatalf("token %d outside the vocabulary", tok)
			}
		}
	}
	greedy, _ := m.GenerateBatch(prompts, 8, text.GenerateOpts{Greedy: true})
	if k1 := gen(text.GenerateOpts{TopK: 1, Seed: 4}); !slices.EqualFunc(greedy, trim(k1, 8), slices.Equal) {
		t.Errorf("top-k 1 gave %v, greedy %v", k1, greedy)
	}
}

// trim cuts every row to n tokens.
func trim(rows [][]int64, n int) [][]int64 {
	out := make([][]int64, len(rows))
	for i, r := range rows {
		out[i] = r[:min(n, len(r))]
	}
	return out
}

// TestGenerateBatchOnBatchToken: OnBatchToken sees every token returned,
// with its row, the rows of a step in order; returning false ends that
// row alone; Generate calls it with row 0.
func TestGenerateBatchOnBatchToken(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	g := readBatchGoldens(t)
	type ev struct {
		row int
		tok int64
	}
	var seen []ev
	got, err := m.GenerateBatch(g.Prompts, 6, text.GenerateOpts{Greedy: true, EOS: []int64{76}, OnBatchToken: func(row int, tok int64) bool {
		seen = append(seen, ev{row, tok})
		return !(row == 2 && len(seen) > 4) // row 2 ends after its second token
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{g.Greedy[0], g.Greedy[1][:2], g.Greedy[2][:2], g.Greedy[3]}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("generated %v, want %v", got, want)
	}
	// Step by step: rows 0-3, then 0-3 (row 1 ends on 76, row 2 by the
	// callback), then rows 0 and 3.
	var order []ev
	for step := range 6 {
		for r, row := range want {
			if step < len(row) {
				order = append(order, ev{r, row[step]})
			}
		}
	}
	if !slices.Equal(seen, order) {
		t.Errorf("streamed %v, want %v", seen, order)
	}
	var rows []int
	one, err := m.Generate(g.Prompts[0], 3, text.GenerateOpts{Greedy: true, OnBatchToken: func(row int, tok int64) bool {
		rows = append(rows, row)
		return true
	}})
	if err != nil || !slices.Equal(one, g.Greedy[0][:3]) || !slices.Equal(rows, []int{0, 0, 0}) {
		t.Errorf("Generate with OnBatchToken: %v %v, rows %v", one, err, rows)
	}
}

// TestGenerateBatchErrors: arguments GenerateBatch cannot take are
// errors naming the problem and the row.
func TestGenerateBatchErrors(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	ok := []int64{1, 2}
	for _, tc := range []struct {
		name    string
		prompts [][]int64
		n       int
		o       text.GenerateOpts
		want    string
	}{
		{"no prompts", nil, 3, text.GenerateOpts{}, "no prompts"},
		{"empty prompt", [][]int64{ok, {}}, 3, text.GenerateOpts{}, "empty prompt (GPT-2 starts from a token: <|endoftext|>, 50256, for none) (prompt 1 of 2)"},
		{"token", [][]int64{ok, ok, {4, 97}}, 3, text.GenerateOpts{}, "prompt token 97 at 1 outside [0, 97) (prompt 2 of 3)"},
		{"negative token", [][]int64{{-1}}, 3, text.GenerateOpts{}, "prompt token -1 at 0"},
		{"too long", [][]int64{ok, make([]int64, 30)}, 4, text.GenerateOpts{}, "need 33 positions and exceed the 32 positions (prompt 1 of 2)"},
		{"negative count", [][]int64{ok}, -1, text.GenerateOpts{}, "-1 new tokens"},
		{"top-p", [][]int64{ok}, 3, text.GenerateOpts{TopP: 2}, "top-p"},
		{"OnToken", [][]int64{ok}, 3, text.GenerateOpts{OnToken: func(int64) bool { return true }}, "set OnBatchToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.GenerateBatch(tc.prompts, tc.n, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error about %q", err, tc.want)
			}
		})
	}
	if _, err := text.NewGPT2(tinyConfig()).GenerateBatch([][]int64{ok}, 1, text.GenerateOpts{}); err == nil {
		t.Error("an uninitialised model generated")
	}
	if out, err := m.GenerateBatch([][]int64{ok, {3}}, 0, text.GenerateOpts{}); err != nil || len(out) != 2 || len(out[0]) != 0 || len(out[1]) != 0 {
		t.Errorf("0 new tokens: %v, %v", out, err)
	}
}

// TestForwardMaskedErrors: masks that do not fit panic with the kind of
// error they are.
func TestForwardMaskedErrors(t *testing.T) {
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	ids := func(b, n int) *nd.NDArray { return nd.Zeros(dev, nd.Int64, b, n) }
	mask := func(b, n int) *nd.NDArray { return nd.Ones(dev, nd.Int64, b, n) }
	for _, tc := range []struct {
		name string
		run  func()
		kind nd.ErrorKind
	}{
		{"mask length", func() { m.ForwardMasked(ids(2, 4), mask(2, 3)) }, nd.ErrShape},
		{"mask batch", func() { m.ForwardMasked(ids(2, 4), mask(1, 4)) }, nd.ErrShape},
		{"mask rank", func() { m.ForwardMasked(ids(2, 4), nd.Ones(dev, nd.Int64, 2, 4, 1)) }, nd.ErrShape},
		{"mask context", func() { m.ForwardMasked(ids(2, 4), nd.Ones(ctx.CPU(1), nd.Int64, 2, 4)) }, nd.ErrContext},
		{"cached mask of the new positions only", func() {
			c := m.NewCache()
			defer c.Release()
			m.ForwardCachedMasked(ids(2, 3), mask(2, 3), c)
			m.ForwardCachedMasked(ids(2, 1), mask(2, 1), c)
		}, nd.ErrShape},
		{"nil cache", func() { m.ForwardCachedMasked(ids(1, 2), mask(1, 2), nil) }, nd.ErrArgument},
		{"recording", func() {
			autograd.Record(func() { m.ForwardCachedMasked(ids(1, 2), mask(1, 2), m.NewCache()) })
		}, nd.ErrArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			autograd.PredictMode(func() { err = nd.Catch(tc.run) })
			if !errors.Is(err, &nd.Error{Kind: tc.kind}) {
				t.Errorf("%v, want an error of kind %v", err, tc.kind)
			}
		})
	}
}

// TestGenerateBatchReleasesMemory: GenerateBatch releases what it
// allocates, its cache's mask too.
func TestGenerateBatchReleasesMemory(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	prompts := [][]int64{{1, 2, 3}, {4}}
	if _, err := m.GenerateBatch(prompts, 10, text.GenerateOpts{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	before := nd.MemoryStats(ctx.CPU(0)).InUse
	for seed := range uint64(3) {
		if _, err := m.GenerateBatch(prompts, 12, text.GenerateOpts{Seed: seed, TopK: 5}); err != nil {
			t.Fatal(err)
		}
	}
	if after := nd.MemoryStats(ctx.CPU(0)).InUse; after != before {
		t.Errorf("%d bytes in use after more calls, %d after the first", after, before)
	}
}

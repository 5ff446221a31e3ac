package nd_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/goluon/goluon/nd"
)

// TestFoldBatchNorm traces convolution + batch normalisation (+ ReLU) in
// predict mode with TraceOpts.FoldBatchNorm and compares the calls with
// the eager computation (within the documented rounding), and checks
// which shapes of the computation fold and which must not: not an
// intermediate that another kernel reads or an output hands out, not a
// convolution with more filter values than output values.
func TestFoldBatchNorm(t *testing.T) {
	type params struct{ w, b, gamma, beta, mean, vr *nd.NDArray }
	mk := func(c, cin, k int, bias, affine bool, seed uint64) params {
		p := params{w: randn(seed, c, cin, k, k), mean: randn(seed+1, c)}
		p.vr = nd.AddScalar(nd.Abs(randn(seed+2, c)), 0.5)
		if bias {
			p.b = randn(seed+3, c)
		}
		if affine {
			p.gamma, p.beta = randn(seed+4, c), randn(seed+5, c)
		}
		return p
	}
	convBN := func(x *nd.NDArray, p params, o nd.ConvOpts) *nd.NDArray {
		return nd.BatchNorm(nd.Conv2D(x, p.w, p.b, o), p.gamma, p.beta, p.mean, p.vr, nd.BatchNormOpts{})
	}
	pad1 := nd.ConvOpts{Pad: [2]int{1, 1}}
	cases := []struct {
		name   string
		cin    int
		groups int
		bias   bool
		affine bool
		f      func(x *nd.NDArray, p params) []*nd.NDArray
		folded int
	}{
		{"conv-bn-relu", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			return []*nd.NDArray{nd.Relu(convBN(x, p, pad1))}
		}, 1},
		{"conv-bn-with-relu-option", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			c := nd.Conv2D(x, p.w, nil, pad1)
			return []*nd.NDArray{nd.BatchNorm(c, p.gamma, p.beta, p.mean, p.vr, nd.BatchNormOpts{Relu: true})}
		}, 1},
		{"two-blocks-relu-option", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			h := nd.BatchNorm(nd.Conv2D(x, p.w, nil, pad1), p.gamma, p.beta, p.mean, p.vr, nd.BatchNormOpts{Relu: true})
			h = nd.BatchNorm(nd.Conv2D(h, p.w, nil, pad1), p.gamma, p.beta, p.mean, p.vr, nd.BatchNormOpts{Relu: true})
			return []*nd.NDArray{nd.Exp(h)} // a step after the last fold: it must stay
		}, 2},
		{"conv+bias-bn", 8, 1, true, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			return []*nd.NDArray{convBN(x, p, pad1)}
		}, 1},
		{"direct-conv-bn-relu-pool", 3, 1, true, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			h := nd.Relu(convBN(x, p, nd.ConvOpts{}))
			return []*nd.NDArray{nd.MaxPool2D(h, [2]int{2, 2}, [2]int{2, 2}, [2]int{})}
		}, 1},
		{"no-affine", 8, 1, false, false, func(x *nd.NDArray, p params) []*nd.NDArray {
			return []*nd.NDArray{nd.Relu(convBN(x, p, pad1))}
		}, 1},
		{"groups", 8, 2, true, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			return []*nd.NDArray{nd.Relu(convBN(x, p, nd.ConvOpts{Pad: [2]int{1, 1}, Groups: 2}))}
		}, 1},
		{"strided", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			return []*nd.NDArray{convBN(x, p, nd.ConvOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}})}
		}, 1},
		{"bn-output-also-returned", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			h := convBN(x, p, pad1)
			return []*nd.NDArray{nd.Relu(h), h} // the ReLU stays separate
		}, 1},
		{"conv-output-read-elsewhere", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			c := nd.Conv2D(x, p.w, nil, pad1)
			h := nd.BatchNorm(c, p.gamma, p.beta, p.mean, p.vr, nd.BatchNormOpts{})
			return []*nd.NDArray{nd.Add(h, c)}
		}, 0},
		{"conv-output-returned", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			c := nd.Conv2D(x, p.w, nil, pad1)
			return []*nd.NDArray{nd.BatchNorm(c, p.gamma, p.beta, p.mean, p.vr, nd.BatchNormOpts{}), c}
		}, 0},
		{"more-filter-values-than-outputs", 32, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			return []*nd.NDArray{nd.Relu(convBN(x, p, pad1))}
		}, 0},
		{"two-blocks", 8, 1, false, true, func(x *nd.NDArray, p params) []*nd.NDArray {
			h := nd.Relu(convBN(x, p, pad1))
			return []*nd.NDArray{nd.Relu(convBN(h, p, pad1))}
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(11, 4, c.cin, 12, 12)
			if c.cin > 16 {
				x = randn(11, 1, c.cin, 3, 3)
			}
			p := mk(8, c.cin/c.groups, 3, c.bias, c.affine, 20)
			f := func(in []*nd.NDArray) []*nd.NDArray { return c.f(in[0], p) }
			want := f([]*nd.NDArray{x})
			bound := []*nd.NDArray{p.w, p.mean, p.vr}
			for _, a := range []*nd.NDArray{p.b, p.gamma, p.beta} {
				if a != nil {
					bound = append(bound, a)
				}
			}
			g := nd.TraceWith(c.name, f, []*nd.NDArray{x}, bound, nd.TraceOpts{FoldBatchNorm: true})
			if st := g.Stats(); st.Folded != c.folded {
				t.Fatalf("folded %d batch normalisations, want %d (%+v)", st.Folded, c.folded, st)
			}
			for call := range 2 {
				got := g.Call([]*nd.NDArray{x})
				for i := range want {
					compareClose(t, fmt.Sprintf("call %d output %d", call, i), got[i].Float64s(), want[i].Float64s(), 2e-5)
				}
			}
			// A new running mean reaches the next call: the filters are folded per call.
			p.mean.WriteFrom(nd.AddScalar(p.mean, 0.25).Float32s())
			want2 := f([]*nd.NDArray{x})
			got2 := g.Call([]*nd.NDArray{x})
			compareClose(t, "after the statistics changed", got2[0].Float64s(), want2[0].Float64s(), 2e-5)
		})
	}
}

// TestFoldBatchNormNotWhileRecording: a graph with a backward pass (or in
// training mode, where the statistics come from the batch) folds nothing
// and equals eager bit for bit.
func TestFoldBatchNormNotWhileRecording(t *testing.T) {
	x := randn(1, 2, 4, 6, 6)
	w, gamma, beta := randn(2, 5, 4, 3, 3), randn(3, 5), randn(4, 5)
	mean, vr := nd.Zeros(cpu0, nd.Float32, 5), nd.Ones(cpu0, nd.Float32, 5)
	w.AttachGrad(nd.GradWrite)
	f := func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Relu(nd.BatchNorm(nd.Conv2D(in[0], w, nil, nd.ConvOpts{}), gamma, beta, mean, vr, nd.BatchNormOpts{}))}
	}
	for _, train := range []bool{false, true} {
		exit := nd.EnterRecording(train)
		g := nd.TraceWith("bn", f, []*nd.NDArray{x}, []*nd.NDArray{w, gamma, beta, mean, vr}, nd.TraceOpts{FoldBatchNorm: true})
		exit()
		if g.Stats().Folded != 0 {
			t.Errorf("train=%v: folded %d while recording", train, g.Stats().Folded)
		}
	}
	exit := nd.EnterMode(true)
	defer exit()
	g := nd.TraceWith("bn", f, []*nd.NDArray{x}, []*nd.NDArray{w, gamma, beta, mean, vr}, nd.TraceOpts{FoldBatchNorm: true})
	if g.Stats().Folded != 0 {
		t.Errorf("training mode: folded %d (batch statistics)", g.Stats().Folded)
	}
}

// compareClose fails when got and want differ by more than tol relative
// to the largest magnitude of want.
func compareClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*scale || math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s: [%d] = %g, want %g (±%g)", what, i, got[i], want[i], tol*scale)
		}
	}
}

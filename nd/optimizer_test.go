package nd_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestOptimizerUpdateErrors checks that bad operands and bad programs get
// a clear error and leave the weight and state as they were.
func TestOptimizerUpdateErrors(t *testing.T) {
	dev := ctx.CPU(0)
	sgd := nd.SGDProgram(nd.OptimizerParams{LR: 0.1, RescaleGrad: 1, Momentum: 0.9}, true)
	plain := nd.SGDProgram(nd.OptimizerParams{LR: 0.1, RescaleGrad: 1}, false)
	step := func(s backend.OptStep) nd.OptProgram { return nd.OptProgram{Steps: []backend.OptStep{s}} }
	long := nd.OptProgram{}
	for range backend.MaxOptSteps + 1 {
		long.Steps = append(long.Steps, backend.OptStep{Unary: backend.MulScalar, D: backend.OptW, A: backend.OptW, S1: 1})
	}
	w := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
	g := nd.FromSlice(dev, []float32{1, 1, 1}, 3)
	m := nd.FromSlice(dev, []float32{5, 5, 5}, 3)
	cases := []struct {
		name    string
		kind    nd.ErrorKind
		want    []string
		prog    nd.OptProgram
		g, s    *nd.NDArray
		weights *nd.NDArray
	}{
		{"no state", nd.ErrArgument, []string{"uses a state"}, sgd, g, nil, w},
		{"grad shape", nd.ErrShape, []string{"gradient shape [2]", "[3]"}, sgd, nd.Ones(dev, nd.Float32, 2), m, w},
		{"state dtype", nd.ErrDType, []string{"state is float64"}, sgd, g, nd.Ones(dev, nd.Float64, 3), w},
		{"grad context", nd.ErrContext, []string{"cpu(1)", "cpu(0)"}, plain, nd.Ones(ctx.CPU(1), nd.Float32, 3), nil, w},
		{"int weight", nd.ErrDType, []string{"int64"}, plain, nd.Zeros(dev, nd.Int64, 3), nil, nd.Zeros(dev, nd.Int64, 3)},
		{"writes gradient", nd.ErrArgument, []string{"step 0 writes the gradient"},
			step(backend.OptStep{Unary: backend.MulScalar, D: backend.OptG, A: backend.OptG, S1: 2}), g, nil, w},
		{"reads temporary", nd.ErrArgument, []string{"step 0 reads t2 before"},
			step(backend.OptStep{IsBinary: true, Binary: backend.Add, D: backend.OptW, A: backend.OptW, B: backend.OptT2}), g, nil, w},
		{"bad register", nd.ErrArgument, []string{"OptReg(9)"},
			step(backend.OptStep{Unary: backend.MulScalar, D: 9, A: backend.OptW}), g, nil, w},
		{"too long", nd.ErrArgument, []string{"17 steps, at most 16"}, long, g, nil, w},
		{"undeclared state", nd.ErrArgument, []string{"step 0 names the state"},
			step(backend.OptStep{IsBinary: true, Binary: backend.Add, D: backend.OptW, A: backend.OptW, B: backend.OptS}), g, m, w},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(w.Float32s())
			err := nd.Catch(func() { nd.OptimizerUpdate(c.prog, c.weights, c.g, c.s) })
			var e *nd.Error
			if !errors.As(err, &e) || e.Kind != c.kind {
				t.Fatalf("got %v, want an *nd.Error of kind %v", err, c.kind)
			}
			for _, s := range append(c.want, "OptimizerUpdate") {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not mention %q", err, s)
				}
			}
			if !slices.Equal(w.Float32s(), before) || !slices.Equal(m.Float32s(), []float32{5, 5, 5}) {
				t.Errorf("weight %v, state %v changed", w.Float32s(), m.Float32s())
			}
		})
	}
}

// TestOptimizerPrograms checks every form of the SGD and RMSProp rules:
// within MaxOptSteps, never writing the gradient, using the state exactly
// when the form has one, and run by OptimizerUpdate fused and composed to
// the same bits (gluon/optimizer checks the values against PyTorch).
func TestOptimizerPrograms(t *testing.T) {
	dev := ctx.CPU(0)
	var progs []nd.OptProgram
	for _, wd := range []float64{0, 0.01} {
		for _, clip := range []float64{0, 0.5} {
			p := nd.OptimizerParams{LR: 0.1, WD: wd, RescaleGrad: 0.5, ClipGradient: clip, Momentum: 0.9, Gamma1: 0.9, Epsilon: 1e-8}
			progs = append(progs, nd.SGDProgram(p, false), nd.SGDProgram(p, true))
			p.Nesterov = true
			progs = append(progs, nd.SGDProgram(p, true))
			for _, keras := range []bool{false, true} {
				p.KerasEpsilon, p.ClipWeights = keras, clip
				progs = append(progs, nd.RMSPropProgram(p))
			}
		}
	}
	for i, prog := range progs {
		if len(prog.Steps) > backend.MaxOptSteps {
			t.Errorf("program %d has %d steps:\n%v", i, len(prog.Steps), prog)
		}
		run := func(fused bool) [2][]float64 {
			defer nd.SetFusedKernels(nd.SetFusedKernels(fused))
			w := nd.FromSlice(dev, []float64{1, -2, 3, 0.25, -0.5}, 5)
			g := nd.FromSlice(dev, []float64{0.5, 4, -3, 0, 1e-3}, 5)
			s := nd.FromSlice(dev, []float64{0.1, 0.2, 0.3, 0.4, 0.5}, 5)
			nd.OptimizerUpdate(prog, w, g, s)
			if !slices.Equal(g.Float64s(), []float64{0.5, 4, -3, 0, 1e-3}) {
				t.Errorf("program %d changed the gradient", i)
			}
			return [2][]float64{w.Float64s(), s.Float64s()}
		}
		f, c := run(true), run(false)
		if !slices.Equal(f[0], c[0]) || !slices.Equal(f[1], c[1]) {
			t.Errorf("program %d: fused %v, composed %v\n%v", i, f, c, prog)
		}
		if !prog.UsesState && !slices.Equal(f[1], []float64{0.1, 0.2, 0.3, 0.4, 0.5}) {
			t.Errorf("program %d keeps no state but wrote it", i)
		}
		if prog.UsesState && slices.Equal(f[1], []float64{0.1, 0.2, 0.3, 0.4, 0.5}) {
			t.Errorf("program %d keeps a state but left it", i)
		}
	}
}

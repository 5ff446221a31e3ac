package ndtest

// The cases for the ops of nd/dropout.go: Dropout, DropoutAxes.

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// confDropout checks that Dropout is the identity outside training, and
// that in training it drops a fraction p of 100k elements, scales the rest
// by 1/(1-p), and draws the same mask for the same seed.
func confDropout(e confEnv) {
	const n = 100000
	x, xv := e.rand(1400, 1, 2, n) // no zeros: a zero output means dropped
	e.run("predict_identity", func(e confEnv) {
		e.check(nd.Dropout(x, 0.5), []int{n}, xv, confTolExact)
		nd.DefaultSession().PredictMode(func() { e.check(nd.Dropout(x, 0.3), []int{n}, xv, confTolExact) })
	})
	e.run("train_p0_identity", func(e confEnv) {
		var y *nd.NDArray
		nd.DefaultSession().TrainMode(func() { y = nd.Dropout(x, 0) })
		e.check(y, []int{n}, xv, confTolExact)
	})
	train := func(p float64, seed uint64) *nd.NDArray {
		var y *nd.NDArray
		nd.Seed(seed)
		nd.DefaultSession().TrainMode(func() { y = nd.Dropout(x, p) })
		return y
	}
	for _, p := range []float64{0.1, 0.5, 0.8} {
		e.run(fmt.Sprintf("train_p%g", p), func(e confEnv) {
			y := train(p, 7)
			if !slices.Equal(y.Shape(), []int{n}) || y.DType() != e.dt || y.Context() != e.dev {
				e.Fatalf("result %v %v on %v, want [%d] %v on %v", y.Shape(), y.DType(), y.Context(), n, e.dt, e.dev)
			}
			yv := y.Float64s()
			dropped := 0
			tl := e.tol(confTolDefault)
			for i, v := range yv {
				if v == 0 {
					dropped++
					continue
				}
				if w := xv[i] / (1 - p); !confClose(v, w, tl) {
					e.Fatalf("element %d kept as %g, want %g = %g/(1-%g)", i, v, w, xv[i], p)
				}
			}
			// The dropped fraction has standard deviation sqrt(p(1-p)/n) <=
			// 0.0016; 0.01 is more than six of them.
			if frac := float64(dropped) / n; math.Abs(frac-p) > 0.01 {
				e.Errorf("dropped fraction %.4f, want %g ± 0.01", frac, p)
			}
		})
	}
	e.run("axes_share_the_mask", func(e confEnv) {
		// [T=50, N=4, C=100]: with axes (0) every time step keeps the same
		// features; the kept fraction is still about 1-p.
		xs, xsv := e.rand(1401, 1, 2, 50, 4, 100)
		var y *nd.NDArray
		nd.Seed(3)
		nd.DefaultSession().TrainMode(func() { y = nd.DropoutAxes(xs, 0.5, 0) })
		yv := y.Float64s()
		kept := 0
		for i, v := range yv {
			first := i % 400 // the same (n, c) at time 0
			if (v == 0) != (yv[first] == 0) {
				e.Fatalf("element %d dropped %v but its time-0 twin %v", i, v == 0, yv[first] == 0)
			}
			if v != 0 {
				kept++
				if w := xsv[i] * 2; !confClose(v, w, e.tol(confTolDefault)) {
					e.Fatalf("element %d kept as %g, want %g", i, v, w)
				}
			}
		}
		if frac := float64(kept) / float64(len(yv)); frac < 0.4 || frac > 0.6 {
			e.Errorf("kept fraction %.3f, want about 0.5", frac)
		}
		if nd.DefaultSession().PredictMode(func() { y = nd.DropoutAxes(xs, 0.5, 0) }); !slices.Equal(y.Float64s(), xsv) {
			e.Error("DropoutAxes is not the identity in predict mode")
		}
	})
	e.run("same_seed_same_mask", func(e confEnv) {
		a, b := train(0.5, 11).Float64s(), train(0.5, 11).Float64s()
		e.checkVals(a, b, confTol{})
		c := train(0.5, 12).Float64s()
		same := 0
		for i := range a {
			if (a[i] == 0) == (c[i] == 0) {
				same++
			}
		}
		if same > n*6/10 { // independent masks agree on about half the elements
			e.Errorf("seeds 11 and 12 give masks that agree on %d of %d elements", same, n)
		}
	})
}

// gradDropoutCases checks Dropout in training mode (several rates, and
// followed by a nonlinear op) and in predict mode.
func gradDropoutCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	dropout := func(p float64) func(in []*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return nd.Dropout(in[0], p) }
	}
	x := func() []*nd.NDArray { return gradIn(gradSigned(dev, 65, 4, 5)) }
	cases = append(cases,
		// CheckGrad reseeds the generators before every evaluation, so the
		// mask is the same in the recorded and the perturbed runs.
		gradCase{op: "Dropout", name: "train/p-0.5", in: x, f: dropout(0.5), tol: GradTol{Train: true}},
		gradCase{op: "Dropout", name: "train/p-0.2", in: x, f: dropout(0.2), tol: GradTol{Train: true}},
		gradCase{op: "Dropout", name: "train/p-0", in: x, f: dropout(0), tol: GradTol{Train: true}},
		gradCase{op: "Dropout", name: "predict/p-0.5", in: x, f: dropout(0.5)},
		gradCase{op: "Dropout", name: "train/then-tanh", in: x, tol: GradTol{Train: true},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Tanh(nd.Dropout(in[0], 0.5)) }},
		gradCase{op: "DropoutAxes", name: "train/axes-0", tol: GradTol{Train: true},
			in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 66, 3, 2, 4)) },
			f:  func(in []*nd.NDArray) *nd.NDArray { return nd.DropoutAxes(in[0], 0.5, 0) }},
		gradCase{op: "DropoutAxes", name: "train/axes-2-3", tol: GradTol{Train: true},
			in: func() []*nd.NDArray { return gradIn(gradSigned(dev, 67, 2, 3, 2, 2)) },
			f:  func(in []*nd.NDArray) *nd.NDArray { return nd.DropoutAxes(in[0], 0.4, 2, -1) }},
	)
	return cases
}

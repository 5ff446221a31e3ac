package ndtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/nd"
)

// refPoolOut is the pooled size along one axis with PyTorch's rules: in
// ceil mode a last window that would start in the padding is dropped.
func refPoolOut(in, k, s, p int, ceil bool) int {
	span := in + 2*p - k
	if !ceil {
		return span/s + 1
	}
	out := (span+s-1)/s + 1
	if (out-1)*s >= in+p {
		out--
	}
	return out
}

// refPool2D pools x [n, c, h, w] with PyTorch's semantics: max windows
// ignore the padding; the average divisor is the window clipped to the
// padded input when padding is counted, and the window clipped to the
// input otherwise.
func refPool2D(x []float64, shape []int, o nd.PoolOpts) ([]float64, []int) {
	n, c, h, w := shape[0], shape[1], shape[2], shape[3]
	kh, kw, ph, pw := o.Kernel[0], o.Kernel[1], o.Pad[0], o.Pad[1]
	if o.Global {
		kh, kw, ph, pw = h, w, 0, 0
	}
	sh, sw := o.Stride[0], o.Stride[1]
	if sh == 0 {
		sh = kh
	}
	if sw == 0 {
		sw = kw
	}
	oh, ow := refPoolOut(h, kh, sh, ph, o.CeilMode), refPoolOut(w, kw, sw, pw, o.CeilMode)
	out := make([]float64, n*c*oh*ow)
	for m := range n * c {
		plane := x[m*h*w : (m+1)*h*w]
		for y := range oh {
			for xo := range ow {
				y0, x0 := y*sh-ph, xo*sw-pw
				y1, x1 := min(y0+kh, h+ph), min(x0+kw, w+pw)
				padded := (y1 - y0) * (x1 - x0)
				y0, x0, y1, x1 = max(y0, 0), max(x0, 0), min(y1, h), min(x1, w)
				acc := math.Inf(-1)
				if o.Type == nd.PoolAvg {
					acc = 0
				}
				for iy := y0; iy < y1; iy++ {
					for ix := x0; ix < x1; ix++ {
						if o.Type == nd.PoolAvg {
							acc += plane[iy*w+ix]
						} else {
							acc = math.Max(acc, plane[iy*w+ix])
						}
					}
				}
				if o.Type == nd.PoolAvg {
					if o.CountIncludePad {
						acc /= float64(padded)
					} else {
						acc /= float64((y1 - y0) * (x1 - x0))
					}
				}
				out[(m*oh+y)*ow+xo] = acc
			}
		}
	}
	return out, []int{n, c, oh, ow}
}

// confPool2D checks Pool2D (max and average, stride, padding, ceil mode,
// counting the padding or not, global) and its wrappers.
func confPool2D(e confEnv) {
	type pc struct {
		name  string
		shape []int
		o     nd.PoolOpts
	}
	var cases []pc
	for _, typ := range []struct {
		name string
		t    nd.PoolOpts
	}{{"max", nd.PoolOpts{Type: nd.PoolMax}}, {"avg", nd.PoolOpts{Type: nd.PoolAvg}}, {"avgpad", nd.PoolOpts{Type: nd.PoolAvg, CountIncludePad: true}}} {
		geo := []pc{
			{"k2s2", []int{2, 3, 6, 6}, nd.PoolOpts{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}},
			{"k2_default_stride", []int{1, 2, 5, 4}, nd.PoolOpts{Kernel: [2]int{2, 2}}},
			{"k3s1p1", []int{2, 2, 5, 5}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Pad: [2]int{1, 1}}},
			{"k3s2p1", []int{2, 2, 7, 7}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
			{"k3s2_ceil", []int{1, 2, 6, 6}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, CeilMode: true}},
			{"k3s2p1_ceil", []int{1, 2, 6, 6}, nd.PoolOpts{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}},
			// The ceil-mode window that would start in the padding is dropped:
			// 5 rows, k2 s2 p1 gives 3 outputs, not 4.
			{"k2s2p1_ceil_drop", []int{1, 2, 5, 5}, nd.PoolOpts{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}},
			{"k2s2_ceil_partial", []int{2, 1, 5, 7}, nd.PoolOpts{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, CeilMode: true}},
			{"nonsquare", []int{2, 3, 6, 9}, nd.PoolOpts{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Pad: [2]int{1, 1}}},
			{"global", []int{2, 3, 5, 7}, nd.PoolOpts{Global: true}},
			{"global_kernel_ignored", []int{2, 3, 4, 4}, nd.PoolOpts{Global: true, Kernel: [2]int{2, 2}}},
		}
		for _, g := range geo {
			g.o.Type, g.o.CountIncludePad = typ.t.Type, typ.t.CountIncludePad
			g.name = typ.name + "_" + g.name
			cases = append(cases, g)
		}
	}
	tol := func(o nd.PoolOpts) confTols {
		if o.Type == nd.PoolMax {
			return confTolExact
		}
		return confTolDefault
	}
	for i, c := range cases {
		e.run("Pool2D/"+c.name, func(e confEnv) {
			x, xv := e.rand(uint64(1100+i), -1, 1, c.shape...)
			want, shape := refPool2D(xv, c.shape, c.o)
			e.check(nd.Pool2D(x, c.o), shape, want, tol(c.o))
		})
	}
	wrappers := []struct {
		name string
		op   func(x *nd.NDArray) *nd.NDArray
		o    nd.PoolOpts
	}{
		{"MaxPool2D", func(x *nd.NDArray) *nd.NDArray { return nd.MaxPool2D(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}) },
			nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		{"AvgPool2D", func(x *nd.NDArray) *nd.NDArray { return nd.AvgPool2D(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}) },
			nd.PoolOpts{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		{"GlobalMaxPool2D", nd.GlobalMaxPool2D, nd.PoolOpts{Type: nd.PoolMax, Global: true}},
		{"GlobalAvgPool2D", nd.GlobalAvgPool2D, nd.PoolOpts{Type: nd.PoolAvg, Global: true}},
	}
	for i, c := range wrappers {
		e.run(c.name, func(e confEnv) {
			shape := []int{2, 3, 7, 6}
			x, xv := e.rand(uint64(1200+i), -1, 1, shape...)
			want, oshape := refPool2D(xv, shape, c.o)
			e.check(c.op(x), oshape, want, tol(c.o))
		})
	}
}

// refBatchNorm normalises x per channel along axis. In training it uses
// the batch mean and biased variance and returns the updated running
// statistics (running = m*running + (1-m)*batch, with the unbiased batch
// variance); otherwise it uses and returns the running statistics.
func refBatchNorm(x []float64, shape []int, axis int, gamma, beta, rm, rv []float64, train bool, opts nd.BatchNormOpts) (y, nm, nv []float64) {
	ax := refAxis(axis, len(shape))
	outer, c, inner := refNumel(shape[:ax]), shape[ax], refNumel(shape[ax+1:])
	m := outer * inner
	at := func(o, ch, i int) int { return (o*c+ch)*inner + i }
	mean, variance := append([]float64{}, rm...), append([]float64{}, rv...)
	nm, nv = append([]float64{}, rm...), append([]float64{}, rv...)
	if train {
		for ch := range c {
			s := 0.0
			for o := range outer {
				for i := range inner {
					s += x[at(o, ch, i)]
				}
			}
			mu := s / float64(m)
			ss := 0.0
			for o := range outer {
				for i := range inner {
					d := x[at(o, ch, i)] - mu
					ss += d * d
				}
			}
			mean[ch], variance[ch] = mu, ss/float64(m)
			nm[ch] = opts.Momentum*rm[ch] + (1-opts.Momentum)*mu
			nv[ch] = opts.Momentum*rv[ch] + (1-opts.Momentum)*ss/float64(max(m-1, 1))
		}
	}
	y = make([]float64, len(x))
	for o := range outer {
		for ch := range c {
			for i := range inner {
				v := (x[at(o, ch, i)] - mean[ch]) / math.Sqrt(variance[ch]+opts.Eps)
				if gamma != nil {
					v *= gamma[ch]
				}
				if beta != nil {
					v += beta[ch]
				}
				y[at(o, ch, i)] = v
			}
		}
	}
	return y, nm, nv
}

// confBatchNorm checks BatchNorm in training mode (batch statistics and
// the running-statistics update) and in inference mode (running
// statistics, left unchanged), with and without gamma and beta, on the
// channel axis of 2-D and 4-D inputs.
func confBatchNorm(e confEnv) {
	cases := []struct {
		name       string
		shape      []int
		opts       nd.BatchNormOpts
		train      bool
		gammaBeta  bool
		globalOnly bool // UseGlobalStats in training mode
	}{
		{"train_2d", []int{8, 5}, nd.BatchNormOpts{}, true, true, false},
		{"train_4d", []int{4, 3, 5, 6}, nd.BatchNormOpts{}, true, true, false},
		{"train_4d_nil_gamma_beta", []int{4, 3, 5, 6}, nd.BatchNormOpts{}, true, false, false},
		{"train_4d_momentum_eps", []int{2, 4, 3, 3}, nd.BatchNormOpts{Momentum: 0.7, Eps: 1e-3}, true, true, false},
		{"train_2d_axis0", []int{3, 10}, nd.BatchNormOpts{Axis: 0, AxisSet: true}, true, true, false},
		{"train_4d_axis-1", []int{2, 3, 4, 5}, nd.BatchNormOpts{Axis: -1}, true, true, false},
		{"train_use_global_stats", []int{4, 3, 2, 2}, nd.BatchNormOpts{UseGlobalStats: true}, true, true, true},
		{"infer_2d", []int{8, 5}, nd.BatchNormOpts{}, false, true, false},
		{"infer_4d", []int{4, 3, 5, 6}, nd.BatchNormOpts{}, false, true, false},
		{"infer_4d_nil_gamma_beta", []int{4, 3, 5, 6}, nd.BatchNormOpts{}, false, false, false},
	}
	for i, c := range cases {
		e.run(c.name, func(e confEnv) {
			opts := c.opts
			if !opts.AxisSet && opts.Axis == 0 {
				opts.Axis = 1
			}
			if opts.Eps == 0 {
				opts.Eps = 1e-5
			}
			if opts.Momentum == 0 {
				opts.Momentum = 0.9
			}
			ch := c.shape[refAxis(opts.Axis, len(c.shape))]
			x, xv := e.rand(uint64(1300+10*i), -2, 3, c.shape...)
			rm, rmv := e.rand(uint64(1301+10*i), -0.5, 0.5, ch)
			rv, rvv := e.rand(uint64(1302+10*i), 0.5, 2, ch)
			var gamma, beta *nd.NDArray
			var gv, bv []float64
			if c.gammaBeta {
				gamma, gv = e.rand(uint64(1303+10*i), 0.5, 1.5, ch)
				beta, bv = e.rand(uint64(1304+10*i), -1, 1, ch)
			}
			useBatch := c.train && !c.globalOnly
			want, wm, wv := refBatchNorm(xv, c.shape, opts.Axis, gv, bv, rmv, rvv, useBatch, opts)
			var y *nd.NDArray
			if c.train {
				autograd.TrainMode(func() { y = nd.BatchNorm(x, gamma, beta, rm, rv, c.opts) })
			} else {
				y = nd.BatchNorm(x, gamma, beta, rm, rv, c.opts)
			}
			e.check(y, c.shape, want, confTolDefault)
			e.run("running_mean", func(e confEnv) { e.check(rm, []int{ch}, wm, confTolDefault) })
			e.run("running_var", func(e confEnv) { e.check(rv, []int{ch}, wv, confTolDefault) })
		})
	}
}

// confBiasRelu checks BiasRelu = max(x + bias, 0) along an axis, on long
// runs (NCHW, 9×13 planes), short ones ([N, C]) and the first axis.
func confBiasRelu(e confEnv) {
	for i, c := range []struct {
		name  string
		shape []int
		axis  int
	}{
		{"nchw", []int{3, 4, 9, 13}, 1},
		{"dense", []int{5, 19}, 1},
		{"axis0", []int{6, 2, 21}, 0},
		{"last_axis", []int{2, 7, 3}, -1},
	} {
		e.run(c.name, func(e confEnv) {
			ax := (c.axis + len(c.shape)) % len(c.shape)
			x, xv := e.rand(uint64(1500+2*i), -1, 1, c.shape...)
			b, bv := e.rand(uint64(1501+2*i), -0.5, 0.5, c.shape[ax])
			inner := refNumel(c.shape[ax+1:])
			want := make([]float64, len(xv))
			for j, v := range xv {
				want[j] = math.Max(v+bv[(j/inner)%c.shape[ax]], 0)
			}
			e.check(nd.BiasRelu(x, b, c.axis), c.shape, want, confTolDefault)
		})
	}
}

// confDropout checks that Dropout is the identity outside training, and
// that in training it drops a fraction p of 100k elements, scales the rest
// by 1/(1-p), and draws the same mask for the same seed.
func confDropout(e confEnv) {
	const n = 100000
	x, xv := e.rand(1400, 1, 2, n) // no zeros: a zero output means dropped
	e.run("predict_identity", func(e confEnv) {
		e.check(nd.Dropout(x, 0.5), []int{n}, xv, confTolExact)
		autograd.PredictMode(func() { e.check(nd.Dropout(x, 0.3), []int{n}, xv, confTolExact) })
	})
	e.run("train_p0_identity", func(e confEnv) {
		var y *nd.NDArray
		autograd.TrainMode(func() { y = nd.Dropout(x, 0) })
		e.check(y, []int{n}, xv, confTolExact)
	})
	train := func(p float64, seed uint64) *nd.NDArray {
		var y *nd.NDArray
		nd.Seed(seed)
		autograd.TrainMode(func() { y = nd.Dropout(x, p) })
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

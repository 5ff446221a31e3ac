package ndtest

// The cases for the ops of nd/batchnorm.go (and its fused kernels,
// nd/batchnorm_fused.go): BatchNorm.

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// refBatchNorm normalises x per channel along axis. In training it uses
// the batch mean and biased variance and returns the updated running
// statistics (running = m*running + (1-m)*batch, with the unbiased batch
// variance); otherwise it uses and returns the running statistics.
func refBatchNorm(x []float64, shape []int, axis int, gamma, beta, rm, rv []float64, train bool, opts nd.BatchNormOpts) (y, nm, nv []float64) {
	_, eps, momentum := opts.Resolved()
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
			nm[ch] = momentum*rm[ch] + (1-momentum)*mu
			nv[ch] = momentum*rv[ch] + (1-momentum)*ss/float64(max(m-1, 1))
		}
	}
	y = make([]float64, len(x))
	for o := range outer {
		for ch := range c {
			for i := range inner {
				v := (x[at(o, ch, i)] - mean[ch]) / math.Sqrt(variance[ch]+eps)
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
		{"train_4d_momentum_eps", []int{2, 4, 3, 3}, nd.BatchNormOpts{Momentum: new(0.7), Epsilon: new(1e-3)}, true, true, false},
		{"train_4d_momentum0", []int{2, 4, 3, 3}, nd.BatchNormOpts{Momentum: new(0.0)}, true, true, false}, // the batch's statistics
		{"train_2d_axis0", []int{3, 10}, nd.BatchNormOpts{Axis: new(0)}, true, true, false},
		{"train_4d_axis-1", []int{2, 3, 4, 5}, nd.BatchNormOpts{Axis: new(-1)}, true, true, false},
		{"train_use_global_stats", []int{4, 3, 2, 2}, nd.BatchNormOpts{UseGlobalStats: true}, true, true, true},
		{"infer_2d", []int{8, 5}, nd.BatchNormOpts{}, false, true, false},
		{"infer_4d", []int{4, 3, 5, 6}, nd.BatchNormOpts{}, false, true, false},
		{"infer_4d_nil_gamma_beta", []int{4, 3, 5, 6}, nd.BatchNormOpts{}, false, false, false},
	}
	for i, c := range cases {
		e.run(c.name, func(e confEnv) {
			opts := c.opts
			axis, _, _ := opts.Resolved()
			ch := c.shape[refAxis(axis, len(c.shape))]
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
			want, wm, wv := refBatchNorm(xv, c.shape, axis, gv, bv, rmv, rvv, useBatch, opts)
			var y *nd.NDArray
			if c.train {
				nd.DefaultSession().TrainMode(func() { y = nd.BatchNorm(x, gamma, beta, rm, rv, c.opts) })
			} else {
				y = nd.BatchNorm(x, gamma, beta, rm, rv, c.opts)
			}
			e.check(y, c.shape, want, confTolDefault)
			e.run("running_mean", func(e confEnv) { e.check(rm, []int{ch}, wm, confTolDefault) })
			e.run("running_var", func(e confEnv) { e.check(rv, []int{ch}, wv, confTolDefault) })
		})
	}
}

// gradBatchNormCases checks BatchNorm in training mode (batch statistics,
// whose gradient couples every sample of a channel) and in inference mode
// (running statistics), on [N, C] and NCHW inputs, with and without gamma
// and beta, and with other channel axes. The running mean and variance
// are inputs without gradient; training mode updates them in place on
// every evaluation, which does not change the output.
func gradBatchNormCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range []struct {
		name        string
		shape       []int
		o           nd.BatchNormOpts
		train       bool
		gamma, beta bool
	}{
		{"train/2-D", []int{6, 3}, nd.BatchNormOpts{}, true, true, true},
		{"train/4-D", []int{2, 3, 3, 3}, nd.BatchNormOpts{}, true, true, true},
		{"train/2-D/no-gamma-beta", []int{6, 3}, nd.BatchNormOpts{}, true, false, false},
		{"train/4-D/no-gamma-beta", []int{2, 3, 3, 3}, nd.BatchNormOpts{}, true, false, false},
		{"train/4-D/gamma-only", []int{2, 3, 3, 3}, nd.BatchNormOpts{}, true, true, false},
		{"train/4-D/beta-only", []int{2, 3, 3, 3}, nd.BatchNormOpts{}, true, false, true},
		{"train/4-D/axis-last", []int{2, 3, 3, 3}, nd.BatchNormOpts{Axis: new(-1)}, true, true, true},
		{"train/2-D/axis-0", []int{3, 6}, nd.BatchNormOpts{Axis: new(0)}, true, true, true},
		{"train/3-D", []int{2, 3, 4}, nd.BatchNormOpts{}, true, true, true},
		{"train/use-global-stats", []int{2, 3, 3, 3}, nd.BatchNormOpts{UseGlobalStats: true}, true, true, true},
		{"infer/2-D", []int{6, 3}, nd.BatchNormOpts{}, false, true, true},
		{"infer/4-D", []int{2, 3, 3, 3}, nd.BatchNormOpts{}, false, true, true},
		{"infer/2-D/no-gamma-beta", []int{6, 3}, nd.BatchNormOpts{}, false, false, false},
		{"infer/4-D/no-gamma-beta", []int{2, 3, 3, 3}, nd.BatchNormOpts{}, false, false, false},
		{"infer/4-D/axis-last", []int{2, 3, 3, 3}, nd.BatchNormOpts{Axis: new(-1)}, false, true, true},
	} {
		seed := 300 + 10*uint64(i)
		ax, _, _ := c.o.Resolved()
		ax = (ax + len(c.shape)) % len(c.shape)
		ch := c.shape[ax]
		gc := gradCase{op: "BatchNorm", name: c.name, tol: GradTol{Train: c.train}}
		gc.in = func() []*nd.NDArray {
			in := gradIn(Rand(dev, seed, -2, 2, c.shape...))
			if c.gamma {
				in = append(in, gradPositive(dev, seed+1, ch))
			}
			if c.beta {
				in = append(in, gradSigned(dev, seed+2, ch))
			}
			return append(in, gradSigned(dev, seed+3, ch), gradPositive(dev, seed+4, ch))
		}
		n := 1
		if c.gamma {
			n++
		}
		if c.beta {
			n++
		}
		gc.noGrad = []int{n, n + 1}
		gc.f = func(in []*nd.NDArray) *nd.NDArray {
			var gamma, beta *nd.NDArray
			j := 1
			if c.gamma {
				gamma = in[j]
				j++
			}
			if c.beta {
				beta = in[j]
				j++
			}
			return nd.BatchNorm(in[0], gamma, beta, in[j], in[j+1], c.o)
		}
		cases = append(cases, gc)
	}
	return cases
}

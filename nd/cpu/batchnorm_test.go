package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestBatchNormKernels checks the AVX2/FMA batch-norm kernels against the
// plain loops for every length up to 40 (all tails): the float64 sums to
// 1e-12 (they add in another order) and the affine maps to 1e-6 relative
// (a fused multiply-add rounds once where the loops round twice).
func TestBatchNormKernels(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: only the plain loops exist here")
	}
	defer func() { useAsmKernel = true }()
	r := rand.New(rand.NewPCG(31, 32))
	for n := 1; n <= 40; n++ {
		x, y, g := randSlice(n, r), randSlice(n, r), randSlice(n, r)
		a, b, c := float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
		type result struct {
			sx, sxy float64
			ss, ax  []float32
		}
		run := func(asm bool) result {
			useAsmKernel = asm
			var res result
			res.sx, res.sxy = sums(x, y)
			res.ss, res.ax = make([]float32, n), make([]float32, n)
			affine(res.ss, nil, x, 0, b, c)
			affine(res.ax, g, x, a, b, c)
			return res
		}
		got, want := run(true), run(false)
		near := func(p, q, tol float64) bool { return math.Abs(p-q) <= tol*(1+math.Abs(q)) }
		if !near(got.sx, want.sx, 1e-12) || !near(got.sxy, want.sxy, 1e-12) {
			t.Fatalf("n=%d: sums %v, %v; want %v, %v", n, got.sx, got.sxy, want.sx, want.sxy)
		}
		for i := range n {
			if !near(float64(got.ss[i]), float64(want.ss[i]), 1e-6) || !near(float64(got.ax[i]), float64(want.ax[i]), 1e-6) {
				t.Fatalf("n=%d [%d]: affine %v, %v; want %v, %v", n, i, got.ss[i], got.ax[i], want.ss[i], want.ax[i])
			}
		}
	}
}

// TestBatchNormApplyShortRuns: bnApply on planes of fewer than
// bnShortRun values (whole rows through fmaF32) gives the bits of the
// per-run scaleShiftF32 calls, for every plane size that matters and
// channel counts off the vector width.
func TestBatchNormApplyShortRuns(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the plain loops run")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct{ outer, ch, inner int }{
		{5, 3, 1}, {4, 64, 1}, {3, 7, 4}, {2, 17, 16}, {3, 5, 100}, {1, 2, bnShortRun - 1}, {0, 3, 4},
	} {
		p := backend.ChannelParams{Outer: c.outer, C: c.ch, Inner: c.inner}
		n := c.outer * c.ch * c.inner
		x := randSlice(n, r)
		if n > 0 {
			x[0], x[n-1] = float32(math.NaN()), float32(math.Inf(-1))
		}
		mean, invstd := randSlice(c.ch, r), randSlice(c.ch, r)
		gamma, beta := randSlice(c.ch, r), randSlice(c.ch, r)
		got, want := make([]float32, n), make([]float32, n)
		bnApply(p, got, x, mean, invstd, gamma, beta, false)
		for o := range c.outer {
			for ch := range c.ch {
				s := float64(invstd[ch]) * float64(gamma[ch])
				run := want[(o*c.ch+ch)*c.inner:][:c.inner]
				scaleShiftF32k(&run[0], &x[(o*c.ch+ch)*c.inner], c.inner, float32(s), float32(float64(beta[ch])-float64(mean[ch])*s))
			}
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v [%d] = %v, per run %v", c, i, got[i], want[i])
			}
		}
	}
}

// TestBatchNormShortRunsBackward: for runs shorter than bnShortRun the
// input gradient made a row at a time has the bits of the per-run affine
// calls, with and without batch statistics, on inputs with ±0, NaN and
// ±Inf, for a batch of one split into pieces, and with dx written over g
// (the per-run kernels then run).
func TestBatchNormShortRunsBackward(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the plain loops run")
	}
	r := rand.New(rand.NewPCG(43, 44))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, c := range []struct{ outer, ch, inner int }{
		{5, 3, 1}, {4, 64, 1}, {3, 7, 4}, {2, 17, 16}, {3, 5, 100}, {0, 3, 4}, {1, 1024, 64},
	} {
		p := backend.ChannelParams{Outer: c.outer, C: c.ch, Inner: c.inner}
		n := c.outer * c.ch * c.inner
		g, x, coef := randSlice(n, r), randSlice(n, r), randSlice(3*c.ch, r)
		for i := 0; i < n; i += 7 {
			g[i], x[(i*3)%n] = special[i%len(special)], special[(i/7)%len(special)]
		}
		coef[0], coef[len(coef)-1] = 0, float32(math.Copysign(0, -1))
		for _, batchStats := range []bool{true, false} {
			got, want := make([]float32, n), make([]float32, n)
			bnBackwardRows(p, batchStats, got, g, x, coef)
			for o := range c.outer {
				for ch := range c.ch {
					d, gr, xr := channelRun(p, want, o, ch), channelRun(p, g, o, ch), channelRun(p, x, o, ch)
					if batchStats {
						affine(d, gr, xr, coef[3*ch], coef[3*ch+1], coef[3*ch+2])
					} else {
						affine(d, nil, gr, 0, coef[3*ch], 0)
					}
				}
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v batchStats=%v [%d] = %v, per run %v", c, batchStats, i, got[i], want[i])
				}
			}
		}
	}
	// dx over g, through BatchNormBackward's own dispatch.
	p := backend.ChannelParams{Outer: 6, C: 5, Inner: 4}
	n := 6 * 5 * 4
	g, x := randSlice(n, r), randSlice(n, r)
	mean, invstd, gamma := randSlice(5, r), randSlice(5, r), randSlice(5, r)
	dg, db := make([]float32, 5), make([]float32, 5)
	want := make([]float32, n)
	bnBackward(p, true, want, dg, db, g, x, mean, invstd, gamma)
	bnBackward(p, true, g, dg, db, g, x, mean, invstd, gamma)
	for i := range want {
		if math.Float32bits(g[i]) != math.Float32bits(want[i]) {
			t.Fatalf("dx written over g: [%d] = %v, want %v", i, g[i], want[i])
		}
	}
}

// TestBatchNormShortSums: for runs shorter than bnShortSums the one-pass
// channel sums equal the per-run ones to float64 rounding, at every
// instruction level (the one-pass loop is Go).
func TestBatchNormShortSums(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range []struct{ outer, ch, inner int }{
		{5, 3, 1}, {4, 64, 1}, {3, 7, 4}, {2, 17, 15}, {0, 3, 4}, {3, 0, 2},
	} {
		p := backend.ChannelParams{Outer: c.outer, C: c.ch, Inner: c.inner}
		n := c.outer * c.ch * c.inner
		a, b := randSlice(n, r), randSlice(n, r)
		for _, lohi := range [][2]int{{0, c.ch}, {c.ch / 3, c.ch}} {
			seen := 0
			bnSumsRange(p, a, b, lohi[0], lohi[1], func(ch int, sa, sab float64) {
				if ch != lohi[0]+seen {
					t.Fatalf("%+v: channel %d out of order", c, ch)
				}
				seen++
				wa, wab := bnSums(p, a, b, ch)
				if math.Abs(sa-wa) > 1e-12*(1+math.Abs(wa)) || math.Abs(sab-wab) > 1e-12*(1+math.Abs(wab)) {
					t.Fatalf("%+v channel %d: sums %v, %v; per run %v, %v", c, ch, sa, sab, wa, wab)
				}
			})
			if seen != lohi[1]-lohi[0] {
				t.Fatalf("%+v: %d channels summed", c, seen)
			}
		}
	}
}

// TestBiasReluKernels runs the fused bias + ReLU forward and backward
// passes with the AVX2 kernels and with the plain loops, on long runs and
// on [N, C] rows, with NaN, ±0 and ±Inf among the inputs: outputs and input
// gradients must agree bit for bit, bias gradients (float64 sums in
// another order, rounded to float32) to 1e-6.
func TestBiasReluKernels(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: only the plain loops exist here")
	}
	defer func() { useAsmKernel = true }()
	r := rand.New(rand.NewPCG(41, 42))
	for _, p := range []backend.ChannelParams{
		{Outer: 3, C: 4, Inner: 37},
		{Outer: 9, C: 21, Inner: 1},
		{Outer: 5, C: 3, Inner: 2},
	} {
		n := p.Outer * p.C * p.Inner
		x, g, b := vecInputs(r, n), vecInputs(r, n), randSlice(p.C, r)
		run := func(asm bool) (y, dx []float32, db []float32) {
			useAsmKernel = asm
			y, dx, db = make([]float32, n), make([]float32, n), make([]float32, p.C)
			biasRelu(p, y, x, b)
			biasReluBackward(p, dx, db, g, y)
			return y, dx, db
		}
		y1, dx1, db1 := run(true)
		y2, dx2, db2 := run(false)
		for i := range y1 {
			if !sameBits(y1[i], y2[i]) || !sameBits(dx1[i], dx2[i]) {
				t.Fatalf("%+v [%d]: kernels y=%v dx=%v, loops y=%v dx=%v", p, i, y1[i], dx1[i], y2[i], dx2[i])
			}
		}
		for c := range db1 {
			w := float64(db2[c])
			if d := math.Abs(float64(db1[c]) - w); d > 1e-6*(1+math.Abs(w)) && !(math.IsNaN(w) || math.IsInf(w, 0)) {
				t.Fatalf("%+v: dbias[%d] kernels %v, loops %v", p, c, db1[c], db2[c])
			}
		}
	}
}

// TestBatchNormApplyRelu checks the fused normalisation + ReLU against
// BatchNormApply followed by Unary's Relu, bit for bit, on short runs
// (rows) and long ones, both dtypes, with NaN, ±0 and ±Inf inputs and
// shifts that land values on −0.
func TestBatchNormApplyRelu(t *testing.T) {
	be := New()
	r := rand.New(rand.NewPCG(43, 44))
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, c := range []struct{ outer, ch, inner int }{
			{5, 3, 1}, {3, 7, 4}, {2, 17, 16}, {2, 3, 200}, {1, 2, bnShortRun + 5}, {0, 3, 4},
		} {
			p := backend.ChannelParams{Outer: c.outer, C: c.ch, Inner: c.inner, DType: dt}
			n := c.outer * c.ch * c.inner
			arg := func(m int, f func(i int) float64) backend.Arg { return newArg(t, be, dt, m, f) }
			x := arg(n, func(i int) float64 {
				switch i % 11 {
				case 0:
					return math.NaN()
				case 1:
					return math.Copysign(0, -1)
				case 2:
					return math.Inf(1 - 2*(i%2))
				}
				return float64(r.IntN(9)-4) / 2
			})
			mean := arg(c.ch, func(int) float64 { return float64(r.IntN(5)-2) / 2 })
			invstd := arg(c.ch, func(int) float64 { return 1 + float64(r.IntN(3)) })
			gamma := arg(c.ch, func(int) float64 { return float64(r.IntN(5) - 2) })
			beta := arg(c.ch, func(int) float64 { return float64(r.IntN(5)-2) / 2 })
			got, want := arg(n, func(int) float64 { return 7 }), arg(n, func(int) float64 { return 7 })
			be.BatchNormApplyRelu(p, got, x, mean, invstd, gamma, beta)
			be.BatchNormApply(p, want, x, mean, invstd, gamma, beta)
			be.Unary(backend.Relu, want, want, n, 0, 0)
			for i := range n {
				if g, w := argBits(got, i), argBits(want, i); g != w {
					t.Fatalf("%v %+v [%d]: fused %#x, two passes %#x", dt, c, i, g, w)
				}
			}
		}
	}
}

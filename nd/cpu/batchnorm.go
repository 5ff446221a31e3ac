package cpu

import "github.com/goluon/goluon/nd/backend"

// Fused batch normalisation (backend.BatchNormKernels). The statistics and
// the parameter gradients are per-channel sums, accumulated in float64 in
// one pass over the channel's runs (Σx and Σx² for the variance, Σg and
// Σg·x for the gradients), in parallel over channels; applying the
// normalisation and the input gradient are one pass each, in parallel over
// runs, as y = s·x + t and dx = a·g + b·x + c with per-channel
// coefficients. The composed ops in package nd took about 15 passes over
// the array forward and 20 backward.

var _ backend.BatchNormKernels = (*Backend)(nil)

// bnSums returns Σx and Σx·y over a channel's runs of x and y.
func bnSums[T Float](p backend.ChannelParams, x, y []T, c int) (sx, sxy float64) {
	for o := 0; o < p.Outer; o++ {
		a, b := channelRun(p, x, o, c), channelRun(p, y, o, c)
		s1, s2 := sums(a, b)
		sx += s1
		sxy += s2
	}
	return sx, sxy
}

// sums returns Σa and Σa·b in float64 (AVX2 for float32).
func sums[T Float](a, b []T) (sa, sab float64) {
	if af, ok := asF32(a); ok && useAsmKernel && len(a) > 0 {
		bf, _ := asF32(b)
		return bnSumsF32k(&af[0], &bf[:len(af)][0], len(af))
	}
	b = b[:len(a)]
	for i, v := range a {
		sa += float64(v)
		sab += float64(v) * float64(b[i])
	}
	return sa, sab
}

// BatchNormStats implements backend.BatchNormKernels.
func (*Backend) BatchNormStats(p backend.ChannelParams, mean, variance, x backend.Arg) {
	if isF64(x) {
		bnStats(p, slice[float64](mean), slice[float64](variance), slice[float64](x))
	} else {
		bnStats(p, slice[float32](mean), slice[float32](variance), slice[float32](x))
	}
}

func bnStats[T Float](p backend.ChannelParams, mean, variance, x []T) {
	m := float64(p.Outer * p.Inner)
	parallelFor(p.C, 1, func(lo, hi int) {
		bnSumsRange(p, x, x, lo, hi, func(c int, sx, sxx float64) {
			mu := sx / m
			mean[c] = T(mu)
			variance[c] = T(max(sxx/m-mu*mu, 0))
		})
	})
}

// bnShortSums is the run length below which bnSumsRange adds a range of
// channels' values in one pass over the rows instead of one kernel call
// per run (a ResNet's 2×2 and 1×1 planes made a call per 4 or 1 values).
const bnShortSums = 16

// bnSumsRange calls fn with Σx and Σx·y of each channel in [lo, hi): per
// run with the sums kernel, or for short runs in one pass over the rows,
// adding each channel's values in order (a fixed order, so reproducible,
// but not the per-run kernel's).
func bnSumsRange[T Float](p backend.ChannelParams, x, y []T, lo, hi int, fn func(c int, sx, sxy float64)) {
	if p.Inner >= bnShortSums || hi <= lo {
		for c := lo; c < hi; c++ {
			sx, sxy := bnSums(p, x, y, c)
			fn(c, sx, sxy)
		}
		return
	}
	acc := make([]float64, 2*(hi-lo))
	row := p.C * p.Inner
	for o := 0; o < p.Outer; o++ {
		xs := x[o*row+lo*p.Inner : o*row+hi*p.Inner]
		ys := y[o*row+lo*p.Inner : o*row+hi*p.Inner]
		for k := range hi - lo {
			sx, sxy := acc[2*k], acc[2*k+1]
			for i := k * p.Inner; i < (k+1)*p.Inner; i++ {
				v := float64(xs[i])
				sx += v
				sxy += v * float64(ys[i])
			}
			acc[2*k], acc[2*k+1] = sx, sxy
		}
	}
	for k := range hi - lo {
		fn(lo+k, acc[2*k], acc[2*k+1])
	}
}

// BatchNormApply implements backend.BatchNormKernels.
func (*Backend) BatchNormApply(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	batchNormApply(p, y, x, mean, invstd, gamma, beta, false)
}

// BatchNormApplyRelu implements backend.BatchNormReluKernels: the ReLU
// runs on each run (or row piece) right after its values are written,
// while they are in cache.
func (*Backend) BatchNormApplyRelu(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	batchNormApply(p, y, x, mean, invstd, gamma, beta, true)
}

func batchNormApply(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg, relu bool) {
	if isF64(x) {
		bnApply(p, slice[float64](y), slice[float64](x), slice[float64](mean), slice[float64](invstd), optSlice[float64](gamma), optSlice[float64](beta), relu)
	} else {
		bnApply(p, slice[float32](y), slice[float32](x), slice[float32](mean), slice[float32](invstd), optSlice[float32](gamma), optSlice[float32](beta), relu)
	}
}

// optSlice is slice for an operand that may be absent (nil Buf).
func optSlice[T Float](a backend.Arg) []T {
	if a.Buf == nil {
		return nil
	}
	return slice[T](a)
}

// at returns s[c], or def when s is absent.
func at[T Float](s []T, c int, def float64) float64 {
	if s == nil {
		return def
	}
	return float64(s[c])
}

func bnApply[T Float](p backend.ChannelParams, y, x, mean, invstd, gamma, beta []T, relu bool) {
	scale, shift := scratch[T](p.C), scratch[T](p.C)
	defer release(scale)
	defer release(shift)
	for c := 0; c < p.C; c++ {
		s := float64(invstd[c]) * at(gamma, c, 1)
		scale[c] = T(s)
		shift[c] = T(at(beta, c, 0) - float64(mean[c])*s)
	}
	if yf, ok := asF32(y); ok && useAsmKernel && p.Inner < bnShortRun {
		xf, _ := asF32(x)
		sf, _ := asF32(scale)
		tf, _ := asF32(shift)
		bnApplyRows(p, yf, xf, sf, tf, relu)
		return
	}
	channelRuns(p, func(o, c int) {
		yr := channelRun(p, y, o, c)
		affine(yr, nil, channelRun(p, x, o, c), 0, scale[c], shift[c])
		if relu {
			unaryRange(backend.Relu, nil, yr, yr, 0, 0)
		}
	})
}

// sameStart reports whether a and b start at the same element.
func sameStart[T Float](a, b []T) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

// bnShortRun is the run length (values per channel and outer index: a
// plane) below which bnApply works a whole outer row at a time: a ResNet's
// 4×4, 2×2 and 1×1 planes made one kernel call per 16, 4 or 1 values.
const bnShortRun = 128

// bnBackwardRows is bnBackward's input gradient for short runs, one row
// at a time: dx = a·g + (b·x + c) as two FMA passes (b·x + c, then a·g
// added), the operations of axpbycF32; without batch statistics dx = a·g
// + 0, those of scaleShiftF32.
func bnBackwardRows(p backend.ChannelParams, batchStats bool, dx, g, x, coef []float32) {
	row := p.C * p.Inner
	if row == 0 || p.Outer == 0 {
		return
	}
	a, b, c := scratch[float32](row), scratch[float32](row), scratch[float32](row)
	defer release(a)
	defer release(b)
	defer release(c)
	for ch := 0; ch < p.C; ch++ {
		for i := ch * p.Inner; i < (ch+1)*p.Inner; i++ {
			a[i], b[i], c[i] = coef[3*ch], coef[3*ch+1], coef[3*ch+2]
			if !batchStats {
				c[i] = 0
			}
		}
	}
	_, _, _ = dx[p.Outer*row-1], g[p.Outer*row-1], x[p.Outer*row-1]
	rowPieces(p.Outer, row, func(o, lo, hi int) {
		d, n := &dx[o*row+lo], hi-lo
		if !batchStats { // x plays no part (not even as 0·x)
			fmaF32k(d, &g[o*row+lo], &a[lo], &c[lo], n)
			return
		}
		fmaF32k(d, &x[o*row+lo], &b[lo], &c[lo], n)
		fmaF32k(d, &g[o*row+lo], &a[lo], d, n)
	})
}

// bnApplyRows is bnApply's float32 loop for short runs: each channel's
// scale and shift spread over its run, one FMA kernel call per outer row,
// the same operation on each value as scaleShiftF32; then the ReLU on each
// piece when relu.
func bnApplyRows(p backend.ChannelParams, y, x, scale, shift []float32, relu bool) {
	row := p.C * p.Inner
	if row == 0 || p.Outer == 0 {
		return
	}
	s, t := scratch[float32](row), scratch[float32](row)
	defer release(s)
	defer release(t)
	for c := 0; c < p.C; c++ {
		for i := c * p.Inner; i < (c+1)*p.Inner; i++ {
			s[i], t[i] = scale[c], shift[c]
		}
	}
	_, _ = y[p.Outer*row-1], x[p.Outer*row-1]
	rowPieces(p.Outer, row, func(o, lo, hi int) {
		fmaF32k(&y[o*row+lo], &x[o*row+lo], &s[lo], &t[lo], hi-lo)
		if relu {
			yr := y[o*row+lo : o*row+hi]
			unaryRange(backend.Relu, nil, yr, yr, 0, 0)
		}
	})
}

// rowPieces calls fn for pieces [lo, hi) of rows rows of n values, in
// parallel: whole rows, or pieces of them when there are too few rows to
// keep every worker busy (a batch of one).
func rowPieces(rows, n int, fn func(o, lo, hi int)) {
	pieces := 1
	if rows < workers() {
		pieces = max(1, min(ceilDiv(workers(), rows), n/elemGrain))
	}
	size := ceilDiv(n, pieces)
	parallelFor(rows*pieces, max(1, elemGrain/n), func(a, b int) {
		for k := a; k < b; k++ {
			o, lo := k/pieces, k%pieces*size
			if hi := min(lo+size, n); lo < hi {
				fn(o, lo, hi)
			}
		}
	})
}

// affine sets d = a·g + b·x + c (g may be nil: d = b·x + c), with FMA
// AVX2 kernels for float32.
func affine[T Float](d, g, x []T, a, b, c T) {
	if df, ok := asF32(d); ok && useAsmKernel && len(d) > 0 {
		xf, _ := asF32(x)
		if g == nil {
			scaleShiftF32k(&df[0], &xf[:len(df)][0], len(df), float32(b), float32(c))
			return
		}
		gf, _ := asF32(g)
		axpbycF32k(&df[0], &gf[:len(df)][0], &xf[:len(df)][0], len(df), float32(a), float32(b), float32(c))
		return
	}
	x = x[:len(d)]
	if g == nil {
		for i, v := range x {
			d[i] = b*v + c
		}
		return
	}
	g = g[:len(d)]
	for i, v := range x {
		d[i] = a*g[i] + (b*v + c)
	}
}

// BatchNormBackward implements backend.BatchNormKernels.
func (*Backend) BatchNormBackward(p backend.ChannelParams, batchStats bool, dx, dgamma, dbeta, g, x, mean, invstd, gamma backend.Arg) {
	if isF64(x) {
		bnBackward(p, batchStats, optSlice[float64](dx), slice[float64](dgamma), slice[float64](dbeta), slice[float64](g), slice[float64](x), slice[float64](mean), slice[float64](invstd), optSlice[float64](gamma))
	} else {
		bnBackward(p, batchStats, optSlice[float32](dx), slice[float32](dgamma), slice[float32](dbeta), slice[float32](g), slice[float32](x), slice[float32](mean), slice[float32](invstd), optSlice[float32](gamma))
	}
}

func bnBackward[T Float](p backend.ChannelParams, batchStats bool, dx, dgamma, dbeta, g, x, mean, invstd, gamma []T) {
	m := float64(p.Outer * p.Inner)
	// Per channel: dx = a·g + b·x + c.
	coef := scratch[T](3 * p.C)
	defer release(coef)
	parallelFor(p.C, 1, func(lo, hi int) {
		bnSumsRange(p, g, x, lo, hi, func(c int, sg, sgx float64) {
			mu, is := float64(mean[c]), float64(invstd[c])
			db := sg
			dg := is * (sgx - mu*sg) // Σ g·x̂
			dbeta[c], dgamma[c] = T(db), T(dg)
			k := at(gamma, c, 1) * is
			a, b, cc := k, 0.0, 0.0
			if batchStats {
				// k·(g − (Σg + x̂·Σg·x̂)/M) with x̂ = (x − μ)·invstd.
				b = -k * is * dg / m
				cc = k * (is*dg*mu - db) / m
			}
			coef[3*c], coef[3*c+1], coef[3*c+2] = T(a), T(b), T(cc)
		})
	})
	if dx == nil {
		return
	}
	// The row kernels write b·x + c into dx before reading g, so an input
	// gradient written over g keeps the per-run kernels (which read each g
	// before writing its dx).
	if df, ok := asF32(dx); ok && useAsmKernel && p.Inner < bnShortRun && !sameStart(dx, g) {
		gf, _ := asF32(g)
		xf, _ := asF32(x)
		cf, _ := asF32(coef)
		bnBackwardRows(p, batchStats, df, gf, xf, cf)
		return
	}
	channelRuns(p, func(o, c int) {
		d, gr := channelRun(p, dx, o, c), channelRun(p, g, o, c)
		if !batchStats { // dx = k·g: x plays no part (not even as 0·x)
			affine(d, nil, gr, 0, coef[3*c], 0)
			return
		}
		affine(d, gr, channelRun(p, x, o, c), coef[3*c], coef[3*c+1], coef[3*c+2])
	})
}

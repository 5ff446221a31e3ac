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
		for c := lo; c < hi; c++ {
			sx, sxx := bnSums(p, x, x, c)
			mu := sx / m
			mean[c] = T(mu)
			variance[c] = T(max(sxx/m-mu*mu, 0))
		}
	})
}

// BatchNormApply implements backend.BatchNormKernels.
func (*Backend) BatchNormApply(p backend.ChannelParams, y, x, mean, invstd, gamma, beta backend.Arg) {
	if isF64(x) {
		bnApply(p, slice[float64](y), slice[float64](x), slice[float64](mean), slice[float64](invstd), optSlice[float64](gamma), optSlice[float64](beta))
	} else {
		bnApply(p, slice[float32](y), slice[float32](x), slice[float32](mean), slice[float32](invstd), optSlice[float32](gamma), optSlice[float32](beta))
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

func bnApply[T Float](p backend.ChannelParams, y, x, mean, invstd, gamma, beta []T) {
	scale, shift := scratch[T](p.C), scratch[T](p.C)
	defer release(scale)
	defer release(shift)
	for c := 0; c < p.C; c++ {
		s := float64(invstd[c]) * at(gamma, c, 1)
		scale[c] = T(s)
		shift[c] = T(at(beta, c, 0) - float64(mean[c])*s)
	}
	channelRuns(p, func(o, c int) {
		affine(channelRun(p, y, o, c), nil, channelRun(p, x, o, c), 0, scale[c], shift[c])
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
		for c := lo; c < hi; c++ {
			sg, sgx := bnSums(p, g, x, c)
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
		}
	})
	if dx == nil {
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

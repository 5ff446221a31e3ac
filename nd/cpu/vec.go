package cpu

import "github.com/goluon/goluon/nd/backend"

// This file routes contiguous float32 elementwise work to the AVX2 kernels
// of vec_amd64.s (through the variables of kernels512_amd64.go, which hold
// their ZMM twins when the level is AVX-512) and keeps plain slice loops
// (no index arithmetic, bounds checks hoisted) for float64 and for CPUs
// without AVX2. The strided loops in elementwise.go remain for everything
// else.

// asF32 returns s as []float32 when T is float32.
func asF32[T Float](s []T) ([]float32, bool) {
	f, ok := any(s).([]float32)
	return f, ok
}

// asF32s is s as []float32 for callers that know T is float32.
func asF32s[T Float](s []T) []float32 {
	f, ok := asF32(s)
	if !ok {
		panic("cpu: asF32s of a float64 slice")
	}
	return f
}

// isFloat32 reports whether T is float32.
func isFloat32[T Float]() bool {
	_, ok := asF32([]T(nil))
	return ok
}

// vecBinary computes d = a op b over equal-length contiguous slices with an
// AVX2 kernel; it reports false when there is none for op and T.
func vecBinary[T Float](op backend.BinaryOp, d, a, b []T) bool {
	df, ok := asF32(d)
	if !ok || !useAsmKernel || len(d) == 0 {
		return false
	}
	af, _ := asF32(a)
	bf, _ := asF32(b)
	af, bf = af[:len(df)], bf[:len(df)]
	var k func(d, a, b *float32, n int)
	switch op {
	case backend.Add:
		k = addF32k
	case backend.Sub:
		k = subF32k
	case backend.Mul:
		k = mulF32k
	case backend.Div:
		k = divF32k
	case backend.ReluGrad:
		k = reluGradF32k
	default:
		return false
	}
	k(&df[0], &af[0], &bf[0], len(df))
	return true
}

// vecScalar computes d = a op s with an AVX2 kernel, or reports false.
func vecScalar[T Float](op backend.BinaryOp, d, a []T, s T) bool {
	df, ok := asF32(d)
	if !ok || !useAsmKernel || len(d) == 0 {
		return false
	}
	af, _ := asF32(a)
	af = af[:len(df)]
	var k func(d, a *float32, s float32, n int)
	switch op {
	case backend.Add:
		k = addScalarF32k
	case backend.Sub:
		k = subScalarF32k
	case backend.Mul:
		k = mulScalarF32k
	case backend.Div:
		k = divScalarF32k
	default:
		return false
	}
	k(&df[0], &af[0], float32(s), len(df))
	return true
}

// binaryContig computes d = op(a, b) over equal-length contiguous slices.
func binaryContig[T Float](op backend.BinaryOp, f func(a, b float64) float64, d, a, b []T) {
	if vecBinary(op, d, a, b) {
		return
	}
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case backend.Add:
		for j := range d {
			d[j] = a[j] + b[j]
		}
	case backend.Sub:
		for j := range d {
			d[j] = a[j] - b[j]
		}
	case backend.Mul:
		for j := range d {
			d[j] = a[j] * b[j]
		}
	case backend.Div:
		for j := range d {
			d[j] = a[j] / b[j]
		}
	case backend.ReluGrad:
		for j := range d {
			v := b[j]
			if !(a[j] > 0) {
				v = 0
			}
			d[j] = v
		}
	default:
		for j := range d {
			d[j] = T(f(float64(a[j]), float64(b[j])))
		}
	}
}

// binaryRight computes d = op(a, s) for a contiguous a and a broadcast s.
func binaryRight[T Float](op backend.BinaryOp, f func(a, b float64) float64, d, a []T, s T) {
	if vecScalar(op, d, a, s) {
		return
	}
	a = a[:len(d)]
	switch op {
	case backend.Add:
		for j := range d {
			d[j] = a[j] + s
		}
	case backend.Mul:
		for j := range d {
			d[j] = a[j] * s
		}
	default:
		for j := range d {
			d[j] = T(f(float64(a[j]), float64(s)))
		}
	}
}

// binaryLeft computes d = op(s, b) for a broadcast s and a contiguous b;
// the commutative ops reuse the right-hand kernels.
func binaryLeft[T Float](op backend.BinaryOp, f func(a, b float64) float64, d []T, s T, b []T) {
	if (op == backend.Add || op == backend.Mul) && vecScalar(op, d, b, s) {
		return
	}
	b = b[:len(d)]
	for j := range d {
		d[j] = T(f(float64(s), float64(b[j])))
	}
}

// vecUnary computes d = op(x) over a contiguous chunk with an AVX2 kernel,
// or reports false.
func vecUnary[T Float](op backend.UnaryOp, d, x []T, p1 float64) bool {
	df, ok := asF32(d)
	if !ok || !useAsmKernel || len(d) == 0 {
		return false
	}
	xf, _ := asF32(x)
	xf = xf[:len(df)]
	switch op {
	case backend.Relu:
		reluF32k(&df[0], &xf[0], len(df))
	case backend.MulScalar:
		mulScalarF32k(&df[0], &xf[0], float32(p1), len(df))
	case backend.AddScalar:
		addScalarF32k(&df[0], &xf[0], float32(p1), len(df))
	case backend.Square:
		mulF32k(&df[0], &xf[0], &xf[0], len(df))
	case backend.Sqrt:
		sqrtF32k(&df[0], &xf[0], len(df))
	default:
		return false
	}
	return true
}

// tinyRow is the widest row that copyRows and addRows move with a plain
// loop: for a few values a call (to the kernel, or copy's memmove) costs
// more than the work.
const tinyRow = 4

// copyRows copies rows runs of width values from s (rows lds apart) to d
// (rows ldd apart): with the AVX2 kernel for float32 runs of at least 8,
// else with copy.
func copyRows[T Float](d, s []T, rows, width, ldd, lds int) {
	if rows <= 0 || width <= 0 {
		return
	}
	_, _ = d[(rows-1)*ldd+width-1], s[(rows-1)*lds+width-1]
	if width <= tinyRow { // the few pixels of a small plane: no call per row
		for r := range rows {
			copy(d[r*ldd:][:width], s[r*lds:][:width])
		}
		return
	}
	if df, ok := asF32(d); ok && useAsmKernel && width >= 8 {
		sf, _ := asF32(s)
		copyRowsF32k(&df[0], &sf[0], rows, width, ldd, lds)
		return
	}
	for r := range rows {
		copy(d[r*ldd:][:width], s[r*lds:][:width])
	}
}

// prefetchPlane asks for the cache lines of the n values of s from off
// (those inside s): the next plane a loop over planes reads while it
// transforms this one. A plane is a page or more, and the hardware
// prefetchers stop at page boundaries, so without it each plane's first
// reads wait for memory.
func prefetchPlane[T Float](s []T, off, n int) {
	if n = min(n, len(s)-off); n <= 0 || !useAsmKernel {
		return
	}
	if sf, ok := asF32(s[off:]); ok {
		prefetchF32(&sf[0], n)
	}
}

// addRows adds rows runs of width values from s (rows lds apart) into d
// (rows ldd apart), with the AVX2 kernel for float32.
func addRows[T Float](d, s []T, rows, width, ldd, lds int) {
	if rows <= 0 || width <= 0 {
		return
	}
	_, _ = d[(rows-1)*ldd+width-1], s[(rows-1)*lds+width-1]
	if df, ok := asF32(d); ok && useAsmKernel && width > tinyRow {
		sf, _ := asF32(s)
		addRowsF32k(&df[0], &sf[0], rows, width, ldd, lds)
		return
	}
	for r := range rows {
		dr, sr := d[r*ldd:][:width], s[r*lds:][:width]
		for j, v := range sr {
			dr[j] += v
		}
	}
}

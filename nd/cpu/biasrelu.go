package cpu

import "github.com/goluon/goluon/nd/backend"

// Fused bias + ReLU (backend.BiasReluKernels): one pass forward instead of
// a broadcast add and a ReLU, one pass backward instead of the ReLU
// gradient and a sum for the bias gradient. Long runs (convolution
// outputs, Inner ≥ minRun) are handled one (outer, channel) run at a time
// with a scalar bias; short ones (dense layers, Inner = 1) one row at a
// time with the bias as a vector.

var _ backend.BiasReluKernels = (*Backend)(nil)

// minRun is the shortest run the per-run loops take.
const minRun = 8

// BiasRelu implements backend.BiasReluKernels.
func (*Backend) BiasRelu(p backend.ChannelParams, y, x, bias backend.Arg) {
	if isF64(x) {
		biasRelu(p, slice[float64](y), slice[float64](x), slice[float64](bias))
	} else {
		biasRelu(p, slice[float32](y), slice[float32](x), slice[float32](bias))
	}
}

func biasRelu[T Float](p backend.ChannelParams, y, x, b []T) {
	if p.Inner >= minRun {
		if serialRuns(p) {
			for r := range p.Outer * p.C {
				biasReluRun(p, y, x, b, r/p.C, r%p.C)
			}
			return
		}
		channelRuns(p, func(o, c int) { biasReluRun(p, y, x, b, o, c) })
		return
	}
	if p.Inner == 1 && p.Outer < workers() && p.C >= 2*elemGrain {
		// Few long rows (nd.AddRelu's one row of a bias per value): pieces
		// of them in parallel.
		rowPieces(p.Outer, p.C, func(o, lo, hi int) {
			biasReluPiece(y[o*p.C+lo:o*p.C+hi], x[o*p.C+lo:o*p.C+hi], b[lo:hi])
		})
		return
	}
	if serialRows(p) {
		for o := range p.Outer {
			biasReluRow(p, y, x, b, o)
		}
		return
	}
	channelRows(p, func(o int) { biasReluRow(p, y, x, b, o) })
}

// biasReluPiece sets y = max(x + b, 0) value by value (a piece of a row
// whose bias has one value per position), as biasReluRow does.
func biasReluPiece[T Float](y, x, b []T) {
	if len(y) == 0 {
		return
	}
	if yf, ok := asF32(y); ok && useAsmKernel {
		xf, _ := asF32(x)
		bf, _ := asF32(b)
		addReluF32k(&yf[0], &xf[:len(yf)][0], &bf[:len(yf)][0], len(yf))
		return
	}
	x, b = x[:len(y)], b[:len(y)]
	for i, v := range x {
		y[i] = reluT(v + b[i])
	}
}

// biasReluRun is biasRelu on the run of channel c in outer slice o.
func biasReluRun[T Float](p backend.ChannelParams, y, x, b []T, o, c int) {
	yr, xr := channelRun(p, y, o, c), channelRun(p, x, o, c)
	if yf, ok := asF32(yr); ok && useAsmKernel {
		xf, _ := asF32(xr)
		addReluScalarF32k(&yf[0], &xf[:len(yf)][0], float32(b[c]), len(yf))
		return
	}
	for i, v := range xr {
		yr[i] = reluT(v + b[c])
	}
}

// biasReluRow is biasRelu on outer row o (C·Inner values).
func biasReluRow[T Float](p backend.ChannelParams, y, x, b []T, o int) {
	row := p.C * p.Inner
	yr, xr := y[o*row:][:row], x[o*row:][:row]
	if yf, ok := asF32(yr); ok && useAsmKernel && p.Inner == 1 && row > 0 {
		xf, _ := asF32(xr)
		bf, _ := asF32(b)
		addReluF32k(&yf[0], &xf[0], &bf[:row][0], row)
		return
	}
	for i, v := range xr {
		yr[i] = reluT(v + b[i/p.Inner])
	}
}

// reluT is relu (elementwise.go) in T: −0 and NaN pass through.
func reluT[T Float](v T) T {
	if v < 0 {
		return 0
	}
	return v
}

// BiasReluBackward implements backend.BiasReluKernels.
func (*Backend) BiasReluBackward(p backend.ChannelParams, dx, dbias, g, y backend.Arg) {
	if isF64(y) {
		biasReluBackward(p, slice[float64](dx), optSlice[float64](dbias), slice[float64](g), slice[float64](y))
	} else {
		biasReluBackward(p, slice[float32](dx), optSlice[float32](dbias), slice[float32](g), slice[float32](y))
	}
}

// reluGradSum sets d = g where 0 < y, else 0, and returns Σd in float64.
func reluGradSum[T Float](d, y, g []T) float64 {
	if df, ok := asF32(d); ok && useAsmKernel && len(d) > 0 {
		yf, _ := asF32(y)
		gf, _ := asF32(g)
		return reluGradSumF32k(&df[0], &yf[:len(df)][0], &gf[:len(df)][0], len(df))
	}
	y, g = y[:len(d)], g[:len(d)]
	var s float64
	for i, v := range y {
		var r T // d may be g: read g[i] before writing d[i]
		if 0 < v {
			r = g[i]
		}
		d[i] = r
		s += float64(r)
	}
	return s
}

func biasReluBackward[T Float](p backend.ChannelParams, dx, db, g, y []T) {
	if db != nil {
		db = db[:p.C] // its buffer may run on (a traced graph's planned buffers)
	}
	if p.Inner >= minRun {
		planeSums(p, db, func(o, c int) float64 {
			return reluGradSum(channelRun(p, dx, o, c), channelRun(p, y, o, c), channelRun(p, g, o, c))
		})
		return
	}
	if p.Outer == 0 {
		clear(db)
		return
	}
	// Short runs: rows in parallel, each chunk summing its rows into a
	// float64 partial per channel; the partials are added in chunk order.
	row := p.C * p.Inner
	partials := make([][]float64, workers())
	chunks := parallelChunks(p.Outer, max(1, elemGrain/max(row, 1)), func(chunk, lo, hi int) {
		acc := scratch[float64](p.C)
		clear(acc)
		partials[chunk] = acc
		for o := lo; o < hi; o++ {
			d := dx[o*row:][:row]
			reluGradRow(d, y[o*row:][:row], g[o*row:][:row])
			if df, ok := asF32(d); ok && useAsmKernel && p.Inner == 1 && row > 0 {
				accF32k(&acc[0], &df[0], row)
				continue
			}
			for i, v := range d {
				acc[i/p.Inner] += float64(v)
			}
		}
	})
	for c := range db { // db is nil when the bias gradient is not wanted
		var s float64
		for k := 0; k < chunks; k++ {
			s += partials[k][c]
		}
		db[c] = T(s)
	}
	for k := 0; k < chunks; k++ {
		release(partials[k])
	}
}

// reluGradRow sets d = g where 0 < y, else 0 (AVX2 for float32).
func reluGradRow[T Float](d, y, g []T) {
	if df, ok := asF32(d); ok && useAsmKernel && len(d) > 0 {
		yf, _ := asF32(y)
		gf, _ := asF32(g)
		reluGradF32k(&df[0], &yf[:len(df)][0], &gf[:len(df)][0], len(df))
		return
	}
	for i, v := range y[:len(d)] {
		var r T
		if 0 < v {
			r = g[i]
		}
		d[i] = r
	}
}

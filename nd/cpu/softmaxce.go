package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Fused softmax cross-entropy (backend.SoftmaxCEKernels): per position one
// pass for the maximum, one for the sum of exponentials (in float64) and,
// backward, one writing the gradient; no logit-sized temporaries.

var _ backend.SoftmaxCEKernels = (*Backend)(nil)

// SoftmaxCE implements backend.SoftmaxCEKernels.
func (*Backend) SoftmaxCE(p backend.ChannelParams, loss, lse, x, labels backend.Arg) {
	ix := indices(labels, p.Outer*p.Inner)
	l := slice[float64](lse)
	if isF64(x) {
		softmaxCE(p, slice[float64](loss), l, slice[float64](x), ix)
	} else {
		softmaxCE(p, slice[float32](loss), l, slice[float32](x), ix)
	}
}

// SoftmaxCEBackward implements backend.SoftmaxCEKernels.
func (*Backend) SoftmaxCEBackward(p backend.ChannelParams, dx, g, x, lse, labels backend.Arg) {
	ix := indices(labels, p.Outer*p.Inner)
	l := slice[float64](lse)
	if isF64(x) {
		softmaxCEBackward(p, slice[float64](dx), slice[float64](g), slice[float64](x), l, ix)
	} else {
		softmaxCEBackward(p, slice[float32](dx), slice[float32](g), slice[float32](x), l, ix)
	}
}

// ceRows runs fn over the positions (outer, inner) in ranges split over
// the cores, about elemGrain logits per range, with a scratch row of C
// float64 values per range.
func ceRows(p backend.ChannelParams, fn func(pos, base int, row []float64)) {
	parallelFor(p.Outer*p.Inner, max(1, elemGrain/max(p.C, 1)), func(lo, hi int) {
		row := make([]float64, p.C)
		for pos := lo; pos < hi; pos++ {
			o, i := pos/p.Inner, pos%p.Inner
			fn(pos, o*p.C*p.Inner+i, row)
		}
	})
}

// expRow replaces row by its exponentials: to float32 accuracy with the
// block polynomial (fastmath.go) for float32 data, with math.Exp for
// float64.
func expRow[T Float](row []float64) {
	if _, ok := any(T(0)).(float32); ok {
		expBlock(row)
		return
	}
	for k, v := range row {
		row[k] = math.Exp(v)
	}
}

func softmaxCE[T Float](p backend.ChannelParams, loss []T, lse []float64, x []T, ix []int) {
	c, st := p.C, p.Inner
	ceRows(p, func(pos, base int, row []float64) {
		m := math.Inf(-1)
		for k := range row {
			row[k] = float64(x[base+k*st])
			m = max(m, row[k])
		}
		for k := range row {
			row[k] -= m
		}
		expRow[T](row)
		s := 0.0
		for _, v := range row {
			s += v
		}
		v := m + math.Log(s)
		lse[pos] = v
		k := min(max(ix[pos], 0), c-1)
		loss[pos] = T(v - float64(x[base+k*st]))
	})
}

func softmaxCEBackward[T Float](p backend.ChannelParams, dx, g, x []T, lse []float64, ix []int) {
	c, st := p.C, p.Inner
	ceRows(p, func(pos, base int, row []float64) {
		gv, v := float64(g[pos]), lse[pos]
		for k := range row {
			row[k] = float64(x[base+k*st]) - v
		}
		expRow[T](row)
		row[min(max(ix[pos], 0), c-1)]--
		for k, d := range row {
			dx[base+k*st] = T(gv * d)
		}
	})
}

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

// ceBlock is the most logits a block of positions holds: the block's
// exponentials are one expRow call, so that rows as short as 10 classes
// still fill the vector exp kernel (one call per row spent most of its
// time getting in and out).
const ceBlock = 2048

// ceBlocks runs fn over blocks of positions [lo, hi), with a scratch of
// (hi−lo)·C float64 values (position lo's row first), in ranges split over
// the cores, about elemGrain logits per range.
func ceBlocks(p backend.ChannelParams, fn func(lo, hi int, buf []float64)) {
	rows := max(1, ceBlock/max(p.C, 1))
	parallelFor(p.Outer*p.Inner, max(1, elemGrain/max(p.C, 1)), func(lo, hi int) {
		buf := scratch[float64](min(rows, hi-lo) * p.C)
		for b := lo; b < hi; b += rows {
			e := min(b+rows, hi)
			fn(b, e, buf[:(e-b)*p.C])
		}
		release(buf)
	})
}

// ceBase is the offset of position pos's first logit.
func ceBase(p backend.ChannelParams, pos int) int {
	o, i := pos/p.Inner, pos%p.Inner
	return o*p.C*p.Inner + i
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
	ceBlocks(p, func(lo, hi int, buf []float64) {
		for pos := lo; pos < hi; pos++ {
			row, base := buf[(pos-lo)*c:][:c], ceBase(p, pos)
			m := math.Inf(-1)
			for k := range row {
				row[k] = float64(x[base+k*st])
				m = max(m, row[k])
			}
			for k := range row {
				row[k] -= m
			}
			lse[pos] = m // the row's maximum until its sum is known
		}
		expRow[T](buf)
		for pos := lo; pos < hi; pos++ {
			s := 0.0
			for _, v := range buf[(pos-lo)*c:][:c] {
				s += v
			}
			v := lse[pos] + math.Log(s)
			lse[pos] = v
			k := min(max(ix[pos], 0), c-1)
			loss[pos] = T(v - float64(x[ceBase(p, pos)+k*st]))
		}
	})
}

func softmaxCEBackward[T Float](p backend.ChannelParams, dx, g, x []T, lse []float64, ix []int) {
	c, st := p.C, p.Inner
	ceBlocks(p, func(lo, hi int, buf []float64) {
		for pos := lo; pos < hi; pos++ {
			row, base, v := buf[(pos-lo)*c:][:c], ceBase(p, pos), lse[pos]
			for k := range row {
				row[k] = float64(x[base+k*st]) - v
			}
		}
		expRow[T](buf)
		for pos := lo; pos < hi; pos++ {
			row, base, gv := buf[(pos-lo)*c:][:c], ceBase(p, pos), float64(g[pos])
			row[min(max(ix[pos], 0), c-1)]--
			for k, d := range row {
				dx[base+k*st] = T(gv * d)
			}
		}
	})
}

package cpu

import "github.com/goluon/goluon/nd/backend"

// Fused optimizer updates (backend.OptimizerKernels). The composed update
// in gluon/optimizer makes one pass over memory per elementwise step (five
// to twelve of them, each reading and writing whole parameter-sized
// arrays). These kernels run the same steps, with the same element
// kernels, on blocks of optBlock values that stay in the L1 cache, so the
// weight, gradient and state are read and written once; the results are
// those of the composed ops bit for bit.

var _ backend.OptimizerKernels = (*Backend)(nil)

// optBlock is the number of values one block step works on: its two
// temporaries (8 KiB each in float32) and the operands' blocks fit in L1.
const optBlock = 2048

// SGDUpdate implements backend.OptimizerKernels.
func (*Backend) SGDUpdate(p backend.OptimizerParams, w, g, mom backend.Arg, n int) {
	if isF64(w) {
		sgdUpdate(p, slice[float64](w)[:n], slice[float64](g)[:n], optSlice[float64](mom))
	} else {
		sgdUpdate(p, slice[float32](w)[:n], slice[float32](g)[:n], optSlice[float32](mom))
	}
}

// RMSPropUpdate implements backend.OptimizerKernels.
func (*Backend) RMSPropUpdate(p backend.OptimizerParams, w, g, s backend.Arg, n int) {
	if isF64(w) {
		rmspropUpdate(p, slice[float64](w)[:n], slice[float64](g)[:n], slice[float64](s)[:n])
	} else {
		rmspropUpdate(p, slice[float32](w)[:n], slice[float32](g)[:n], slice[float32](s)[:n])
	}
}

// elemOps runs the element kernels of the composed ops on one block.
type elemOps[T Float] struct {
	clip, sqrt func(float64) float64
	add, div   func(a, b float64) float64
}

// newElemOps returns the element kernels, clipping to ±clip (0: none).
func newElemOps[T Float](clip float64) elemOps[T] {
	e := elemOps[T]{
		sqrt: unaryFunc(backend.Sqrt, 0, 0),
		add:  binaryFunc(backend.Add),
		div:  binaryFunc(backend.Div),
	}
	if clip > 0 {
		e.clip = unaryFunc(backend.Clip, -clip, clip)
	}
	return e
}

func (e elemOps[T]) mulScalar(d, x []T, s float64) { unaryRange(backend.MulScalar, nil, d, x, s) }
func (e elemOps[T]) addScalar(d, x []T, s float64) { unaryRange(backend.AddScalar, nil, d, x, s) }
func (e elemOps[T]) square(d, x []T)               { unaryRange(backend.Square, nil, d, x, 0) }
func (e elemOps[T]) sqrtOf(d, x []T)               { unaryRange(backend.Sqrt, e.sqrt, d, x, 0) }
func (e elemOps[T]) clipTo(d, x []T)               { unaryRange(backend.Clip, e.clip, d, x, 0) }
func (e elemOps[T]) addTo(d, x []T)                { binaryContig(backend.Add, e.add, d, d, x) }
func (e elemOps[T]) divide(d, a, b []T)            { binaryContig(backend.Div, e.div, d, a, b) }

// optBlocks calls fn on consecutive blocks of at most optBlock values of
// [0, n), split over the cores, with two block-sized temporaries.
func optBlocks[T Float](n int, fn func(lo, hi int, t1, t2 []T)) {
	parallelFor(n, elemGrain, func(lo, hi int) {
		var t1, t2 [optBlock]T
		for b := lo; b < hi; b += optBlock {
			e := min(b+optBlock, hi)
			fn(b, e, t1[:e-b], t2[:e-b])
		}
	})
}

// gradBlock writes into a the gradient the update sees:
// clip(rescale·g) + wd·w when clipFirst (SGD), else clip(rescale·g + wd·w)
// (RMSProp); c is a temporary.
func gradBlock[T Float](e elemOps[T], p backend.OptimizerParams, clipFirst bool, a, c, g, w []T) {
	e.mulScalar(a, g, p.RescaleGrad)
	if clipFirst && p.ClipGradient > 0 {
		e.clipTo(a, a)
	}
	if p.WD != 0 {
		e.mulScalar(c, w, p.WD)
		e.addTo(a, c)
	}
	if !clipFirst && p.ClipGradient > 0 {
		e.clipTo(a, a)
	}
}

func sgdUpdate[T Float](p backend.OptimizerParams, w, g, m []T) {
	e := newElemOps[T](p.ClipGradient)
	optBlocks(len(w), func(lo, hi int, a, c []T) {
		ww := w[lo:hi]
		gradBlock(e, p, true, a, c, g[lo:hi], ww)
		if m == nil {
			e.mulScalar(a, a, -p.LR)
			e.addTo(ww, a)
			return
		}
		mm := m[lo:hi]
		e.mulScalar(mm, mm, p.Momentum)
		if p.Nesterov {
			e.addTo(mm, a)
			e.mulScalar(c, mm, p.Momentum)
			e.addTo(c, a)
			e.mulScalar(c, c, -p.LR)
			e.addTo(ww, c)
			return
		}
		e.mulScalar(a, a, -p.LR)
		e.addTo(mm, a)
		e.addTo(ww, mm)
	})
}

func rmspropUpdate[T Float](p backend.OptimizerParams, w, g, s []T) {
	e := newElemOps[T](p.ClipGradient)
	cw := newElemOps[T](p.ClipWeights)
	optBlocks(len(w), func(lo, hi int, a, c []T) {
		ww, ss := w[lo:hi], s[lo:hi]
		gradBlock(e, p, false, a, c, g[lo:hi], ww)
		e.square(c, a)
		e.mulScalar(c, c, 1-p.Gamma1)
		e.mulScalar(ss, ss, p.Gamma1)
		e.addTo(ss, c)
		if p.KerasEpsilon {
			e.sqrtOf(c, ss)
			e.addScalar(c, c, p.Epsilon)
		} else {
			e.addScalar(c, ss, p.Epsilon)
			e.sqrtOf(c, c)
		}
		e.divide(a, a, c)
		e.mulScalar(a, a, -p.LR)
		e.addTo(ww, a)
		if p.ClipWeights > 0 {
			cw.clipTo(ww, ww)
		}
	})
}

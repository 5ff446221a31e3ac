package nd

import (
	"math"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// Dropout zeroes each element of x with probability p and scales the rest
// by 1/(1-p) in training mode (IsTraining); otherwise it passes x through.
// The mask is drawn from x's context generator (see Seed).
func Dropout(x *NDArray, p float64) *NDArray { return dropout("Dropout", x, p, nil) }

// DropoutAxes is Dropout with one mask value shared along each of axes
// (MXNet's Dropout(axes=...)): with axes (0) on a [T, N, C] sequence every
// time step drops the same features (variational dropout); with axes
// (2, 3) on NCHW images whole channels drop (spatial dropout). With no
// axes it is Dropout.
func DropoutAxes(x *NDArray, p float64, axes ...int) *NDArray {
	return dropout("DropoutAxes", x, p, axes)
}

func dropout(op string, x *NDArray, p float64, axes []int) *NDArray {
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if p < 0 || p >= 1 {
		fail(op, ErrArgument, "probability %g outside [0, 1)", p)
	}
	shape := slices.Clone(x.shape)
	for _, a := range axes {
		shape[normAxis(op, a, x.NDim())] = 1
	}
	sess := x.Session()
	if !sess.IsTraining() || p == 0 {
		y := x.view(0, x.shape)
		RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
			return []*NDArray{g.view(0, g.shape)}
		}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{g} })
		return y
	}
	if x.dtype.IsHalf() {
		return dropoutHalf(op, sess, x, shape, p)
	}
	if dk, ok := kernelsOf[backend.DropoutApplyKernels](x.be()); ok && fusedKernels() && slices.Equal(shape, x.shape) {
		return dropoutApplied(op, sess, x, p, dk)
	}
	mask := dropoutMask(op, sess, x.st.dev, x.dtype, shape, p)
	y := mulRaw(x, mask)
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{mulRaw(g, mask)}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{Mul(g, mask)} })
	if !sess.IsRecording() {
		mask.Release()
	}
	return y
}

// dropoutApplied is dropout on a backend that applies the mask as it
// computes it (DropoutApplyKernels): the forward and the backward pass
// read one seed, and no mask is stored. The values are those of the
// stored mask, so the results are the same bits.
func dropoutApplied(op string, sess *Session, x *NDArray, p float64, dk backend.DropoutApplyKernels) *NDArray {
	n, dev, dt := x.Size(), x.st.dev, x.dtype
	thr := uint32(min(p*(1<<32), 1<<32-1))
	keep := 1 / (1 - p)
	seed := dropoutSeed(op, sess, dev)
	y := newArray(op, sess, dev, dt, x.shape)
	dk.DropoutApply(y.arg(), x.arg(), seed.arg(), n, thr, keep)
	apply := func(g *NDArray) *NDArray {
		defer checkLive(op, g, seed).done() // pinned while the kernel reads them
		dx := newArray(op, sess, dev, dt, x.shape)
		backwardKernels(g, dk).DropoutApply(dx.arg(), g.arg(), seed.arg(), n, thr, keep)
		return dx
	}
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		return []*NDArray{apply(g)}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{selfAdjoint(op, g, apply)} })
	if !sess.IsRecording() {
		seed.Release()
	}
	return y
}

// dropoutSeed returns a one-value Int64 array holding a seed drawn from
// dev's generator in sess, as dropoutMask draws one; each replay of a
// trace draws its own.
func dropoutSeed(op string, sess *Session, dev ctx.Context) *NDArray {
	a := newArray(op, sess, dev, Int64, []int{1})
	if r := currentTrace(); r != nil {
		r.seed(a)
		return a
	}
	seed := sess.drawSeed(dev)
	a.be().Write(a.st.buf, a.off, []int64{int64(seed)})
	return a
}

// dropoutMask draws Dropout's mask: 0 with probability p, 1/(1-p)
// otherwise. It takes one value from dev's generator as a seed; the bits
// of value pair i are splitmix64's output for seed + i (a counter-based
// generator: no state to carry from value to value), 32 per value, and a
// value is dropped when its bits fall below p·2³². That costs about a
// nanosecond per value, and the mask depends only on the seed and the
// shape. A backend with DropoutKernels draws it on its device, the same
// values.
func dropoutMask(op string, sess *Session, dev ctx.Context, dt DType, shape []int, p float64) *NDArray {
	checkShape(op, shape)
	n := numel(shape)
	thr := uint32(min(p*(1<<32), 1<<32-1))
	keep := 1 / (1 - p)
	a := newArray(op, sess, dev, dt, shape)
	if r := currentTrace(); r != nil { // each replay draws its own seed
		r.dropout(a, n, thr, keep)
		return a
	}
	seed := sess.drawSeed(dev)
	writeMaskTo(a.be(), a.arg(), dt, n, seed, thr, keep)
	return a
}

// writeMaskTo draws the mask into dst: on the device when be has
// DropoutKernels, else on the host.
func writeMaskTo(be backend.Backend, dst backend.Arg, dt DType, n int, seed uint64, thr uint32, keep float64) {
	if k, ok := be.(backend.DropoutKernels); ok {
		k.DropoutMask(dst, n, seed, thr, keep)
		return
	}
	if dt == Float64 {
		writeMask[float64](be, dst, n, seed, thr, keep)
	} else {
		writeMask[float32](be, dst, n, seed, thr, keep)
	}
}

// maskStaging recycles the host slices masks are drawn into before they
// are written to their device: a fresh multi-megabyte slice per call cost
// more in page faults than drawing the mask.
var maskStaging [2]sync.Pool

// writeMask draws n mask values into a staging slice and writes them to dst.
func writeMask[T float32 | float64](be backend.Backend, dst backend.Arg, n int, seed uint64, thr uint32, keep float64) {
	pool := &maskStaging[0]
	if _, ok := any(T(0)).(float64); ok {
		pool = &maskStaging[1]
	}
	p, _ := pool.Get().(*[]T)
	if p == nil || cap(*p) < n {
		s := make([]T, n)
		p = &s
	}
	be.Write(dst.Buf, dst.Off, fillMask((*p)[:n], seed, thr, keep))
	pool.Put(p)
}

// fillMask fills v with the mask values of dropoutMask.
func fillMask[T float32 | float64](v []T, seed uint64, thr uint32, keep float64) []T {
	kb := math.Float64bits(keep)
	i := 0
	for ; i+1 < len(v); i += 2 {
		u := backend.DropoutBits(seed, uint64(i/2))
		v[i] = maskValue[T](uint32(u), thr, kb)
		v[i+1] = maskValue[T](uint32(u>>32), thr, kb)
	}
	if i < len(v) {
		v[i] = maskValue[T](uint32(backend.DropoutBits(seed, uint64(i/2))), thr, kb)
	}
	return v
}

// maskValue is backend.DropoutValue in T.
func maskValue[T float32 | float64](u, thr uint32, kb uint64) T {
	return T(math.Float64frombits(backend.DropoutValue(u, thr, kb)))
}

// dropoutHalf is dropout on a half-precision x in training mode: the
// float32 mask scales x in float32 and the product is rounded once; the
// tape keeps only the mask's kept/dropped bits (one byte per value), and
// backward scales the output gradient by 1/(1-p) in float32 where they are
// set.
func dropoutHalf(op string, sess *Session, x *NDArray, shape []int, p float64) *NDArray {
	mask := dropoutMask(op, sess, x.st.dev, Float32, shape, p)
	xw := widened(x)
	y := narrowed(mulRaw(xw, mask), x.dtype)
	xw.Release()
	if !sess.IsRecording() || !x.requiresGrad() {
		mask.Release()
		return y
	}
	zero := sess.Full(x.st.dev, Float32, 0, 1)
	kept := binaryInto(op, backend.NotEqual, mask, zero, Bool)
	release(mask, zero)
	keep := 1 / (1 - p)
	Record(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		gw := widened(g)
		s := unaryRaw(op, backend.MulScalar, gw, keep, 0)
		z := g.Session().Full(g.st.dev, Float32, 0, 1)
		r := whereRaw(op, kept, s, z)
		release(s, z)
		if gw != g {
			gw.Release()
		}
		return []*NDArray{narrowed(r, x.dtype)}
	})
	return y
}

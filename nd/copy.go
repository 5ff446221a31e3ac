package nd

import (
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// transfer copies src's elements into dst, which may be on another context
// or backend and of another dtype. Devices of one backend copy directly;
// between backends, a side in host memory (backend.HostMemory) is read or
// written in place, else the copy is staged through a host slice.
func transfer(dst, src *NDArray) {
	n := src.Size()
	if n == 0 {
		return
	}
	if dst.st.dev != src.st.dev {
		countCopy(dst.st.dev, src.st.dev, int64(n*src.dtype.Size()))
	}
	if dst.st.be == src.st.be { // the backend orders copies between its devices (backend.Kernels.Copy)
		if dst.dtype == src.dtype {
			dst.be().Copy([]int{n}, dst.storageArg(), src.storageArg())
		} else {
			dst.be().Cast(dst.storageArg(), src.storageArg(), n)
		}
		return
	}
	if hm, ok := src.be().(backend.HostMemory); ok {
		if view, ok := hm.HostView(src.st.buf, src.off, n); ok {
			src.be().Sync(src.st.dev)
			dst.be().Write(dst.st.buf, dst.off, view)
			return
		}
	}
	if hm, ok := dst.be().(backend.HostMemory); ok {
		if view, ok := hm.HostView(dst.st.buf, dst.off, n); ok {
			dst.be().Sync(dst.st.dev)
			src.be().Read(src.st.buf, src.off, view)
			return
		}
	}
	host := hostSlice(src.dtype, n)
	src.be().Read(src.st.buf, src.off, host)
	dst.be().Write(dst.st.buf, dst.off, host)
}

// hostSlice returns a Go slice of n elements of dt's host type.
func hostSlice(dt DType, n int) any {
	switch dt {
	case Float64:
		return make([]float64, n)
	case Int32:
		return make([]int32, n)
	case Int64:
		return make([]int64, n)
	case Uint8:
		return make([]uint8, n)
	case Bool:
		return make([]bool, n)
	case Float16:
		return make([]F16, n)
	case BFloat16:
		return make([]BF16, n)
	}
	return make([]float32, n)
}

// CopyTo returns a copy of a on dev (a new array even when a is already
// there). Gradients flow back to a.
func (a *NDArray) CopyTo(dev ctx.Context) *NDArray {
	const op = "CopyTo"
	defer checkLive(op, a).done()
	out := newArray(op, a.Session(), dev, a.dtype, a.shape)
	transfer(out, a)
	src := a.st.dev
	RecordDiff(op, out, []*NDArray{a}, func(g *NDArray, _ []bool) []*NDArray {
		gs := newArray(op, g.Session(), src, g.dtype, g.shape)
		transfer(gs, g)
		return []*NDArray{gs}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{g.CopyTo(src)} })
	return out
}

// DetachedCopyTo returns a copy of a on dev, in a's session, that is not
// recorded on the autograd tape, even inside a recording scope: the copy
// has no history and gradients do not flow back to a. Long-lived copies
// (parameter replicas, kvstore buffers) are made with
// nd.PersistentSession().CopyOf instead.
func (a *NDArray) DetachedCopyTo(dev ctx.Context) *NDArray {
	defer checkLive("DetachedCopyTo", a).done()
	return a.Session().CopyOf(a, dev)
}

// AsIn returns a itself when it already lives on dev, and a copy there
// otherwise (Gluon's as_in_context).
func (a *NDArray) AsIn(dev ctx.Context) *NDArray {
	defer checkLive("AsIn", a).done()
	if a.st.dev == dev {
		return a
	}
	return a.CopyTo(dev)
}

// Copy returns a copy of a on its own context.
func (a *NDArray) Copy() *NDArray {
	defer checkLive("Copy", a).done()
	return a.CopyTo(a.st.dev)
}

// AsType returns a converted to dt (a itself when it already has that
// dtype), as backend.Kernels.Cast converts: floats become integers by
// truncation toward zero, saturating, with NaN as 0; anything becomes Bool
// as "is not zero". Between floating dtypes gradients flow back, converted
// to a's dtype; a conversion to or from an integer or Bool dtype is not
// recorded (its result has no gradient, as in PyTorch).
func (a *NDArray) AsType(dt DType) *NDArray {
	const op = "AsType"
	defer checkLive(op, a).done()
	if !dt.Valid() {
		fail(op, ErrDType, "unknown dtype %v", dt)
	}
	if a.dtype == dt {
		return a
	}
	out := newArray(op, a.Session(), a.st.dev, dt, a.shape)
	a.be().Cast(out.storageArg(), a.storageArg(), a.Size())
	if !dt.IsFloat() || !a.dtype.IsFloat() {
		return out // no gradient flows through integers and bools
	}
	RecordDiff(op, out, []*NDArray{a}, func(g *NDArray, _ []bool) []*NDArray {
		gs := newArray(op, g.Session(), a.st.dev, a.dtype, g.shape)
		g.be().Cast(gs.storageArg(), g.storageArg(), g.Size())
		return []*NDArray{gs}
	}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{g.AsType(a.dtype)} })
	return out
}

// Assign overwrites dst's elements with src's. src may live on another
// context (the copy is explicit here) and have another dtype; the shapes
// must be equal. Assign is not recorded: it is how optimizers, kvstores and
// parameter loading write into arrays. Like the other in-place writes
// (AddTo, ScaleInPlace, FillInPlace) it makes a later Backward through an
// op that recorded dst (or a view of its memory) fail with ErrGraph
// instead of computing a gradient from the changed values.
func Assign(dst, src *NDArray) {
	const op = "Assign"
	defer checkLive(op, dst, src).done()
	claimIn(dst, src)
	if !slices.Equal(dst.shape, src.shape) {
		fail(op, ErrShape, "destination shape %v vs source shape %v", dst.shape, src.shape)
	}
	transfer(dst, src)
	dst.st.version.Add(1)
}

// AddTo adds src to dst in place (dst += src, broadcasting src). Both must
// be on one context. It is not recorded.
func AddTo(dst, src *NDArray) {
	const op = "AddTo"
	defer checkInputs(op, dst, src).done()
	claimIn(dst, src)
	if !slices.Equal(broadcastShape(op, dst.shape, src.shape), dst.shape) {
		fail(op, ErrShape, "cannot add shape %v into %v", src.shape, dst.shape)
	}
	defer dst.st.version.Add(1)
	if inPlaceHalf(dst, []*NDArray{src}, func(d *NDArray, s []*NDArray) { AddTo(d, s[0]) }) {
		return
	}
	dst.be().Binary(backend.Add, dst.shape, dst.arg(), dst.arg(), bcastArg(src, dst.shape))
}

// ScaleInPlace multiplies dst by s in place. It is not recorded.
func ScaleInPlace(dst *NDArray, s float64) {
	defer checkLive("ScaleInPlace", dst).done()
	claimIn(dst)
	unaryInPlace(dst, backend.MulScalar, s, 0)
	dst.st.version.Add(1)
}

// FillInPlace sets every element of dst to v. It is not recorded.
func FillInPlace(dst *NDArray, v float64) {
	defer checkLive("FillInPlace", dst).done()
	claimIn(dst)
	dst.be().Fill(dst.storageArg(), dst.Size(), v)
	dst.st.version.Add(1)
}

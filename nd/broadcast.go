package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// Short names for the kernel codes used by op implementations.
const (
	bAdd = backend.Add
	bSub = backend.Sub
	bMul = backend.Mul
	bDiv = backend.Div
)

// broadcastShape returns the NumPy broadcast of two shapes: aligned at the
// right, each pair of dimensions must be equal or contain a 1.
func broadcastShape(op string, a, b []int) []int {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 1; i <= n; i++ {
		da, db := dimFromRight(a, i), dimFromRight(b, i)
		switch {
		case da == db || db == 1:
			out[n-i] = da
		case da == 1:
			out[n-i] = db
		default:
			fail(op, ErrShape, "shapes %v and %v cannot be broadcast together", a, b)
		}
	}
	return out
}

func dimFromRight(s []int, i int) int {
	if i > len(s) {
		return 1
	}
	return s[len(s)-i]
}

// bcastArg describes a viewed with the (broadcast) shape target: broadcast
// dimensions get stride 0.
func bcastArg(a *NDArray, target []int) backend.Arg {
	a.arg() // the compute kernels' dtype guard
	return bcastStorage(a, target)
}

// bcastStorage is bcastArg for Copy, which takes every dtype.
func bcastStorage(a *NDArray, target []int) backend.Arg {
	own := backend.ContiguousStrides(a.shape)
	st := make([]int, len(target))
	lead := len(target) - len(a.shape)
	for i := range target {
		if j := i - lead; j >= 0 && a.shape[j] != 1 {
			st[i] = own[j]
		}
	}
	arg := a.storageArg()
	arg.Strides = st
	return arg
}

// sumTo reduces the gradient g (of a broadcast shape) back to shape, the
// shape of the input that was broadcast. It returns a view of g when no
// reduction is needed.
func sumTo(g *NDArray, shape []int) *NDArray {
	if slices.Equal(g.shape, shape) {
		return g.view(0, shape)
	}
	axes := make([]bool, len(g.shape))
	lead := len(g.shape) - len(shape)
	for i := range g.shape {
		j := i - lead
		axes[i] = j < 0 || (shape[j] == 1 && g.shape[i] != 1)
	}
	r := reduceRaw("sumTo", backend.Sum, g, axes)
	v := r.view(0, shape)
	r.Release()
	return v
}

// copyInto copies src's elements into dst (same shape and dtype).
func copyInto(dst, src *NDArray) {
	dst.be().Copy(dst.shape, dst.storageArg(), src.storageArg())
}

// addInPlace adds src, of dst's shape and dtype, into dst.
func addInPlace(dst, src *NDArray) {
	if inPlaceHalf(dst, []*NDArray{src}, func(d *NDArray, s []*NDArray) { addInPlace(d, s[0]) }) {
		return
	}
	dst.be().Binary(bAdd, dst.shape, dst.arg(), dst.arg(), src.arg())
}

// channelArg describes the vector v (of length shape[axis]) broadcast along
// every axis of an ndim-dimensional array except axis.
func channelArg(v *NDArray, ndim, axis int) backend.Arg {
	arg := v.arg()
	arg.Strides = make([]int, ndim)
	arg.Strides[axis] = 1
	return arg
}

package nd

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// hostCPU is the context of the host copies made for backends without
// IndexKernels.
var hostCPU = ctx.CPU(0)

// hostIndex returns the CPU backend's IndexKernels.
func hostIndex() backend.IndexKernels { return backend.For(hostCPU).(backend.IndexKernels) }

// runIndexed runs the indexing kernel called kernel: on the arrays
// themselves when their backend implements backend.IndexKernels, otherwise
// on host copies with the CPU backend, copying out (which may be read as
// well as written) back, after a one-time warning.
func runIndexed(kernel string, out *NDArray, ins []*NDArray, run func(k backend.IndexKernels, out *NDArray, ins []*NDArray)) {
	if inPlaceHalf(out, ins, func(o *NDArray, w []*NDArray) { runIndexed(kernel, o, w, run) }) {
		return
	}
	if k, ok := kernelsOf[backend.IndexKernels](out.be()); ok {
		run(k, out, ins)
		return
	}
	warnHostFallback(kernel, out.be())
	host := hostCPU
	hins := make([]*NDArray, len(ins))
	for i, a := range ins {
		hins[i] = newArray("host copy", out.Session(), host, a.dtype, a.shape)
		transfer(hins[i], a)
	}
	hout := newArray("host copy", out.Session(), host, out.dtype, out.shape)
	transfer(hout, out)
	run(hostIndex(), hout, hins)
	transfer(out, hout)
	release(hout)
	release(hins...)
}

// hostWarned holds the kernel and backend pairs warned about.
var hostWarned sync.Map

// warnHostFallback prints, once per kernel and backend, that the kernel
// runs on host copies because the backend has no IndexKernels.
func warnHostFallback(kernel string, be backend.Backend) {
	if _, seen := hostWarned.LoadOrStore(kernel+"/"+be.Name(), true); !seen {
		fmt.Fprintf(os.Stderr, "nd: %s on the %s backend runs on host copies (the backend has no backend.IndexKernels): every call copies its operands to cpu(0) and back\n", kernel, be.Name())
	}
}

// axisDims splits shape around axis: the product of the dimensions before
// it, its size, and the product after it.
func axisDims(shape []int, axis int) (outer, n, inner int) {
	return numel(shape[:axis]), shape[axis], numel(shape[axis+1:])
}

// checkIndexArray checks an index operand: live, on x's context, integer
// (or whole floats).
func checkIndexArray(op string, x, idx *NDArray) {
	defer checkLive(op, x, idx).done()
	checkContexts(op, x, idx)
	checkIndex(op, idx)
}

// TakeMode says what Take does with an index outside [0, n).
type TakeMode uint8

// The index modes, as MXNet's take: TakeClip clamps to [0, n-1] (the default),
// TakeWrap takes the index modulo n (so -1 is the last element).
const (
	TakeClip TakeMode = iota
	TakeWrap
)

// Take gathers slices of x along axis at the given indices (MXNet's take,
// NumPy's take, PyTorch's index_select for 1-D indices): the result has
// shape x.shape[:axis] + indices.shape + x.shape[axis+1:]. Indices have
// an integer dtype; out-of-range ones are clipped or wrapped per mode. The
// gradient of x is the output gradient scatter-added back at the indices,
// in a fixed order (repeated indices accumulate). The mode may be left
// out: TakeClip, MXNet's default.
func Take(x, indices *NDArray, axis int, mode ...TakeMode) *NDArray {
	return dispatchIx("Take", castNeutral, []*NDArray{x, indices}, 0b10, func(in []*NDArray) *NDArray { return takeOp(in[0], in[1], axis, mode...) })
}

func takeOp(x, indices *NDArray, axis int, mode ...TakeMode) *NDArray {
	const op = "Take"
	if len(mode) > 1 {
		fail(op, ErrArgument, "%d modes given, want at most one", len(mode))
	}
	m := TakeClip
	if len(mode) == 1 {
		m = mode[0]
	}
	checkIndexArray(op, x, indices)
	ax := normAxis(op, axis, x.NDim())
	outer, n, inner := axisDims(x.shape, ax)
	if n == 0 && indices.Size() > 0 {
		fail(op, ErrShape, "cannot take from an empty axis %d of shape %v", axis, x.shape)
	}
	shape := slices.Concat(x.shape[:ax], indices.shape, x.shape[ax+1:])
	p := backend.GatherParams{Outer: outer, N: n, M: indices.Size(), Inner: inner, Wrap: m == TakeWrap}
	idxStrides := []int{0, 1, 0}
	out := newArray(op, sessionOf(op, x, indices), x.st.dev, x.dtype, shape)
	gatherInto(p, out, x, indices, idxStrides)
	back := func(g *NDArray) *NDArray { return scatterGrad(p, g, x, indices, idxStrides) }
	RecordDiff(op, out, []*NDArray{x, indices}, func(g *NDArray, need []bool) []*NDArray {
		return []*NDArray{back(g), nil}
	}, linearDiff(op, 0, 2, back, func(h *NDArray) *NDArray { return Take(h, indices, ax, m) }))
	return out
}

// gatherInto runs the Gather kernel.
func gatherInto(p backend.GatherParams, out, x, idx *NDArray, idxStrides []int) {
	if out.Size() == 0 {
		return
	}
	runIndexed("Gather", out, []*NDArray{x, idx}, func(k backend.IndexKernels, out *NDArray, in []*NDArray) {
		ia := in[1].arg()
		ia.Strides = idxStrides
		k.Gather(p, out.arg(), in[0].arg(), ia)
	})
}

// scatterAddInto runs the ScatterAdd kernel: dst[o, idx, i] += src.
func scatterAddInto(p backend.GatherParams, dst, src, idx *NDArray, idxStrides []int) {
	if src.Size() == 0 {
		return
	}
	runIndexed("ScatterAdd", dst, []*NDArray{src, idx}, func(k backend.IndexKernels, dst *NDArray, in []*NDArray) {
		ia := in[1].arg()
		ia.Strides = idxStrides
		k.ScatterAdd(p, dst.arg(), in[0].arg(), ia)
	})
}

// scatterGrad is the gradient of a gather: zeros of x's shape with g added
// at the gathered positions.
func scatterGrad(p backend.GatherParams, g, x, idx *NDArray, idxStrides []int) *NDArray {
	gx := ZerosLike(x)
	scatterAddInto(p, gx, g, idx, idxStrides)
	return gx
}

// gatherShapes checks PyTorch's gather/scatter_add layout, simplified: idx
// has x's number of dimensions and x's size on every axis but axis.
func gatherShapes(op string, x, idx *NDArray, axis int) (int, backend.GatherParams) {
	ax := normAxis(op, axis, x.NDim())
	if idx.NDim() != x.NDim() {
		fail(op, ErrShape, "index of shape %v must have the %d dimensions of %v", idx.shape, x.NDim(), x.shape)
	}
	for d := range x.shape {
		if d != ax && idx.shape[d] != x.shape[d] {
			fail(op, ErrShape, "index of shape %v must match %v on every axis but %d", idx.shape, x.shape, axis)
		}
	}
	outer, n, inner := axisDims(x.shape, ax)
	if n == 0 && idx.Size() > 0 {
		fail(op, ErrShape, "cannot index an empty axis %d of shape %v", axis, x.shape)
	}
	return ax, backend.GatherParams{Outer: outer, N: n, M: idx.shape[ax], Inner: inner}
}

// Gather picks, along axis, the element of x that idx names for every
// position of idx (PyTorch's torch.gather): out[i][j][k] = x[i][idx[i][j][k]][k]
// for axis 1. idx has x's number of dimensions and x's size on every other
// axis; the result has idx's shape. Out-of-range indices are clipped. The
// gradient of x is scatter-added, in a fixed order.
func Gather(x, idx *NDArray, axis int) *NDArray {
	return dispatchIx("Gather", castNeutral, []*NDArray{x, idx}, 0b10, func(in []*NDArray) *NDArray { return gatherOp(in[0], axis, in[1]) })
}

func gatherOp(x *NDArray, axis int, idx *NDArray) *NDArray {
	const op = "Gather"
	checkIndexArray(op, x, idx)
	ax, p := gatherShapes(op, x, idx, axis)
	out := newArray(op, sessionOf(op, x, idx), x.st.dev, x.dtype, idx.shape)
	gatherInto(p, out, x, idx, nil)
	back := func(g *NDArray) *NDArray { return scatterGrad(p, g, x, idx, nil) }
	RecordDiff(op, out, []*NDArray{x, idx}, func(g *NDArray, need []bool) []*NDArray {
		return []*NDArray{back(g), nil}
	}, linearDiff(op, 0, 2, back, func(h *NDArray) *NDArray { return Gather(h, idx, ax) }))
	return out
}

// ScatterAdd returns x with src added at the positions idx names along
// axis (PyTorch's scatter_add): out[i][idx[i][j][k]][k] += src[i][j][k]
// for axis 1. idx and src have one shape, with x's size on every axis but
// axis. Repeated indices accumulate, in a fixed order. Gradients: x gets
// the output gradient, src the output gradient gathered at idx.
func ScatterAdd(x, idx, src *NDArray, axis int) *NDArray {
	return dispatchIx("ScatterAdd", castWidest, []*NDArray{x, idx, src}, 0b010, func(in []*NDArray) *NDArray { return scatterAddOp(in[0], axis, in[1], in[2]) })
}

func scatterAddOp(x *NDArray, axis int, idx, src *NDArray) *NDArray {
	const op = "ScatterAdd"
	checkIndexArray(op, x, idx)
	defer checkInputs(op, x, src).done()
	if !slices.Equal(idx.shape, src.shape) {
		fail(op, ErrShape, "index of shape %v and source of shape %v differ", idx.shape, src.shape)
	}
	ax, p := gatherShapes(op, x, idx, axis)
	out := newArray(op, sessionOf(op, x, idx, src), x.st.dev, x.dtype, x.shape)
	transfer(out, x)
	scatterAddInto(p, out, src, idx, nil)
	recordScatter(op, p, out, x, idx, src, nil, func(g *NDArray) *NDArray { return Gather(g, idx, ax) })
	return out
}

// IndexAdd returns x with the slices of src added along axis at the 1-D
// indices (PyTorch's index_add; the gradient of Take): out[..., idx[j],
// ...] += src[..., j, ...]. src has x's shape with len(indices) on axis.
// Out-of-range indices are clipped; repeated ones accumulate, in order.
func IndexAdd(x, indices, src *NDArray, axis int) *NDArray {
	return dispatchIx("IndexAdd", castWidest, []*NDArray{x, indices, src}, 0b010, func(in []*NDArray) *NDArray { return indexAddOp(in[0], axis, in[1], in[2]) })
}

func indexAddOp(x *NDArray, axis int, indices, src *NDArray) *NDArray {
	const op = "IndexAdd"
	checkIndexArray(op, x, indices)
	defer checkInputs(op, x, src).done()
	ax := normAxis(op, axis, x.NDim())
	if indices.NDim() != 1 {
		fail(op, ErrShape, "indices of shape %v must be 1-D", indices.shape)
	}
	want := slices.Clone(x.shape)
	want[ax] = indices.Size()
	if !slices.Equal(src.shape, want) {
		fail(op, ErrShape, "source of shape %v must be %v (x's shape %v with the %d indices on axis %d)", src.shape, want, x.shape, indices.Size(), axis)
	}
	outer, n, inner := axisDims(x.shape, ax)
	if n == 0 && indices.Size() > 0 {
		fail(op, ErrShape, "cannot index an empty axis %d of shape %v", axis, x.shape)
	}
	p := backend.GatherParams{Outer: outer, N: n, M: indices.Size(), Inner: inner}
	st := []int{0, 1, 0}
	out := newArray(op, sessionOf(op, x, indices, src), x.st.dev, x.dtype, x.shape)
	transfer(out, x)
	scatterAddInto(p, out, src, indices, st)
	recordScatter(op, p, out, x, indices, src, st, func(g *NDArray) *NDArray { return Take(g, indices, ax) })
	return out
}

// recordScatter records a scatter-add out = x + scatter(src at idx): x's
// gradient is the output gradient, src's the output gradient gathered at
// idx.
func recordScatter(op string, p backend.GatherParams, out, x, idx, src *NDArray, idxStrides []int, gather func(g *NDArray) *NDArray) {
	RecordDiff(op, out, []*NDArray{x, idx, src}, func(g *NDArray, need []bool) []*NDArray {
		var gx, gs *NDArray
		if need[0] {
			gx = g.view(0, g.shape)
		}
		if need[2] {
			gs = newArray(op, g.Session(), g.st.dev, g.dtype, src.shape)
			gatherInto(p, gs, g, idx, idxStrides)
		}
		return []*NDArray{gx, nil, gs}
	}, func(g *NDArray, need []bool) []*NDArray {
		var gx, gs *NDArray
		if need[0] {
			gx = g
		}
		if need[2] {
			gs = gather(g)
		}
		return []*NDArray{gx, nil, gs}
	})
}

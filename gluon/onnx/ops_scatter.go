package onnx

import (
	"slices"

	"github.com/goluon/goluon/nd"
)

// The gather and scatter ops with index tensors: GatherND, ScatterND and
// ScatterElements, on nd's Take, IndexAdd and ScatterAdd (so they are
// differentiable in the data and the updates).

var scatterOps = map[string]opFunc{
	"GatherND":        opGatherND,
	"ScatterND":       opScatterND,
	"ScatterElements": opScatterElements,
	"Scatter":         opScatterElements, // its opset-9 name
}

// rowsOf flattens the index tuples idx [B..., ..., k] (b leading batch
// axes shared with data) into row numbers of data flattened to
// [B·d(b)·…·d(b+k−1), rest...] (negative indices counting from the end of
// their axis), checking the range; it returns the rows and the data as
// rows.
func rowsOf(n *node, data, idx *nd.NDArray, b int) (rows *nd.NDArray, flat *nd.NDArray) {
	is, ds := idx.Shape(), data.Shape()
	if idx.NDim() < 1 || b < 0 || b >= idx.NDim() || b+is[len(is)-1] > data.NDim() {
		n.fail("indices of shape %v with %d batch axes for data of shape %v: want [batch..., ..., k] with batch + k at most the data's rank", is, b, ds)
	}
	for j := range b {
		if is[j] != ds[j] {
			n.fail("indices of shape %v and data of shape %v differ on batch axis %d", is, ds, j)
		}
	}
	k := is[len(is)-1]
	tuples := 1
	for _, d := range is[:len(is)-1] {
		tuples *= d
	}
	perBatch, block := 1, 1 // tuples per batch entry, rows per batch entry
	for _, d := range is[b : len(is)-1] {
		perBatch *= d
	}
	for _, d := range ds[b : b+k] {
		block *= d
	}
	v := idx.Int64s()
	lin := make([]int64, tuples)
	for t := range lin {
		var r int64
		for j := range k {
			i, d := v[t*k+j], int64(ds[b+j])
			if i < -d || i >= d {
				n.fail("index %d is out of range for axis %d of size %d", i, b+j, d)
			}
			if i < 0 {
				i += d
			}
			r = r*d + i
		}
		lin[t] = int64(t/max(perBatch, 1))*int64(block) + r
	}
	m := block
	for _, d := range ds[:b] {
		m *= d
	}
	rest := ds[b+k:]
	rows = nd.FromSlice(data.Context(), lin, len(lin))
	return rows, nd.Reshape(data, append([]int{m}, rest...)...)
}

// opGatherND picks, for each index tuple of length k (the last axis of
// the indices), the slice data[batch..., i0, ..., ik−1].
func opGatherND(n *node, in []*nd.NDArray) []*nd.NDArray {
	data, idx := in[0], in[1]
	b := n.a.int("batch_dims", 0)
	rows, flat := rowsOf(n, data, idx, b)
	y := nd.Take(flat, rows, 0)
	is := idx.Shape()
	shape := append(append([]int{}, is[:len(is)-1]...), data.Shape()[b+is[len(is)-1]:]...)
	return []*nd.NDArray{nd.Reshape(y, shape...)}
}

// opScatterND writes (or adds, or multiplies by, with reduction "add" or
// "mul") each update slice at its index tuple.
func opScatterND(n *node, in []*nd.NDArray) []*nd.NDArray {
	data, idx, upd := in[0], in[1], in[2]
	rows, flat := rowsOf(n, data, idx, 0)
	is := idx.Shape()
	want := append(append([]int{}, is[:len(is)-1]...), data.Shape()[is[len(is)-1]:]...)
	if !slices.Equal(upd.Shape(), want) {
		n.fail("updates of shape %v for indices %v and data %v: want %v", upd.Shape(), is, data.Shape(), want)
	}
	u := nd.Reshape(upd, append([]int{rows.Size()}, flat.Shape()[1:]...)...)
	return []*nd.NDArray{nd.Reshape(scatterRows(n, flat, rows.Int64s(), u), data.Shape()...)}
}

// scatterRows writes the rows u at rows of flat (reduction none: the last
// write of a row wins), adds them (add) or multiplies by them (mul).
func scatterRows(n *node, flat *nd.NDArray, rows []int64, u *nd.NDArray) *nd.NDArray {
	_, u = match(flat, u)
	at := nd.FromSlice(flat.Context(), rows, len(rows))
	switch r := n.a.str("reduction", "none"); r {
	case "add":
		return nd.IndexAdd(flat, at, u, 0)
	case "none":
		return nd.IndexAdd(clearRows(flat, at), at, lastWrites(rows, u), 0)
	case "mul":
		// Each named row times its updates, in rounds that name each row
		// at most once (a row named twice is multiplied in two rounds):
		// a factor of 1 on the rows a round does not name.
		var rounds [][]int64 // per round: positions in rows
		count := map[int64]int{}
		for p, v := range rows {
			k := count[v]
			count[v]++
			if k == len(rounds) {
				rounds = append(rounds, nil)
			}
			rounds[k] = append(rounds[k], int64(p))
		}
		y := flat
		for _, pos := range rounds {
			sel := nd.FromSlice(flat.Context(), pos, len(pos))
			rr := nd.Take(at, sel, 0)
			factor := nd.IndexAdd(clearRows(nd.OnesLike(flat), rr), rr, nd.Take(u, sel, 0), 0)
			y = nd.Mul(y, factor)
		}
		return y
	default:
		n.fail("reduction %q is not supported (none, add and mul are)", r)
	}
	return nil
}

// clearRows zeroes the rows of flat that rows names.
func clearRows(flat, rows *nd.NDArray) *nd.NDArray {
	hit := nd.IndexAdd(nd.Zeros(flat.Context(), nd.Float32, flat.Shape()[0]), rows, nd.Ones(flat.Context(), nd.Float32, rows.Size()), 0)
	keep := nd.Equal(hit, nd.Reshape(nd.Scalar(flat.Context(), nd.Float32, 0)))
	shape := make([]int, flat.NDim())
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = flat.Shape()[0]
	return nd.Where(nd.Reshape(keep, shape...), flat, nd.ZerosLike(flat))
}

// opScatterElements is PyTorch's scatter along axis: out[..., idx[i], ...]
// = updates[i] (or += with reduction "add", *= with "mul"), negative
// indices counting from the end of the axis; the indices may be shorter
// than the data on the other axes. It scatters the data's elements,
// flattened.
func opScatterElements(n *node, in []*nd.NDArray) []*nd.NDArray {
	data, idx, upd := in[0], in[1], in[2]
	axis := n.axis(n.a.int("axis", 0), data.NDim())
	if idx.NDim() != data.NDim() || !slices.Equal(idx.Shape(), upd.Shape()) {
		n.fail("indices %v and updates %v for data %v: want equal shapes of the data's rank", idx.Shape(), upd.Shape(), data.Shape())
	}
	for d, k := range idx.Shape() {
		if d != axis && k > data.Shape()[d] {
			n.fail("indices %v longer than the data %v on axis %d", idx.Shape(), data.Shape(), d)
		}
	}
	n.checkIndices(idx, data.Shape()[axis], "index")
	rows := targetsAlong(idx, data.Shape(), axis)
	flat := nd.Reshape(data, data.Size())
	u := nd.Reshape(upd, upd.Size())
	return []*nd.NDArray{nd.Reshape(scatterRows(n, flat, rows, u), data.Shape()...)}
}

// lastWrites zeroes the values of the updates (rows of u, one per
// target) that a later update to the same target overwrites: a scatter
// without reduction keeps the last write, as ONNX Runtime and PyTorch's
// CPU kernels do, and the scatters here add. Their gradients stay, as
// PyTorch's scatter gives every update the gradient at its target.
func lastWrites(targets []int64, u *nd.NDArray) *nd.NDArray {
	last := map[int64]int{}
	for i, t := range targets {
		last[t] = i
	}
	if len(last) == len(targets) {
		return u
	}
	n := len(targets)
	drop := make([]float64, n)
	for i := range drop {
		drop[i] = 1
	}
	for _, i := range last {
		drop[i] = 0
	}
	shape := make([]int, u.NDim())
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = n
	mask := nd.Reshape(nd.FromSlice(u.Context(), drop, n).AsType(u.DType()), shape...)
	// u − u·drop with the second term detached: the value of a dropped
	// update is 0, its gradient 1.
	return nd.Sub(u, nd.Mul(u.Detach(), mask))
}

// targetsAlong numbers, in idx's order, the element of data each index of
// a scatter along axis writes.
func targetsAlong(idx *nd.NDArray, shape []int, axis int) []int64 {
	v := idx.Int64s()
	is := idx.Shape()
	out := make([]int64, len(v))
	coord := make([]int, len(is))
	for i := range v {
		var t int64
		for d := range is {
			c := coord[d]
			if d == axis {
				c = int(v[i])
				if c < 0 {
					c += shape[axis]
				}
			}
			t = t*int64(shape[d]) + int64(c)
		}
		out[i] = t
		for d := len(is) - 1; d >= 0; d-- { // next coordinate
			coord[d]++
			if coord[d] < is[d] {
				break
			}
			coord[d] = 0
		}
	}
	return out
}

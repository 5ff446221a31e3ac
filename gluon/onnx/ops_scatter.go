package onnx

import (
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

// opScatterND writes (or adds, with reduction "add") each update slice at
// its index tuple: the rows it names are cleared, then the updates added.
func opScatterND(n *node, in []*nd.NDArray) []*nd.NDArray {
	data, idx, upd := in[0], in[1], in[2]
	rows, flat := rowsOf(n, data, idx, 0)
	u := nd.Reshape(upd, append([]int{rows.Size()}, flat.Shape()[1:]...)...)
	if upd.Size() != u.Size() {
		n.fail("updates of shape %v for indices %v and data %v", upd.Shape(), idx.Shape(), data.Shape())
	}
	_, u = match(flat, u)
	switch r := n.a.str("reduction", "none"); r {
	case "add":
	case "none":
		flat = clearRows(flat, rows)
		u = lastWrites(rows.Int64s(), u, true)
	case "mul":
		// Each named row times its updates, in rounds that name each row
		// at most once (a row named twice is multiplied in two rounds):
		// a factor of 1 on the rows a round does not name.
		var rounds [][]int64 // per round: positions in rows
		count := map[int64]int{}
		for p, v := range rows.Int64s() {
			r := count[v]
			count[v]++
			if r == len(rounds) {
				rounds = append(rounds, nil)
			}
			rounds[r] = append(rounds[r], int64(p))
		}
		y := flat
		for _, pos := range rounds {
			at := nd.FromSlice(flat.Context(), pos, len(pos))
			rr := nd.Take(rows, at, 0)
			factor := nd.IndexAdd(clearRows(nd.OnesLike(flat), rr), rr, nd.Take(u, at, 0), 0)
			y = nd.Mul(y, factor)
		}
		return []*nd.NDArray{nd.Reshape(y, data.Shape()...)}
	default:
		n.fail("reduction %q is not supported (none, add and mul are)", r)
	}
	return []*nd.NDArray{nd.Reshape(nd.IndexAdd(flat, rows, u, 0), data.Shape()...)}
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
// = updates[i] (or += with reduction "add"), negative indices counting
// from the end of the axis.
func opScatterElements(n *node, in []*nd.NDArray) []*nd.NDArray {
	data, idx, upd := in[0], in[1], in[2]
	axis := n.axis(n.a.int("axis", 0), data.NDim())
	if idx.NDim() != data.NDim() {
		n.fail("indices of rank %d for data of rank %d", idx.NDim(), data.NDim())
	}
	n.checkIndices(idx, data.Shape()[axis], "index")
	idx = wrapIndices(idx, data.Shape()[axis])
	_, upd = match(data, upd)
	switch r := n.a.str("reduction", "none"); r {
	case "add":
	case "none":
		hit := nd.ScatterAdd(nd.Zeros(data.Context(), nd.Float32, data.Shape()...), idx, nd.Ones(data.Context(), nd.Float32, idx.Shape()...), axis)
		data = nd.Where(nd.Equal(hit, nd.Reshape(nd.Scalar(data.Context(), nd.Float32, 0))), data, nd.ZerosLike(data))
		upd = lastWrites(targetsAlong(idx, data.Shape(), axis), upd, false)
	default:
		n.fail("reduction %q is not supported (none and add are)", r)
	}
	return []*nd.NDArray{nd.ScatterAdd(data, idx, upd, axis)}
}

// lastWrites zeroes the values of the updates (one per target: each
// row of upd with perRow, else each element) that a later update to the same target overwrites: a scatter
// without reduction keeps the last write, as ONNX Runtime and PyTorch's
// CPU kernels do, and the scatters here add. Their gradients stay, as
// PyTorch's scatter gives every update the gradient at its target.
func lastWrites(targets []int64, upd *nd.NDArray, perRow bool) *nd.NDArray {
	last := map[int64]int{}
	for i, t := range targets {
		last[t] = i
	}
	if len(last) == len(targets) {
		return upd
	}
	keep := make([]bool, len(targets))
	for _, i := range last {
		keep[i] = true
	}
	n := len(targets)
	shape := upd.Shape() // one target per element
	if perRow {          // one target per row
		shape = make([]int, upd.NDim())
		for i := range shape {
			shape[i] = 1
		}
		shape[0] = n
	}
	drop := make([]float64, n)
	for i, k := range keep {
		if !k {
			drop[i] = 1
		}
	}
	mask := nd.Reshape(nd.FromSlice(upd.Context(), drop, n).AsType(upd.DType()), shape...)
	// upd − upd·drop with the second term detached: the value of a
	// dropped update is 0, its gradient 1.
	return nd.Sub(upd, nd.Mul(upd.Detach(), mask))
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

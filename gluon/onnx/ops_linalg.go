package onnx

import (
	"slices"

	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
)

// Det (nd/linalg's) and Unique.

var linalgOps = map[string]opFunc{
	"Det":    func(_ *node, in []*nd.NDArray) []*nd.NDArray { return []*nd.NDArray{linalg.Det(in[0])} },
	"Unique": opUnique,
}

// opUnique finds the distinct elements, or with axis the distinct slices
// along it, on the host: sorted ascending (lexicographically for slices)
// or, with sorted 0, in order of first occurrence. Its outputs are the
// values (taken from the input, so in its type), the index of each one's
// first occurrence, each element's (slice's) index into the values, and
// the counts.
func opUnique(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	sorted := n.a.int("sorted", 1) != 0
	axis, byAxis := 0, false
	if _, ok := n.a["axis"]; ok {
		axis, byAxis = n.a.int("axis", 0), true
		if axis < 0 {
			axis += x.NDim()
		}
		if axis < 0 || axis >= x.NDim() {
			n.fail("axis %d out of range for shape %v", n.a.int("axis", 0), x.Shape())
		}
	}
	src := x
	if !byAxis {
		src = nd.Reshape(x, -1)
	}
	// rows[i] is slice i along the axis, flattened.
	moved := nd.SwapAxes(src, 0, axis)
	v := moved.AsType(nd.Float64).Float64s()
	count := src.Shape()[axis]
	width := 0
	if count > 0 {
		width = len(v) / count
	}
	row := func(i int) []float64 { return v[i*width : (i+1)*width] }
	order := make([]int, count)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return slices.Compare(row(i), row(j)) })
	var firsts []int // the first occurrence of each distinct row, ascending
	group := make([]int, count)
	for k, i := range order {
		if k == 0 || slices.Compare(row(order[k-1]), row(i)) != 0 {
			firsts = append(firsts, i)
		}
		group[i] = len(firsts) - 1
	}
	rank := make([]int, len(firsts)) // output position of each distinct row
	for g := range firsts {
		rank[g] = g
	}
	if !sorted {
		byFirst := slices.Clone(firsts)
		slices.Sort(byFirst)
		pos := map[int]int{}
		for p, i := range byFirst {
			pos[i] = p
		}
		for g, i := range firsts {
			rank[g] = pos[i]
		}
		firsts = byFirst
	}
	indices := make([]int64, len(firsts))
	for p, i := range firsts {
		indices[p] = int64(i)
	}
	inverse := make([]int64, count)
	counts := make([]int64, len(firsts))
	for i := range inverse {
		inverse[i] = int64(rank[group[i]])
		counts[rank[group[i]]]++
	}
	idx := nd.FromSlice(n.dev, indices, len(indices))
	y := nd.Take(src, idx, axis)
	return []*nd.NDArray{y, idx, nd.FromSlice(n.dev, inverse, count), nd.FromSlice(n.dev, counts, len(counts))}
}

package onnx

import (
	"cmp"
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
)

// Det (nd/linalg's), Unique, the signal windows and NonMaxSuppression.

var linalgOps = map[string]opFunc{
	"Det": func(_ *node, in []*nd.NDArray) []*nd.NDArray {
		if dt := in[0].DType(); dt.IsHalf() { // computed in float32
			return []*nd.NDArray{linalg.Det(in[0].AsType(nd.Float32)).AsType(dt)}
		}
		return []*nd.NDArray{linalg.Det(in[0])}
	},
	"Unique":            opUnique,
	"HannWindow":        window(func(x float64) float64 { return 0.5 - 0.5*math.Cos(x) }),
	"HammingWindow":     window(func(x float64) float64 { return 25.0/46 - 21.0/46*math.Cos(x) }),
	"BlackmanWindow":    window(func(x float64) float64 { return 0.42 - 0.5*math.Cos(x) + 0.08*math.Cos(2*x) }),
	"NonMaxSuppression": opNMS,
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
	// Row i is slice i along the axis, flattened in the other axes' order
	// (the axis moved to the front, the rest kept), compared as int64 for
	// integers (float64 would merge values above 2^53).
	perm := []int{axis}
	for d := range src.NDim() {
		if d != axis {
			perm = append(perm, d)
		}
	}
	moved := nd.Transpose(src, perm...)
	count := src.Shape()[axis]
	var compare func(i, j int) int
	if x.DType().IsFloat() {
		v := moved.AsType(nd.Float64).Float64s()
		width := len(v) / max(count, 1)
		compare = func(i, j int) int { return slices.Compare(v[i*width:(i+1)*width], v[j*width:(j+1)*width]) }
	} else {
		v := moved.AsType(nd.Int64).Int64s()
		width := len(v) / max(count, 1)
		compare = func(i, j int) int { return slices.Compare(v[i*width:(i+1)*width], v[j*width:(j+1)*width]) }
	}
	order := make([]int, count)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, compare)
	var firsts []int // the first occurrence of each distinct row, ascending
	group := make([]int, count)
	for k, i := range order {
		if k == 0 || compare(order[k-1], i) != 0 {
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

// window is a signal window of the scalar size input: f(2πn/N) for n < size,
// N the size when periodic (the default) and size − 1 otherwise, in
// output_datatype (float32 by default).
func window(f func(x float64) float64) opFunc {
	return func(n *node, in []*nd.NDArray) []*nd.NDArray {
		size := int(in[0].AsType(nd.Int64).Int64s()[0])
		if size < 0 {
			n.fail("negative size %d", size)
		}
		den := float64(size)
		if n.a.int("periodic", 1) == 0 {
			den = float64(size - 1)
		}
		v := make([]float64, size)
		for i := range v {
			v[i] = f(2 * math.Pi * float64(i) / den)
		}
		if size == 1 && den == 0 {
			v[0] = 1
		}
		out := nd.FromSlice(n.dev, v, size)
		dt, err := dtypeOf(int64(n.a.int("output_datatype", 1)))
		if err != nil {
			n.fail("%v", err)
		}
		return []*nd.NDArray{out.AsType(dt)}
	}
}

// opNMS is NonMaxSuppression, on the host: for each batch and class, the
// boxes above score_threshold in descending score order, each kept unless
// its IoU with one kept before exceeds iou_threshold, up to
// max_output_boxes_per_class (0 or absent: none); boxes are corners in
// either order, or centres and sizes with center_point_box 1. The output
// lists [batch, class, box] triples.
func opNMS(n *node, in []*nd.NDArray) []*nd.NDArray {
	boxes, scores := in[0], in[1]
	scalar := func(i int, def float64) float64 {
		if i < len(in) && in[i] != nil && in[i].Size() > 0 {
			return in[i].AsType(nd.Float64).Float64s()[0]
		}
		return def
	}
	maxOut := 0 // int64 (INT64_MAX, exporters' "no limit", does not survive float64)
	if len(in) > 2 && in[2] != nil && in[2].Size() > 0 {
		maxOut = int(min(in[2].AsType(nd.Int64).Int64s()[0], math.MaxInt32))
	}
	iouMax := scalar(3, 0)
	hasScore := len(in) > 4 && in[4] != nil && in[4].Size() > 0
	minScore := scalar(4, 0)
	bs, ss := boxes.Shape(), scores.Shape()
	if len(bs) != 3 || bs[2] != 4 || len(ss) != 3 || ss[0] != bs[0] || ss[2] != bs[1] {
		n.fail("boxes %v and scores %v: want [B, N, 4] and [B, C, N]", bs, ss)
	}
	b := boxes.AsType(nd.Float64).Float64s()
	sc := scores.AsType(nd.Float64).Float64s()
	centre := n.a.int("center_point_box", 0) == 1
	corners := func(i int) (y1, x1, y2, x2 float64) {
		v := b[4*i : 4*i+4]
		if centre {
			return v[1] - v[3]/2, v[0] - v[2]/2, v[1] + v[3]/2, v[0] + v[2]/2
		}
		return math.Min(v[0], v[2]), math.Min(v[1], v[3]), math.Max(v[0], v[2]), math.Max(v[1], v[3])
	}
	iou := func(i, j int) float64 {
		ay1, ax1, ay2, ax2 := corners(i)
		by1, bx1, by2, bx2 := corners(j)
		h := math.Max(0, math.Min(ay2, by2)-math.Max(ay1, by1))
		w := math.Max(0, math.Min(ax2, bx2)-math.Max(ax1, bx1))
		inter := h * w
		union := (ay2-ay1)*(ax2-ax1) + (by2-by1)*(bx2-bx1) - inter
		if union <= 0 {
			return 0
		}
		return inter / union
	}
	var out []int64
	nb, nc, nbox := bs[0], ss[1], bs[1]
	for bi := range nb {
		for ci := range nc {
			var cand []int
			for k := range nbox {
				if !hasScore || sc[(bi*nc+ci)*nbox+k] > minScore {
					cand = append(cand, k)
				}
			}
			slices.SortStableFunc(cand, func(p, q int) int {
				return cmp.Compare(sc[(bi*nc+ci)*nbox+q], sc[(bi*nc+ci)*nbox+p])
			})
			var kept []int
			for _, k := range cand {
				if len(kept) >= maxOut {
					break
				}
				ok := true
				for _, j := range kept {
					if iou(bi*nbox+k, bi*nbox+j) > iouMax {
						ok = false
						break
					}
				}
				if ok {
					kept = append(kept, k)
					out = append(out, int64(bi), int64(ci), int64(k))
				}
			}
		}
	}
	if out == nil {
		out = []int64{}
	}
	return []*nd.NDArray{nd.FromSlice(n.dev, out, len(out)/3, 3)}
}

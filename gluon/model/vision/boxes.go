package vision

import (
	"cmp"
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
)

// Box operations for detection models, as torchvision.ops: boxes are
// [N, 4] arrays of corners (x1, y1, x2, y2) with x1 ≤ x2 and y1 ≤ y2.

// BoxArea returns the areas [N] of boxes [N, 4] (torchvision's
// box_area), differentiably.
func BoxArea(boxes *nd.NDArray) *nd.NDArray {
	checkBoxes("vision.BoxArea", boxes)
	x1, y1, x2, y2 := corners(boxes)
	return nd.Mul(nd.Sub(x2, x1), nd.Sub(y2, y1))
}

// BoxIoU returns the intersection over union [N, M] of every pair of
// boxes a [N, 4] and b [M, 4] (torchvision's box_iou), differentiably.
func BoxIoU(a, b *nd.NDArray) *nd.NDArray {
	checkBoxes("vision.BoxIoU", a)
	checkBoxes("vision.BoxIoU", b)
	ax1, ay1, ax2, ay2 := corners(a)
	bx1, by1, bx2, by2 := corners(b)
	col := func(v *nd.NDArray) *nd.NDArray { return nd.ExpandDims(v, 1) } // [N, 1]
	row := func(v *nd.NDArray) *nd.NDArray { return nd.ExpandDims(v, 0) } // [1, M]
	w := clampMin0(nd.Sub(tieMin(col(ax2), row(bx2)), tieMax(col(ax1), row(bx1))))
	h := clampMin0(nd.Sub(tieMin(col(ay2), row(by2)), tieMax(col(ay1), row(by1))))
	inter := nd.Mul(w, h)
	union := nd.Sub(nd.Add(col(BoxArea(a)), row(BoxArea(b))), inter)
	return nd.Div(inter, union)
}

// tieMax and tieMin are the maximum and minimum as (a + b ± |a − b|)/2:
// equal arguments share the gradient, as torch's max and min split it
// (boxes that share an edge, or are clipped to one border).
func tieMax(a, b *nd.NDArray) *nd.NDArray {
	return nd.MulScalar(nd.Add(nd.Add(a, b), nd.Abs(nd.Sub(a, b))), 0.5)
}

func tieMin(a, b *nd.NDArray) *nd.NDArray {
	return nd.MulScalar(nd.Sub(nd.Add(a, b), nd.Abs(nd.Sub(a, b))), 0.5)
}

// clampMin0 is torch's clamp(min=0): the gradient passes where x ≥ 0.
func clampMin0(x *nd.NDArray) *nd.NDArray {
	return nd.Where(nd.GreaterEqual(x, nd.ZerosLike(x)), x, nd.ZerosLike(x))
}

// BoxConvert converts boxes [N, 4] between the formats "xyxy" (corners),
// "xywh" (a corner and the size) and "cxcywh" (the centre and the size),
// as torchvision's box_convert, differentiably.
func BoxConvert(boxes *nd.NDArray, from, to string) *nd.NDArray {
	const op = "vision.BoxConvert"
	checkBoxes(op, boxes)
	a, b, c, d := corners(boxes)
	var x1, y1, x2, y2 *nd.NDArray
	switch from {
	case "xyxy":
		x1, y1, x2, y2 = a, b, c, d
	case "xywh":
		x1, y1, x2, y2 = a, b, nd.Add(a, c), nd.Add(b, d)
	case "cxcywh":
		hw, hh := nd.MulScalar(c, 0.5), nd.MulScalar(d, 0.5)
		x1, y1, x2, y2 = nd.Sub(a, hw), nd.Sub(b, hh), nd.Add(a, hw), nd.Add(b, hh)
	default:
		nd.Panicf(op, nd.ErrArgument, "format %q: want xyxy, xywh or cxcywh", from)
	}
	var out []*nd.NDArray
	switch to {
	case "xyxy":
		out = []*nd.NDArray{x1, y1, x2, y2}
	case "xywh":
		out = []*nd.NDArray{x1, y1, nd.Sub(x2, x1), nd.Sub(y2, y1)}
	case "cxcywh":
		out = []*nd.NDArray{nd.MulScalar(nd.Add(x1, x2), 0.5), nd.MulScalar(nd.Add(y1, y2), 0.5), nd.Sub(x2, x1), nd.Sub(y2, y1)}
	default:
		nd.Panicf(op, nd.ErrArgument, "format %q: want xyxy, xywh or cxcywh", to)
	}
	return nd.Stack(out, 1)
}

// NMS returns the indices (Int64) of the boxes [N, 4] that non-maximum
// suppression keeps, in decreasing order of their scores [N]: each box is
// kept unless a kept box with a higher score overlaps it with an IoU above
// iouThreshold (torchvision's nms; equal scores keep their order). It runs
// on the host.
func NMS(boxes, scores *nd.NDArray, iouThreshold float64) *nd.NDArray {
	const op = "vision.NMS"
	checkBoxes(op, boxes)
	n := boxes.Shape()[0]
	if scores == nil || scores.NDim() != 1 || scores.Shape()[0] != n {
		nd.Panicf(op, nd.ErrShape, "scores must be a vector of the %d boxes", n)
	}
	b := boxes.AsType(nd.Float64).Float64s()
	s := scores.AsType(nd.Float64).Float64s()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	// Descending, NaN first (as torch's descending sort), ties in order.
	slices.SortStableFunc(order, func(i, j int) int {
		ni, nj := math.IsNaN(s[i]), math.IsNaN(s[j])
		if ni || nj {
			return cmp.Compare(b2i(nj), b2i(ni))
		}
		return cmp.Compare(s[j], s[i])
	})
	area := func(i int) float64 { return (b[4*i+2] - b[4*i]) * (b[4*i+3] - b[4*i+1]) }
	iou := func(i, j int) float64 {
		w := min(b[4*i+2], b[4*j+2]) - max(b[4*i], b[4*j])
		h := min(b[4*i+3], b[4*j+3]) - max(b[4*i+1], b[4*j+1])
		inter := max(w, 0) * max(h, 0)
		return inter / (area(i) + area(j) - inter)
	}
	removed := make([]bool, n)
	keep := []int64{}
	for k, i := range order {
		if removed[i] {
			continue
		}
		keep = append(keep, int64(i))
		for _, j := range order[k+1:] {
			if !removed[j] && iou(i, j) > iouThreshold {
				removed[j] = true
			}
		}
	}
	return boxes.Session().FromSlice(boxes.Context(), keep, len(keep))
}

// BatchedNMS is NMS within each class of idxs [N] (an integer vector):
// boxes of different classes never suppress each other (torchvision's
// batched_nms; its shift by the largest coordinate fails for negative
// coordinates, this one by the coordinates' range does not). The indices
// come in decreasing order of score.
func BatchedNMS(boxes, scores, idxs *nd.NDArray, iouThreshold float64) *nd.NDArray {
	const op = "vision.BatchedNMS"
	checkBoxes(op, boxes)
	n := boxes.Shape()[0]
	if idxs == nil || idxs.NDim() != 1 || idxs.Shape()[0] != n || !idxs.DType().IsInt() {
		nd.Panicf(op, nd.ErrShape, "class indices must be an integer vector of the %d boxes", n)
	}
	if n == 0 {
		return NMS(boxes, scores, iouThreshold)
	}
	// Shift each class's boxes apart: by the class times one more than the
	// coordinates' range, so that no two classes' boxes overlap.
	b := boxes.AsType(nd.Float64)
	v := b.Float64s()
	span := slices.Max(v) - slices.Min(v) + 1
	shift := nd.MulScalar(idxs.AsType(nd.Float64), span)
	moved := nd.Add(b, nd.ExpandDims(shift, 1))
	return NMS(moved, scores, iouThreshold)
}

func checkBoxes(op string, b *nd.NDArray) {
	if b == nil || b.NDim() != 2 || b.Shape()[1] != 4 {
		var shape []int
		if b != nil {
			shape = b.Shape()
		}
		nd.Panicf(op, nd.ErrShape, "boxes of shape %v: want [N, 4]", shape)
	}
}

// corners returns the four columns of boxes [N, 4].
func corners(b *nd.NDArray) (c0, c1, c2, c3 *nd.NDArray) {
	col := func(i int) *nd.NDArray { return nd.Squeeze(nd.SliceAxis(b, i, i+1, 1), 1) }
	return col(0), col(1), col(2), col(3)
}

// RoIAlignOpts configures RoIAlign as torchvision's roi_align arguments:
// the output size, the scale from box to feature-map coordinates, the
// sampling points per bin and axis (0 or negative: ⌈box size / bins⌉ for
// each box, torchvision's −1) and Aligned (shift the box by half a pixel,
// Detectron2's correct form).
type RoIAlignOpts struct {
	OutH, OutW    int
	SpatialScale  float64 // 0 means 1
	SamplingRatio int
	Aligned       bool
}

// RoIAlign pools each box of rois [K, 5] (batch index, x1, y1, x2, y2) out
// of the NCHW feature map x into an OutH×OutW grid, averaging bilinear
// samples in each bin (torchvision's roi_align, Mask R-CNN's RoIAlign):
// [K, C, OutH, OutW], differentiable with respect to x. The sample
// positions and weights are worked out on the host; the sampling is one
// Take over the feature map, which holds C × K·OutH·OutW·S·4 values for S
// samples per bin.
func RoIAlign(x, rois *nd.NDArray, o RoIAlignOpts) *nd.NDArray {
	const op = "vision.RoIAlign"
	if x == nil || x.NDim() != 4 {
		nd.Panicf(op, nd.ErrShape, "the feature map must be NCHW")
	}
	if rois == nil || rois.NDim() != 2 || rois.Shape()[1] != 5 {
		nd.Panicf(op, nd.ErrShape, "rois must be [K, 5] (batch index, x1, y1, x2, y2)")
	}
	if o.OutH <= 0 || o.OutW <= 0 {
		nd.Panicf(op, nd.ErrArgument, "output size %dx%d must be positive", o.OutH, o.OutW)
	}
	scale := o.SpatialScale
	if scale == 0 {
		scale = 1
	}
	xs := x.Shape()
	n, c, h, w := xs[0], xs[1], xs[2], xs[3]
	r := rois.AsType(nd.Float64).Float64s()
	k := len(r) / 5
	offset := 0.0
	if o.Aligned {
		offset = 0.5
	}
	type box struct {
		b, gh, gw      int
		y1, x1, bh, bw float64
	}
	boxes := make([]box, k)
	most := 1
	for i := range boxes {
		v := r[5*i : 5*i+5]
		bi := int(v[0])
		if v[0] != float64(bi) || bi < 0 || bi >= n {
			nd.Panicf(op, nd.ErrArgument, "roi %d has batch index %g, outside [0, %d)", i, v[0], n)
		}
		x1, y1 := v[1]*scale-offset, v[2]*scale-offset
		rw, rh := v[3]*scale-offset-x1, v[4]*scale-offset-y1
		if !o.Aligned {
			rw, rh = math.Max(rw, 1), math.Max(rh, 1)
		}
		bh, bw := rh/float64(o.OutH), rw/float64(o.OutW)
		gh, gw := o.SamplingRatio, o.SamplingRatio
		if o.SamplingRatio <= 0 {
			gh, gw = int(math.Ceil(rh/float64(o.OutH))), int(math.Ceil(rw/float64(o.OutW)))
		}
		boxes[i] = box{bi, gh, gw, y1, x1, bh, bw}
		most = max(most, gh*gw)
	}
	slots := most * 4
	cells := k * o.OutH * o.OutW
	idx := make([]int64, cells*slots)
	wt := make([]float64, cells*slots)
	for i, bx := range boxes {
		count := float64(max(bx.gh*bx.gw, 1))
		for ph := range o.OutH {
			for pw := range o.OutW {
				base := ((i*o.OutH+ph)*o.OutW + pw) * slots
				s := 0
				for iy := range bx.gh {
					y := bx.y1 + float64(ph)*bx.bh + (float64(iy)+0.5)*bx.bh/float64(bx.gh)
					for ix := range bx.gw {
						xx := bx.x1 + float64(pw)*bx.bw + (float64(ix)+0.5)*bx.bw/float64(bx.gw)
						ids, ws := bilinearTaps(y, xx, h, w)
						for t := range 4 {
							idx[base+4*s+t] = int64(bx.b*h*w) + ids[t]
							wt[base+4*s+t] = ws[t] / count
						}
						s++
					}
				}
			}
		}
	}
	sess, dev := x.Session(), x.Context()
	flat := nd.Reshape(nd.Transpose(x, 1, 0, 2, 3), c, n*h*w)
	ix := sess.FromSlice(dev, idx, len(idx))
	wa := sess.FromSlice(dev, wt, len(wt))
	if x.DType() != nd.Float64 {
		wa = wa.AsType(x.DType())
	}
	taps := nd.Mul(nd.Take(flat, ix, 1), wa) // [C, cells·slots]
	pooled := nd.Sum(nd.Reshape(taps, c, k, o.OutH, o.OutW, slots), 4)
	return nd.Transpose(pooled, 1, 0, 2, 3)
}

// bilinearTaps are torchvision's bilinear sampling of a point (y, x) of an
// h×w map: 0 outside [−1, h]×[−1, w], the point clamped to the map
// otherwise, as four flat indices and weights.
func bilinearTaps(y, x float64, h, w int) ([4]int64, [4]float64) {
	var ids [4]int64
	var ws [4]float64
	if y < -1 || y > float64(h) || x < -1 || x > float64(w) {
		return ids, ws
	}
	y, x = math.Max(y, 0), math.Max(x, 0)
	yl, xl := int(y), int(x)
	yh, xh := yl+1, xl+1
	if yl >= h-1 {
		yl, yh, y = h-1, h-1, float64(h-1)
	}
	if xl >= w-1 {
		xl, xh, x = w-1, w-1, float64(w-1)
	}
	ly, lx := y-float64(yl), x-float64(xl)
	hy, hx := 1-ly, 1-lx
	ids = [4]int64{int64(yl*w + xl), int64(yl*w + xh), int64(yh*w + xl), int64(yh*w + xh)}
	ws = [4]float64{hy * hx, hy * lx, ly * hx, ly * lx}
	return ids, ws
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

package onnx

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// opResize runs Resize (opsets 10 to 19) as ONNX's reference computes it:
// along every axis whose size or sampling changes, each output position x
// maps to an input coordinate by coordinate_transformation_mode
// (half_pixel, pytorch_half_pixel, align_corners, asymmetric,
// tf_half_pixel_for_nn), and reads its neighbours with the weights of
// mode (nearest with nearest_mode, linear, or cubic with cubic_coeff_a and
// exclude_outside), the neighbours clamped to the edges. tf_crop_and_resize,
// antialias, axes and keep_aspect_ratio_policy are not supported.
func opResize(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	mode := n.a.str("mode", "nearest")
	ctm := n.a.str("coordinate_transformation_mode", "half_pixel")
	switch {
	case mode != "nearest" && mode != "linear" && mode != "cubic":
		n.fail("unknown mode %q", mode)
	case ctm == "tf_crop_and_resize":
		n.fail("coordinate_transformation_mode tf_crop_and_resize is not supported")
	case n.a.int("antialias", 0) != 0:
		n.fail("antialias is not supported")
	case len(n.a.ints("axes")) > 0:
		n.fail("the axes attribute is not supported")
	case n.a.str("keep_aspect_ratio_policy", "stretch") != "stretch":
		n.fail("keep_aspect_ratio_policy %q is not supported", n.a.str("keep_aspect_ratio_policy", ""))
	}
	var scales []float64
	var sizes []int
	if len(in) == 2 { // opset 10: X, scales
		scales = in[1].AsType(nd.Float64).Float64s()
	} else {
		if len(in) > 2 && in[2] != nil && in[2].Size() > 0 {
			scales = in[2].AsType(nd.Float64).Float64s()
		}
		if len(in) > 3 && in[3] != nil && in[3].Size() > 0 {
			sizes = intsOf(in[3])
		}
	}
	r := x.NDim()
	switch {
	case (scales == nil) == (sizes == nil):
		n.fail("give exactly one of scales and sizes")
	case scales != nil && len(scales) != r, sizes != nil && len(sizes) != r:
		n.fail("%d scales and %d sizes for an input of rank %d", len(scales), len(sizes), r)
	}
	y := x
	for d := range r {
		l := x.Shape()[d]
		var out int
		var s float64
		if sizes != nil {
			out, s = sizes[d], float64(sizes[d])/float64(l)
		} else {
			s = scales[d]
			// The size in float32 arithmetic, as ONNX Runtime and the
			// exporting frameworks compute it: an exporter that writes a
			// size as the float32 scale out/in gets out back (float64 can
			// land one below).
			out = int(math.Floor(float64(float32(l) * float32(s))))
		}
		if out <= 0 || l == 0 || !(s > 0) || math.IsInf(s, 0) || out > 1<<24 {
			n.fail("axis %d: cannot resize %d elements by scale %g to %d", d, l, s, out)
		}
		if out == l && s == 1 {
			continue
		}
		idx, w := resizeTaps(n, l, out, s, mode, ctm)
		// The intermediate stays: a recorded backward pass reads it.
		y = nd.ResampleAxis(y, d, idx, w)
	}
	return []*nd.NDArray{y}
}

// resizeTaps returns the input indices and weights of the out positions
// of one axis of length l resized by scale s.
func resizeTaps(n *node, l, out int, s float64, mode, ctm string) ([][]int64, [][]float64) {
	taps := map[string]int{"nearest": 1, "linear": 2, "cubic": 4}[mode]
	exclude := n.a.int("exclude_outside", 0) != 0
	a := n.a.float("cubic_coeff_a", -0.75)
	nearest := n.a.str("nearest_mode", "round_prefer_floor")
	idx := make([][]int64, taps)
	var w [][]float64
	if mode != "nearest" {
		w = make([][]float64, taps)
	}
	for k := range taps {
		idx[k] = make([]int64, out)
		if w != nil {
			w[k] = make([]float64, out)
		}
	}
	width := s * float64(l) // the output length as ONNX's reference computes it
	for o := range out {
		xo := float64(o)
		var src float64
		switch ctm {
		case "half_pixel":
			src = (xo+0.5)/s - 0.5
		case "pytorch_half_pixel":
			src = -0.5
			if width != 1 {
				src = (xo+0.5)/s - 0.5
			}
		case "align_corners":
			if width != 1 {
				src = xo * float64(l-1) / (width - 1)
			}
		case "asymmetric":
			src = xo / s
		case "tf_half_pixel_for_nn":
			src = (xo + 0.5) / s
		default:
			n.fail("unknown coordinate_transformation_mode %q", ctm)
		}
		clamp := func(i int) int64 { return int64(min(max(i, 0), l-1)) }
		f := math.Floor(src)
		ratio := src - f
		if ratio == 0 { // an integer coordinate: its neighbours end on it
			ratio = 1
			f--
		}
		if mode == "nearest" {
			up := false // take f+1 rather than f
			switch nearest {
			case "round_prefer_floor":
				up = ratio > 0.5
			case "round_prefer_ceil":
				up = ratio >= 0.5
			case "floor":
				up = ratio == 1
			case "ceil":
				up = true
			default:
				n.fail("unknown nearest_mode %q", nearest)
			}
			if up {
				f++
			}
			idx[0][o] = clamp(int(f))
			continue
		}
		var coeffs []float64
		first := int(f)
		if mode == "linear" {
			coeffs = []float64{1 - ratio, ratio}
		} else {
			first--
			r1, r2 := ratio+1, 2-ratio
			coeffs = []float64{
				((a*r1-5*a)*r1+8*a)*r1 - 4*a,
				((a+2)*ratio-(a+3))*ratio*ratio + 1,
				((a+2)*(1-ratio)-(a+3))*(1-ratio)*(1-ratio) + 1,
				((a*r2-5*a)*r2+8*a)*r2 - 4*a,
			}
		}
		if exclude {
			total := 0.0
			for k := range coeffs {
				if i := first + k; i < 0 || i >= l {
					coeffs[k] = 0
				}
				total += coeffs[k]
			}
			for k := range coeffs {
				coeffs[k] /= total
			}
		}
		for k, c := range coeffs {
			idx[k][o], w[k][o] = clamp(first+k), c
		}
	}
	return idx, w
}

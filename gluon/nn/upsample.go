package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Upsample resizes NCHW feature maps to a size or by a scale factor,
// torch.nn.Upsample (Gluon's contrib BilinearResize2D and nearest
// UpSampling): nd.Interpolate with Opts. Decoders, U-Nets and feature
// pyramids use it with Scale {2, 2}.
type Upsample struct {
	gluon.BlockMeta
	Opts nd.InterpolateOpts
}

// NewUpsample returns an Upsample layer. Options that Interpolate would
// refuse (neither or both of Size and Scale, a size or scale that is not
// positive, AlignCorners or Antialias with nearest sampling, the two
// together) panic here, as a wrong layer definition.
func NewUpsample(o nd.InterpolateOpts) *Upsample {
	const op = "nn.NewUpsample"
	sizeSet, scaleSet := o.Size != [2]int{}, o.Scale != [2]float64{}
	switch {
	case sizeSet == scaleSet:
		nd.Panicf(op, nd.ErrArgument, "set exactly one of Size (%v) and Scale (%v)", o.Size, o.Scale)
	case sizeSet && (o.Size[0] <= 0 || o.Size[1] <= 0):
		nd.Panicf(op, nd.ErrArgument, "size %v must be positive", o.Size)
	case scaleSet && !(o.Scale[0] > 0 && o.Scale[1] > 0 && !math.IsInf(o.Scale[0], 0) && !math.IsInf(o.Scale[1], 0)):
		nd.Panicf(op, nd.ErrArgument, "scale %v must be positive and finite", o.Scale)
	case o.Mode != nd.InterpNearest && o.Mode != nd.InterpBilinear:
		nd.Panicf(op, nd.ErrArgument, "unknown mode %d", o.Mode)
	case o.Mode == nd.InterpNearest && (o.AlignCorners || o.Antialias):
		nd.Panicf(op, nd.ErrArgument, "AlignCorners and Antialias apply to bilinear sampling only")
	case o.AlignCorners && o.Antialias:
		nd.Panicf(op, nd.ErrArgument, "AlignCorners and Antialias cannot be combined")
	}
	return &Upsample{BlockMeta: gluon.NewBlockMeta("upsample"), Opts: o}
}

// Forward resizes x [N, C, H, W].
func (u *Upsample) Forward(x *nd.NDArray) *nd.NDArray {
	if x.NDim() != 4 {
		nd.Panicf("nn.Upsample", nd.ErrShape, "want NCHW input, got %v", x.Shape())
	}
	return nd.Interpolate(x, u.Opts)
}

// ExportONNX writes Resize as torch.onnx writes nn.Upsample: nearest with
// asymmetric coordinates rounded down, bilinear as linear with half_pixel
// (or align_corners) coordinates; Scale as the scales input, Size (and
// Scale with AlignCorners) as the sizes input, the batch and channel sizes
// read from the input's shape.
// Antialiasing has no opset-17 form.
func (u *Upsample) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	o := u.Opts
	if sg, ok := g.(gluon.ONNXShapes); ok && (o.Antialias || (o.Scale != [2]float64{} && !o.AlignCorners)) {
		shape, err := sg.Shape(x)
		if err != nil {
			return "", err
		}
		if o.Antialias || !exactScales(shape, o.Scale) {
			return exportTaps(g, x, shape, o), nil
		}
	}
	attrs := map[string]any{"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
	if o.Mode == nd.InterpBilinear {
		if o.Antialias {
			return "", fmt.Errorf("Upsample with Antialias has no ONNX form before opset 18")
		}
		attrs = map[string]any{"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
		if o.AlignCorners {
			attrs["coordinate_transformation_mode"] = "align_corners"
		}
	}
	shape := g.Op("Shape", []string{x}, nil, 1)[0]
	slice := func(lo, hi int64) string {
		return g.Op("Slice", []string{shape, g.Const([]int64{lo}, 1), g.Const([]int64{hi}, 1)}, nil, 1)[0]
	}
	var hw string
	switch {
	case o.Size != [2]int{}:
		hw = g.Const([]int64{int64(o.Size[0]), int64(o.Size[1])}, 2)
	case !o.AlignCorners:
		sc := [2]float32{float32(o.Scale[0]), float32(o.Scale[1])}
		if sg, ok := g.(gluon.ONNXShapes); ok {
			in, err := sg.Shape(x)
			if err != nil {
				return "", err
			}
			for i := range sc {
				if sc[i], err = onnxScale(in[2+i], o.Scale[i]); err != nil {
					return "", err
				}
			}
		}
		scales := g.Const([]float32{1, 1, sc[0], sc[1]}, 4)
		return g.Op("Resize", []string{x, "", scales}, attrs, 1)[0], nil
	default:
		// ONNX's align_corners divides by the unrounded output length
		// (input × scale) where PyTorch divides by the rounded one: give
		// the rounded sizes, floor(H × scale) and floor(W × scale).
		f := g.Op("Cast", []string{slice(2, 4)}, map[string]any{"to": 1}, 1)[0] // FLOAT
		f = g.Op("Mul", []string{f, g.Const([]float32{float32(o.Scale[0]), float32(o.Scale[1])}, 2)}, nil, 1)[0]
		f = g.Op("Floor", []string{f}, nil, 1)[0]
		hw = g.Op("Cast", []string{f}, map[string]any{"to": 7}, 1)[0] // INT64
	}
	sizes := g.Op("Concat", []string{slice(0, 2), hw}, map[string]any{"axis": 0}, 1)[0]
	return g.Op("Resize", []string{x, "", "", sizes}, attrs, 1)[0], nil
}

// onnxScale is the float32 scale nearest to s whose ONNX output size,
// floor(in × scale), is nd's floor(in × s): float32(s) alone can round
// below a whole product (0.7 becomes 0.69999999, and 10 × it gives 6
// rows instead of 7). The product is checked in float64 and in float32,
// as runtimes compute it either way; a scale already right is kept as it
// is, so that exact scales stay exact.
func onnxScale(in int, s float64) (float32, error) {
	want := math.Floor(float64(in) * s)
	size := func(v float32) (float64, float64) {
		return math.Floor(float64(in) * float64(v)), math.Floor(float64(float32(in) * v))
	}
	v := float32(s)
	for range 64 {
		d, f := size(v)
		switch {
		case d < want || f < want:
			v = math.Nextafter32(v, float32(math.Inf(1)))
			continue
		case d > want || f > want:
			v = math.Nextafter32(v, 0)
			continue
		}
		return v, nil
	}
	return 0, fmt.Errorf("Upsample scale %g on a size %d has no float32 ONNX scale giving %g", s, in, want)
}

// exactScales reports whether each scale resizes its axis (the output
// differs from the input) to exactly input × scale, where ONNX's Resize
// by scales samples as nd does in every runtime. A scale that rounds
// the size down, or leaves it unchanged (nd, as PyTorch, copies such a
// bilinear axis; runtimes differ), is written as gathers instead.
func exactScales(shape []int, scale [2]float64) bool {
	for i, s := range scale {
		in := float64(shape[len(shape)-2+i])
		out := math.Floor(in * s)
		if out == in || out != in*s {
			return false
		}
	}
	return true
}

// exportTaps writes the resize as nd computes it, one axis at a time
// (nd.InterpolateTaps, gatherTaps): the width first, then the height. It
// depends on no runtime's reading of Resize.
func exportTaps(g gluon.ONNXGraph, x string, shape []int, o nd.InterpolateOpts) string {
	for _, axis := range []int{1, 0} {
		idx, w := nd.InterpolateTaps(shape, axis, o, nd.Float32)
		x = gatherTaps(g, x, axis, idx, w)
		shape = slices.Clone(shape)
		shape[len(shape)-2+axis] = len(idx[0])
	}
	return x
}

// gatherTaps writes a resampling of one spatial axis of an NCHW value (0
// the height, 1 the width) in ResampleAxis's form: for each tap a Gather
// at constant positions times constant weights (none: weight 1), summed.
func gatherTaps(g gluon.ONNXGraph, x string, axis int, idx [][]int64, w [][]float64) string {
	n := len(idx[0])
	wshape := []int{1, 1, 1, 1}
	wshape[2+axis] = n
	var sum string
	for k := range idx {
		t := g.Op("Gather", []string{x, g.Const(idx[k], n)}, map[string]any{"axis": 2 + axis}, 1)[0]
		if w != nil {
			wk := make([]float32, n)
			for i, v := range w[k] {
				wk[i] = float32(v)
			}
			t = g.Op("Mul", []string{t, g.Const(wk, wshape...)}, nil, 1)[0]
		}
		if sum == "" {
			sum = t
		} else {
			sum = g.Op("Add", []string{sum, t}, nil, 1)[0]
		}
	}
	return sum
}

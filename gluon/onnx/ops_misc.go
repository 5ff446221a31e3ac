package onnx

import (
	"math"

	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
	"google.golang.org/protobuf/proto"
)

// Older and rarer ops that exported models still carry: Upsample (Resize's
// predecessor), LRN (AlexNet-era normalisation), MeanVarianceNormalization,
// Compress, ReverseSequence, NonZero and EyeLike.

var miscOps = map[string]opFunc{
	"Upsample":                  opUpsample,
	"LRN":                       opLRN,
	"MeanVarianceNormalization": opMVN,
	"Compress":                  opCompress,
	"ReverseSequence":           opReverseSequence,
	"NonZero":                   opNonZero,
	"EyeLike":                   opEyeLike,
	"GridSample":                opGridSample,
}

// opGridSample is nd.GridSample: modes bilinear (linear) and nearest,
// padding zeros, border or reflection.
func opGridSample(n *node, in []*nd.NDArray) []*nd.NDArray {
	o := nd.GridSampleOpts{AlignCorners: n.a.int("align_corners", 0) != 0}
	switch m := n.a.str("mode", "bilinear"); m {
	case "bilinear", "linear":
	case "nearest":
		o.Nearest = true
	default:
		n.fail("mode %q is not supported (bilinear and nearest are)", m)
	}
	switch p := n.a.str("padding_mode", "zeros"); p {
	case "zeros":
	case "border":
		o.Padding = nd.GridBorder
	case "reflection":
		o.Padding = nd.GridReflection
	default:
		n.fail("padding_mode %q is not one of zeros, border and reflection", p)
	}
	x, grid := in[0], in[1]
	if grid.Context() != x.Context() {
		grid = grid.CopyTo(x.Context())
	}
	if grid.DType() != x.DType() { // the output takes the image's type
		grid = grid.AsType(x.DType())
	}
	return []*nd.NDArray{nd.GridSample(x, grid, o)}
}

// opUpsample is Resize with asymmetric coordinates (nearest rounding
// down): scales are an attribute before opset 9 and an input after.
func opUpsample(n *node, in []*nd.NDArray) []*nd.NDArray {
	var scales *nd.NDArray
	if at, ok := n.a["scales"]; ok {
		f := at.GetFloats()
		v := make([]float32, len(f))
		copy(v, f)
		scales = nd.FromSlice(n.dev, v, len(v))
	} else {
		scales = n.scalarInputAny(in, 1, "scales")
	}
	mode := n.a.str("mode", "nearest")
	switch mode {
	case "nearest":
	case "linear", "bilinear":
		mode = "linear"
	default:
		n.fail("mode %q is not supported (nearest and linear are)", mode)
	}
	a := attrs{}
	for k, v := range n.a {
		a[k] = v
	}
	str := func(name, v string) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
	}
	a["mode"] = str("mode", mode)
	a["coordinate_transformation_mode"] = str("coordinate_transformation_mode", "asymmetric")
	a["nearest_mode"] = str("nearest_mode", "floor")
	delete(a, "scales")
	r := &node{n: n.n, a: a, dev: n.dev, opset: n.opset}
	return opResize(r, []*nd.NDArray{in[0], nil, scales})
}

// scalarInputAny returns input i, which must be present.
func (n *node) scalarInputAny(in []*nd.NDArray, i int, what string) *nd.NDArray {
	if i >= len(in) || in[i] == nil {
		n.fail("%s (input %d) is missing", what, i)
	}
	return in[i]
}

// opLRN is local response normalisation across channels:
// x / (bias + alpha/size · Σ x²)^beta, the sum over the size channels
// around each (floor((size−1)/2) before, ceil after).
func opLRN(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	size := n.a.int("size", 0)
	if size < 1 || x.NDim() < 3 {
		n.fail("size %d for an input of shape %v: want a positive size and [N, C, ...]", size, x.Shape())
	}
	alpha, beta, bias := n.a.float("alpha", 1e-4), n.a.float("beta", 0.75), n.a.float("bias", 1)
	c := x.Shape()[1]
	sq := nd.Square(x)
	w := make([][2]int, x.NDim())
	w[1] = [2]int{(size - 1) / 2, size - 1 - (size-1)/2}
	padded := nd.Pad(sq, w, nd.PadConstant, 0)
	var sum *nd.NDArray
	for k := range size {
		sl := nd.SliceAxis(padded, k, k+c, 1)
		if sum == nil {
			sum = sl
		} else {
			sum = nd.Add(sum, sl)
		}
	}
	den := nd.PowScalar(nd.AddScalar(nd.MulScalar(sum, alpha/float64(size)), bias), beta)
	return []*nd.NDArray{nd.Div(x, den)}
}

// opMVN normalises to zero mean and unit variance over axes (default
// [0, 2, 3]): (x − mean) / sqrt(var), the variance biased.
func opMVN(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	axes := n.a.ints("axes")
	if axes == nil {
		axes = []int{0, 2, 3}
	}
	for i, a := range axes {
		axes[i] = n.axis(a, x.NDim())
	}
	mean := nd.MeanKeepDims(x, axes...)
	d := nd.Sub(x, mean)
	v := nd.MeanKeepDims(nd.Square(d), axes...)
	return []*nd.NDArray{nd.Div(d, nd.Sqrt(v))}
}

// opCompress keeps the slices along axis (the flattened input without
// one) where the condition is true; a condition shorter than the axis
// keeps none past its end.
func opCompress(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, cond := in[0], in[1]
	at, hasAxis := n.a["axis"]
	if !hasAxis {
		x = nd.Reshape(x, x.Size())
	}
	axis := 0
	if hasAxis {
		axis = n.axis(int(at.GetI()), x.NDim())
	}
	var keep []int64
	for i, v := range cond.AsType(nd.Float64).Float64s() {
		if i >= x.Shape()[axis] {
			if v != 0 {
				n.fail("condition of %d entries for an axis of %d", cond.Size(), x.Shape()[axis])
			}
			continue
		}
		if v != 0 {
			keep = append(keep, int64(i))
		}
	}
	return []*nd.NDArray{nd.Take(x, nd.FromSlice(x.Context(), keep, len(keep)), axis)}
}

// opReverseSequence reverses, for each batch entry, its first
// sequence_lens[b] steps along time_axis (batch_axis the entries).
func opReverseSequence(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, lens := in[0], intsOf(in[1])
	tAx, bAx := n.axis(n.a.int("time_axis", 0), x.NDim()), n.axis(n.a.int("batch_axis", 1), x.NDim())
	if tAx == bAx || x.NDim() < 2 {
		n.fail("time axis %d and batch axis %d of a rank-%d input", tAx, bAx, x.NDim())
	}
	s := x.Shape()
	if len(lens) != s[bAx] {
		n.fail("%d sequence lengths for a batch of %d", len(lens), s[bAx])
	}
	for _, l := range lens {
		if l < 0 || l > s[tAx] {
			n.fail("sequence length %d outside [0, %d]", l, s[tAx])
		}
	}
	// A Gather along the time axis whose index, at every position, is the
	// reversed time step of its batch entry.
	idx := make([]int64, x.Size())
	strides := make([]int, len(s))
	st := 1
	for d := len(s) - 1; d >= 0; d-- {
		strides[d] = st
		st *= s[d]
	}
	for p := range idx {
		t, b := p/strides[tAx]%s[tAx], p/strides[bAx]%s[bAx]
		if t < lens[b] {
			t = lens[b] - 1 - t
		}
		idx[p] = int64(t)
	}
	return []*nd.NDArray{nd.Gather(x, nd.FromSlice(x.Context(), idx, s...), tAx)}
}

// opNonZero lists the positions of the nonzero elements, one row per
// axis (NumPy's nonzero, row-major order).
func opNonZero(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	v := x.AsType(nd.Float64).Float64s()
	s := x.Shape()
	if len(s) == 0 {
		s = []int{1} // a 0-d input counts as one element
	}
	var hits []int
	for p, e := range v {
		if e != 0 || math.IsNaN(e) {
			hits = append(hits, p)
		}
	}
	out := make([]int64, len(s)*len(hits))
	for k, p := range hits {
		for d := len(s) - 1; d >= 0; d-- {
			out[d*len(hits)+k] = int64(p % s[d])
			p /= s[d]
		}
	}
	return []*nd.NDArray{nd.FromSlice(n.dev, out, len(s), len(hits))}
}

// opEyeLike is a 2-D array of the input's shape with ones on diagonal k
// (dtype the input's, or the attribute's).
func opEyeLike(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	if x.NDim() != 2 {
		n.fail("input of shape %v: want 2-D", x.Shape())
	}
	dt := x.DType()
	if at, ok := n.a["dtype"]; ok {
		var err error
		if dt, err = dtypeOf(at.GetI()); err != nil {
			n.fail("%v", err)
		}
	}
	r, c, k := x.Shape()[0], x.Shape()[1], n.a.int("k", 0)
	v := make([]float64, r*c)
	for i := range r {
		if j := i + k; j >= 0 && j < c {
			v[i*c+j] = 1
		}
	}
	return []*nd.NDArray{nd.FromSlice(x.Context(), v, r, c).AsType(dt)}
}

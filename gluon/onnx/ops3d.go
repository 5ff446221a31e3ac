package onnx

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// The 3-D forms of Conv, MaxPool and AveragePool (inputs [N, C, D, H, W]),
// on nd.Conv3D and nd.Pool3D.

// geom3D reads a 3-D op's kernel, strides, dilations and padding (pads,
// or auto_pad computed from the input's spatial size) as [depth, height,
// width] values: the padding before and after each axis.
func geom3D(n *node, in [3]int, kernel []int) (k, stride, dil, lo, hi [3]int) {
	three := func(v []int, def int) [3]int {
		if len(v) == 3 {
			return [3]int{v[0], v[1], v[2]}
		}
		if len(v) != 0 {
			n.fail("%v: want 3 values for a 3-D op", v)
		}
		return [3]int{def, def, def}
	}
	k = three(kernel, 1)
	stride, dil = three(n.a.ints("strides"), 1), three(n.a.ints("dilations"), 1)
	switch p := n.a.ints("pads"); len(p) {
	case 0:
	case 6:
		lo, hi = [3]int{p[0], p[1], p[2]}, [3]int{p[3], p[4], p[5]}
	default:
		n.fail("pads %v: want 6 values for a 3-D op", p)
	}
	for i := range 3 {
		if stride[i] < 1 || dil[i] < 1 || k[i] < 1 || lo[i] < 0 || hi[i] < 0 {
			n.fail("kernel %v, strides %v, dilations %v, pads %v %v: want positive kernels, strides and dilations and no negative pads", k, stride, dil, lo, hi)
		}
	}
	if ap := n.a.str("auto_pad", "NOTSET"); ap == "SAME_UPPER" || ap == "SAME_LOWER" {
		for i := range 3 {
			out := (in[i] + stride[i] - 1) / stride[i]
			total := max((out-1)*stride[i]+(k[i]-1)*dil[i]+1-in[i], 0)
			small, big := total/2, total-total/2
			if ap == "SAME_UPPER" {
				lo[i], hi[i] = small, big
			} else {
				lo[i], hi[i] = big, small
			}
		}
	}
	return
}

// pad3D pads x's three spatial axes explicitly where the padding is not
// symmetric (or more than limit, when limit is set) and returns what is
// left for the op: the symmetric padding, or none.
func pad3D(x *nd.NDArray, lo, hi [3]int, limit *[3]int, value float64) (*nd.NDArray, [3]int) {
	sym := lo == hi
	for i := range 3 {
		sym = sym && (limit == nil || lo[i] <= limit[i])
	}
	if sym {
		return x, lo
	}
	w := [][2]int{{}, {}, {lo[0], hi[0]}, {lo[1], hi[1]}, {lo[2], hi[2]}}
	return nd.Pad(x, w, nd.PadConstant, value), [3]int{}
}

func opConv3D(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, w := in[0], in[1]
	if w.NDim() != 5 {
		n.fail("weight of shape %v for a 3-D input: want [out, in/groups, kd, kh, kw]", w.Shape())
	}
	s, ws := x.Shape(), w.Shape()
	_, stride, dil, lo, hi := geom3D(n, [3]int{s[2], s[3], s[4]}, ws[2:])
	x, pad := pad3D(x, lo, hi, nil, 0)
	return []*nd.NDArray{nd.Conv3D(x, w, optional(in, 2), nd.Conv3DOpts{Stride: stride, Pad: pad, Dilate: dil, Groups: n.a.int("group", 1)})}
}

func opPool3D(n *node, t nd.PoolType, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	dt := x.DType()
	if !dt.IsFloat() {
		x = x.AsType(nd.Float32)
	}
	s := x.Shape()
	k, stride, dil, lo, hi := geom3D(n, [3]int{s[2], s[3], s[4]}, n.a.ints("kernel_shape"))
	if dil != [3]int{1, 1, 1} {
		n.fail("dilations %v: dilated pooling is not supported", dil)
	}
	for i := range 3 {
		if lo[i] >= k[i] || hi[i] >= k[i] {
			n.fail("pads %v %v for kernel %v: a pad as large as the kernel makes windows of padding only", lo, hi, k)
		}
	}
	include := n.a.int("count_include_pad", 0) != 0
	value := 0.0
	if t == nd.PoolMax {
		value = math.Inf(-1)
	}
	limit := [3]int{k[0] / 2, k[1] / 2, k[2] / 2}
	x2, pad := pad3D(x, lo, hi, &limit, value)
	o := nd.Pool3DOpts{Type: t, Kernel: k, Stride: stride, Pad: pad, CeilMode: n.a.int("ceil_mode", 0) != 0, ExcludePad: !include}
	y := nd.Pool3D(x2, o)
	if x2 != x && t == nd.PoolAvg && !include {
		// Padded explicitly, the windows count the padding: divide by the
		// share of each window that lies inside the input.
		o.ExcludePad = false
		inside, _ := pad3D(nd.Ones(x.Context(), x.DType(), x.Shape()...), lo, hi, &limit, 0)
		y = nd.Div(nd.Pool3D(x2, o), nd.Pool3D(inside, o))
	}
	if o.CeilMode {
		y = ceilCrop(y, 2, []int{s[2], s[3], s[4]}, k[:], stride[:], lo[:], hi[:])
	}
	if y.DType() != dt {
		y = y.AsType(dt)
	}
	return []*nd.NDArray{y}
}

// opConvTranspose3D is ConvTranspose on [N, C, D, H, W]: computed with
// the symmetric part of the padding and cropped by the rest; output_shape,
// when given, sets the padding (the extra row at the end with SAME_UPPER
// or no auto_pad, as for 2-D).
func opConvTranspose3D(n *node, in []*nd.NDArray) []*nd.NDArray {
	x, w := in[0], in[1]
	if w.NDim() != 5 {
		n.fail("weight of shape %v for a 3-D input: want [in, out/groups, kd, kh, kw]", w.Shape())
	}
	s, ws := x.Shape(), w.Shape()
	k, stride, dil, lo, hi := geom3D(n, [3]int{}, ws[2:])
	var outPad [3]int
	if op := n.a.ints("output_padding"); len(op) == 3 {
		outPad = [3]int{op[0], op[1], op[2]}
	} else if len(op) != 0 {
		n.fail("output_padding %v: want 3 values for a 3-D op", op)
	}
	if os := n.a.ints("output_shape"); len(os) > 0 || n.a.str("auto_pad", "NOTSET") == "SAME_UPPER" || n.a.str("auto_pad", "NOTSET") == "SAME_LOWER" {
		want := [3]int{s[2] * stride[0], s[3] * stride[1], s[4] * stride[2]} // SAME: input size × stride
		if len(os) == 3 {
			want = [3]int{os[0], os[1], os[2]}
		} else if len(os) != 0 {
			n.fail("output_shape %v: want 3 values for a 3-D op", os)
		}
		for i := range 3 {
			total := stride[i]*(s[2+i]-1) + outPad[i] + (k[i]-1)*dil[i] + 1 - want[i]
			if total < 0 {
				outPad[i] -= total
				total = 0
			}
			if n.a.str("auto_pad", "NOTSET") == "SAME_LOWER" {
				lo[i], hi[i] = total-total/2, total/2
			} else {
				lo[i], hi[i] = total/2, total-total/2
			}
		}
	}
	var pad [3]int
	for i := range 3 {
		pad[i] = min(lo[i], hi[i])
	}
	y := nd.Conv3DTranspose(x, w, optional(in, 2), nd.Conv3DTransposeOpts{Stride: stride, Pad: pad, OutputPad: outPad, Dilate: dil, Groups: n.a.int("group", 1)})
	for i := range 3 {
		if extraLo, extraHi := lo[i]-pad[i], hi[i]-pad[i]; extraLo > 0 || extraHi > 0 {
			size := y.Shape()[2+i]
			y = nd.SliceAxis(y, extraLo, size-extraHi, 2+i)
		}
	}
	return []*nd.NDArray{y}
}

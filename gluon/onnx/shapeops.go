package onnx

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
)

// intsOf reads an integer (shape, axes, index) array on the host.
func intsOf(a *nd.NDArray) []int {
	v := a.Int64s()
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// hostInts makes a 1-D Int64 array on n's context.
func hostInts(n *node, v []int) *nd.NDArray {
	w := make([]int64, len(v))
	for i, x := range v {
		w[i] = int64(x)
	}
	return nd.FromSlice(n.dev, w, len(w))
}

func normAxis(a, rank int) int {
	if a < 0 {
		return a + rank
	}
	return a
}

var shapeOps = map[string]opFunc{
	"Flatten": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		s := in[0].Shape()
		ax := normAxis(n.a.int("axis", 1), len(s))
		outer := 1
		for _, d := range s[:ax] {
			outer *= d
		}
		return []*nd.NDArray{nd.Reshape(in[0], outer, -1)}
	},
	"Reshape": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		shape, s := intsOf(in[1]), in[0].Shape()
		for i, d := range shape {
			if d == 0 && n.a.int("allowzero", 0) == 0 {
				shape[i] = s[i]
			}
		}
		return []*nd.NDArray{nd.Reshape(in[0], shape...)}
	},
	"Transpose": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		perm := n.a.ints("perm")
		if perm == nil {
			for i := in[0].NDim() - 1; i >= 0; i-- {
				perm = append(perm, i)
			}
		}
		return []*nd.NDArray{nd.Transpose(in[0], perm...)}
	},
	"Concat": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		arrs := slices.Clone(in)
		for i := 1; i < len(arrs); i++ {
			_, arrs[i] = match(arrs[0], arrs[i])
		}
		return []*nd.NDArray{nd.Concat(arrs, normAxis(n.a.int("axis", 0), in[0].NDim()))}
	},
	"Shape": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		s := in[0].Shape()
		lo, hi := normAxis(n.a.int("start", 0), len(s)), len(s)
		if _, ok := n.a["end"]; ok {
			hi = normAxis(n.a.int("end", len(s)), len(s))
		}
		return []*nd.NDArray{hostInts(n, s[max(lo, 0):min(hi, len(s))])}
	},
	"Gather": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x, idx := in[0], in[1]
		ax := normAxis(n.a.int("axis", 0), x.NDim())
		if idx.NDim() == 0 { // a scalar index drops the axis
			y := nd.Take(x, nd.Reshape(idx.AsType(nd.Int64), 1), ax, nd.TakeWrap)
			return []*nd.NDArray{nd.Squeeze(y, ax)}
		}
		return []*nd.NDArray{nd.Take(x, idx.AsType(nd.Int64), ax, nd.TakeWrap)}
	},
	"Unsqueeze": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		axes := n.a.ints("axes")
		if len(in) > 1 && in[1] != nil {
			axes = intsOf(in[1])
		}
		rank := in[0].NDim() + len(axes)
		for i := range axes {
			axes[i] = normAxis(axes[i], rank)
		}
		slices.Sort(axes)
		shape := in[0].Shape()
		for _, a := range axes {
			shape = slices.Insert(shape, a, 1)
		}
		return []*nd.NDArray{nd.Reshape(in[0], shape...)}
	},
	"Squeeze": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		axes := n.a.ints("axes")
		if len(in) > 1 && in[1] != nil {
			axes = intsOf(in[1])
		}
		s := in[0].Shape()
		var shape []int
		for i, d := range s {
			drop := (len(axes) == 0 && d == 1) || slices.ContainsFunc(axes, func(a int) bool { return normAxis(a, len(s)) == i })
			if !drop {
				shape = append(shape, d)
			}
		}
		return []*nd.NDArray{nd.Reshape(in[0], shape...)}
	},
	"Slice": opSlice,
	"Constant": func(n *node, _ []*nd.NDArray) []*nd.NDArray {
		if at, ok := n.a["value"]; ok {
			a, err := constArray(at.GetT(), n.dev)
			if err != nil {
				n.fail("%v", err)
			}
			return []*nd.NDArray{a}
		}
		if at, ok := n.a["value_float"]; ok {
			return []*nd.NDArray{nd.Reshape(nd.FromSlice(n.dev, []float32{at.GetF()}))}
		}
		if at, ok := n.a["value_int"]; ok {
			return []*nd.NDArray{nd.Reshape(nd.FromSlice(n.dev, []int64{at.GetI()}))}
		}
		if at, ok := n.a["value_ints"]; ok {
			return []*nd.NDArray{nd.FromSlice(n.dev, slices.Clone(at.GetInts()))}
		}
		if at, ok := n.a["value_floats"]; ok {
			return []*nd.NDArray{nd.FromSlice(n.dev, slices.Clone(at.GetFloats()))}
		}
		n.fail("a Constant without a supported value attribute")
		return nil
	},
	"ConstantOfShape": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		shape := intsOf(in[0])
		dt, v := nd.Float32, 0.0
		if at, ok := n.a["value"]; ok {
			c, err := constArray(at.GetT(), n.dev)
			if err != nil {
				n.fail("%v", err)
			}
			dt, v = c.DType(), scalarOf(c)
		}
		return []*nd.NDArray{nd.Full(n.dev, dt, v, shape...)}
	},
	"Expand": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		shape, s := intsOf(in[1]), in[0].Shape()
		// NumPy broadcasting of the two shapes, aligned on the right.
		out := make([]int, max(len(shape), len(s)))
		for i := range out {
			a, b := 1, 1
			if j := i - (len(out) - len(s)); j >= 0 {
				a = s[j]
			}
			if j := i - (len(out) - len(shape)); j >= 0 {
				b = shape[j]
			}
			out[i] = max(a, b)
		}
		x := in[0]
		if len(s) < len(out) {
			x = nd.Reshape(x, append(slices.Repeat([]int{1}, len(out)-len(s)), s...)...)
		}
		return []*nd.NDArray{nd.BroadcastTo(x, out...)}
	},
	"Split": func(n *node, in []*nd.NDArray) []*nd.NDArray {
		x := in[0]
		ax := normAxis(n.a.int("axis", 0), x.NDim())
		sizes := n.a.ints("split")
		if len(in) > 1 && in[1] != nil {
			sizes = intsOf(in[1])
		}
		if sizes == nil {
			k := len(n.n.GetOutput())
			for range k {
				sizes = append(sizes, x.Shape()[ax]/k)
			}
		}
		var outs []*nd.NDArray
		off := 0
		for _, sz := range sizes {
			outs = append(outs, nd.SliceAxis(x, off, off+sz, ax))
			off += sz
		}
		return outs
	},
}

// opSlice is ONNX Slice (opset 10+: starts, ends, axes, steps as inputs),
// with its clamping of out-of-range starts and ends.
func opSlice(n *node, in []*nd.NDArray) []*nd.NDArray {
	x := in[0]
	s := x.Shape()
	var starts, ends, axes, steps []int
	if len(in) == 1 { // opset < 10: attributes
		starts, ends, axes = n.a.ints("starts"), n.a.ints("ends"), n.a.ints("axes")
	} else {
		starts, ends = intsOf(in[1]), intsOf(in[2])
	}
	if len(in) > 3 && in[3] != nil {
		axes = intsOf(in[3])
	} else if axes == nil {
		for i := range starts {
			axes = append(axes, i)
		}
	}
	if len(in) > 4 && in[4] != nil {
		steps = intsOf(in[4])
	}
	ranges := make([]nd.Range, len(s))
	for i := range ranges {
		ranges[i] = nd.All()
	}
	for i, a := range axes {
		a = normAxis(a, len(s))
		dim, step := s[a], 1
		if steps != nil {
			step = steps[i]
		}
		lo, hi := starts[i], ends[i]
		if lo < 0 {
			lo += dim
		}
		if hi < 0 && hi > math.MinInt32 {
			hi += dim
		}
		if step > 0 {
			lo, hi = min(max(lo, 0), dim), min(max(hi, 0), dim)
			hi = max(hi, lo)
		} else {
			lo, hi = min(max(lo, 0), dim-1), min(max(hi, -1), dim-1)
			if hi < 0 { // through index 0: nd's end index -dim-1 (Python's -len-1)
				hi = -dim - 1
			}
		}
		ranges[a] = nd.SpanStep(lo, hi, step)
	}
	return []*nd.NDArray{nd.Slice(x, ranges...)}
}

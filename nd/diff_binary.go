package nd

import "slices"

// binaryDiff is the differentiable backward function of a binary op: the
// full-shape (broadcast) gradients of a and b from the output gradient g
// and the output out, made of recorded ops; those need does not ask for
// may be nil.
type binaryDiff func(g, a, b, out *NDArray, need []bool) (ga, gb *NDArray)

// maskBinaryOps are the binary ops whose derivatives are piecewise
// constant: their differentiable backward multiplies g by the derivatives
// their own backward gives (see maskDiffOps).
var maskBinaryOps = map[string]bool{"Maximum": true, "Minimum": true, "Mod": true, "Fmod": true}

// binaryDiffs are the differentiable backward functions of the binary
// ops, by op name (filled in init: they call the ops that use them).
var binaryDiffs map[string]binaryDiff

func init() {
	binaryDiffs = map[string]binaryDiff{
		"Add": func(g, _, _, _ *NDArray, _ []bool) (*NDArray, *NDArray) { return g, g },
		"Sub": func(g, _, _, _ *NDArray, need []bool) (ga, gb *NDArray) {
			if need[1] {
				gb = Neg(g)
			}
			return g, gb
		},
		"Mul": func(g, a, b, _ *NDArray, need []bool) (ga, gb *NDArray) {
			if need[0] {
				ga = Mul(g, b)
			}
			if need[1] {
				gb = Mul(g, a)
			}
			return
		},
		"Div": func(g, _, b, out *NDArray, need []bool) (ga, gb *NDArray) {
			if need[0] {
				ga = Div(g, b)
			}
			if need[1] {
				gb = Neg(Mul(g, Div(out, b)))
			}
			return
		},
		"DivScalar": func(g, _, b, _ *NDArray, need []bool) (*NDArray, *NDArray) { return Div(g, b), nil },
		"Pow": func(g, a, b, out *NDArray, need []bool) (ga, gb *NDArray) {
			if need[0] {
				ga = Mul(g, Mul(b, Pow(a, AddScalar(b, -1))))
			}
			if need[1] {
				gb = Mul(g, Mul(out, Log(a)))
			}
			return
		},
		"Atan2": func(g, a, b, _ *NDArray, need []bool) (ga, gb *NDArray) {
			den := Add(Square(a), Square(b))
			if need[0] {
				ga = Div(Mul(g, b), den)
			}
			if need[1] {
				gb = Neg(Div(Mul(g, a), den))
			}
			return
		},
		"Hypot": func(g, a, b, out *NDArray, need []bool) (ga, gb *NDArray) {
			if need[0] {
				ga = Div(Mul(g, a), out)
			}
			if need[1] {
				gb = Div(Mul(g, b), out)
			}
			return
		},
	}
}

// binaryDiffFor returns the differentiable backward function of the
// binary op named op on a and b, whose own backward is grad (nil when it
// has none).
func binaryDiffFor(op string, a, b, out *NDArray, grad func(g, out *NDArray, need []bool) (ga, gb *NDArray)) BackwardFunc {
	var d binaryDiff
	switch {
	case maskBinaryOps[op]:
		d = func(g, _, _, out *NDArray, need []bool) (ga, gb *NDArray) {
			ma, mb := grad(OnesLike(g), out, need)
			if ma != nil {
				ga = Mul(g, ma)
			}
			if mb != nil {
				gb = Mul(g, mb)
			}
			return
		}
	case binaryDiffs[op] != nil:
		d = binaryDiffs[op]
	default:
		return nil
	}
	return func(g *NDArray, need []bool) []*NDArray {
		ga, gb := d(g, a, b, out, need)
		res := make([]*NDArray, 2)
		if need[0] && ga != nil {
			res[0] = sumToRecorded(ga, a.shape)
		}
		if need[1] && gb != nil {
			res[1] = sumToRecorded(gb, b.shape)
		}
		return res
	}
}

// sumToRecorded is sumTo made of recorded ops: g, of a broadcast shape,
// summed back to shape.
func sumToRecorded(g *NDArray, shape []int) *NDArray {
	if slices.Equal(g.shape, shape) {
		return g
	}
	lead := len(g.shape) - len(shape)
	var axes []int
	for i := range g.shape {
		if j := i - lead; j < 0 || (shape[j] == 1 && g.shape[i] != 1) {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 {
		return Reshape(g, shape...)
	}
	return Reshape(SumKeepDims(g, axes...), shape...)
}

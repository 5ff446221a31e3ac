package nd

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// The activations of sequence and transformer models, composed from
// elementwise ops (so every backend has them and their gradients come from
// the tape; GELU takes the backend's fused kernels where it has them). Where an activation has a kink, the gradient at the kink is
// PyTorch's.

// lifted validates the inputs of a composite op and returns them lifted
// into the op's session (see Session.lift), so that every array the op
// makes belongs to it. Nil inputs stay nil.
func lifted(op string, arrs ...*NDArray) []*NDArray {
	var live []*NDArray
	for _, a := range arrs {
		if a != nil {
			live = append(live, a)
		}
	}
	if len(live) == 0 {
		fail(op, ErrArgument, "nil input")
	}
	defer checkLive(op, live...).done()
	checkContexts(op, live...)
	checkFloat(op, live...)
	return sessionOf(op, live...).lift(op, arrs...)
}

// positive returns the Bool mask x > 0.
func positive(x *NDArray) *NDArray {
	zero := x.Session().Full(x.st.dev, x.dtype, 0, 1)
	defer zero.Release()
	return Greater(x, zero)
}

// LeakyReLU returns x where x > 0 and slope·x elsewhere (PyTorch's
// leaky_relu, Gluon's LeakyReLU). The gradient at 0 is slope.
func LeakyReLU(x *NDArray, slope float64) *NDArray {
	const op = "LeakyReLU"
	x = lifted(op, x)[0]
	if x.dtype.IsHalf() || !(slope > 0 && slope <= 1) { // (a zero slope: 0·Inf would be NaN)
		return Where(positive(x), x, MulScalar(x, slope))
	}
	// max(x, slope·x) is x where x > 0 and slope·x elsewhere, bit for bit
	// (−0 and NaN included), in two passes; the backward pass selects g or
	// slope·g by x > 0.
	sx := unaryRaw(op, backend.MulScalar, x, slope, 0)
	y := binaryRaw(op, backend.Maximum, x, sx)
	sx.Release()
	RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
		pos := positiveRaw(op, x)
		sg := unaryRaw(op, backend.MulScalar, g, slope, 0)
		defer release(pos, sg)
		return []*NDArray{whereRaw(op, pos, g, sg)}
	}, func(g *NDArray, _ []bool) []*NDArray { // g times 1 or slope, a constant of the pass
		pos := positiveRaw(op, x)
		one, s := x.Session().Full(x.st.dev, x.dtype, 1), x.Session().Full(x.st.dev, x.dtype, slope)
		defer release(pos, one, s)
		return []*NDArray{Mul(g, whereRaw(op, pos, one, s))}
	})
	return y
}

// positiveRaw returns the Bool mask x > 0, unrecorded.
func positiveRaw(op string, x *NDArray) *NDArray {
	zero := x.Session().Full(x.st.dev, x.dtype, 0)
	defer zero.Release()
	return binaryInto(op, backend.Greater, x, zero, Bool)
}

// PReLU is LeakyReLU with a learnable slope per channel: alpha holds one
// slope per index of x's axis (or a single slope, shape [1]), PyTorch's
// PReLU with num_parameters = channels. The gradient reaches alpha.
func PReLU(x, alpha *NDArray, axis int) *NDArray {
	return dispatch("PReLU", castWidest, []*NDArray{x, alpha}, func(in []*NDArray) *NDArray { return pReLUOp(in[0], in[1], axis) })
}

func pReLUOp(x, alpha *NDArray, axis int) *NDArray {
	const op = "PReLU"
	in := lifted(op, x, alpha)
	x, alpha = in[0], in[1]
	ax := normAxis(op, axis, x.NDim())
	if alpha.NDim() != 1 || (alpha.shape[0] != 1 && alpha.shape[0] != x.shape[ax]) {
		fail(op, ErrShape, "alpha of shape %v for input %v: want [1] or [%d] (axis %d)", alpha.shape, x.shape, x.shape[ax], ax)
	}
	return Where(positive(x), x, Mul(x, Reshape(alpha, channelShape(x.NDim(), ax, alpha.shape[0])...)))
}

// channelShape is the shape that broadcasts a per-channel vector of
// length c along axis ax of an n-dimensional array.
func channelShape(n, ax, c int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	s[ax] = c
	return s
}

// ELU returns x where x > 0 and alpha·(eˣ − 1) elsewhere (PyTorch's elu).
// The gradient at 0 is alpha.
func ELU(x *NDArray, alpha float64) *NDArray {
	const op = "ELU"
	return dispatch(op, castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray {
		x := lifted(op, in[0])[0]
		zero := x.Session().Full(x.st.dev, x.dtype, 0, 1) // Minimum's backward reads it
		neg := MulScalar(Expm1(Minimum(x, zero)), alpha)  // no overflow where x is large
		return Where(positive(x), x, neg)
	})
}

// GELU returns x·Φ(x), Φ the standard normal CDF: 0.5·x·(1 + erf(x/√2)),
// or with tanhApprox PyTorch's approximate="tanh" form
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
//
// Where the backend has fused kernels (backend.GELUKernels; the CPU does)
// and they are on (SetFusedKernels), forward and backward are one pass each,
// computed in float64 per value; otherwise the formula is composed from
// elementwise ops.
func GELU(x *NDArray, tanhApprox bool) *NDArray {
	return dispatch("GELU", castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray { return gELUOp(in[0], tanhApprox) })
}

func gELUOp(x *NDArray, tanhApprox bool) *NDArray {
	const op = "GELU"
	defer checkLive(op, x).done()
	checkFloat(op, x)
	if k, ok := kernelsOf[backend.GELUKernels](x.be()); ok && fusedKernels() {
		sess := sessionOf(op, x)
		y := newArray(op, sess, x.st.dev, x.dtype, x.shape)
		gate := newArray(op, sess, x.st.dev, x.dtype, x.shape)
		k.GELU(x.dtype, tanhApprox, y.arg(), gate.arg(), x.arg(), x.Size())
		RecordDiff(op, y, []*NDArray{x}, func(g *NDArray, _ []bool) []*NDArray {
			dx := newArray(op, g.Session(), x.st.dev, x.dtype, x.shape)
			backwardKernels(g, k).GELUBackward(x.dtype, tanhApprox, dx.arg(), g.arg(), x.arg(), gate.arg(), x.Size())
			return []*NDArray{dx}
		}, func(g *NDArray, _ []bool) []*NDArray { return []*NDArray{Mul(g, geluDerivative(x, tanhApprox))} })
		if !sess.IsRecording() {
			gate.Release()
		}
		return y
	}
	x = lifted(op, x)[0]
	var phi *NDArray
	if tanhApprox {
		inner := MulScalar(Add(x, MulScalar(PowScalar(x, 3), 0.044715)), math.Sqrt(2/math.Pi))
		phi = AddScalar(Tanh(inner), 1)
	} else {
		phi = AddScalar(Erf(MulScalar(x, 1/math.Sqrt2)), 1)
	}
	return MulScalar(Mul(x, phi), 0.5)
}

// SiLU returns x·σ(x) (the swish activation, PyTorch's silu); a
// half-precision x is computed in float32 and rounded once.
func SiLU(x *NDArray) *NDArray {
	return dispatch("SiLU", castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray {
		x := lifted("SiLU", in[0])[0]
		return Mul(x, Sigmoid(x))
	})
}

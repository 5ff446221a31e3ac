package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// BiasRelu returns max(x + bias, 0), where bias [C] is added along axis
// (x's size on axis is C): the end of a convolution or dense layer with a
// ReLU, computed in one pass over x (and one over the gradients backward)
// where the backend has fused kernels, as Relu(Add(x, bias)) elsewhere.
// Gradients flow to x and bias. As with Relu, a NaN or −0 sum passes
// through and its gradient is 0.
func BiasRelu(x, bias *NDArray, axis int) *NDArray {
	return dispatch("BiasRelu", castWidest, []*NDArray{x, bias}, func(in []*NDArray) *NDArray { return biasReluOp(in[0], in[1], axis) })
}

func biasReluOp(x, bias *NDArray, axis int) *NDArray {
	const op = "BiasRelu"
	defer checkInputs(op, x, bias).done()
	checkFloat(op, x)
	ax := normAxis(op, axis, x.NDim())
	c := x.shape[ax]
	if bias.NDim() != 1 || bias.shape[0] != c {
		fail(op, ErrShape, "bias of shape %v for input %v with %d channels on axis %d", bias.shape, x.shape, c, ax)
	}
	bk, ok := kernelsOf[backend.BiasReluKernels](x.be())
	if !ok || !fusedKernels() {
		if s := sessionOf(op, x, bias); s != defaultSession {
			l := s.lift(op, x, bias) // Reshape(bias) must be s's
			x, bias = l[0], l[1]
		}
		shape := make([]int, x.NDim())
		for i := range shape {
			shape[i] = 1
		}
		shape[ax] = c
		return Relu(Add(x, Reshape(bias, shape...)))
	}
	dev, dt := x.st.dev, x.dtype
	sess := sessionOf(op, x, bias)
	p := backend.ChannelParams{Outer: numel(x.shape[:ax]), C: c, Inner: numel(x.shape[ax+1:]), DType: dt, Device: dev}
	y := newArray(op, sess, dev, dt, x.shape)
	bk.BiasRelu(p, y.arg(), x.arg(), bias.arg())
	RecordDiff(op, y, []*NDArray{x, bias}, func(g *NDArray, need []bool) []*NDArray {
		dx := newArray(op, sess, dev, dt, x.shape)
		var db *NDArray
		var dbArg backend.Arg
		if need[1] {
			db = newArray(op, sess, dev, dt, []int{c})
			dbArg = db.arg()
		}
		backwardKernels(g, bk).BiasReluBackward(p, dx.arg(), dbArg, g.arg(), y.arg())
		if !need[0] {
			dx.Release()
			dx = nil
		}
		return []*NDArray{dx, db}
	}, func(g *NDArray, need []bool) []*NDArray {
		dx := Mul(g, positiveMask(y))
		var db *NDArray
		if need[1] {
			var axes []int
			for i := range x.shape {
				if i != ax {
					axes = append(axes, i)
				}
			}
			db = Reshape(SumKeepDims(dx, axes...), c)
		}
		if !need[0] {
			dx = nil
		}
		return []*NDArray{dx, db}
	})
	return y
}

// AddRelu returns max(a + b, 0) for a and b of one shape (a residual
// block's end), in one pass over the values where the backend has the
// bias + ReLU kernels, as Relu(Add(a, b)) elsewhere (operands that
// broadcast, integers, half precision): the same bits either way. Both
// inputs get the same gradient, the output gradient where the sum is
// positive and 0 elsewhere (a NaN or −0 sum passes through with gradient
// 0, as with Relu). The fused backward pass reads the output, as Exp's
// does: releasing it before the backward pass is an ErrReleased error, and
// changing it in place changes the gradients.
func AddRelu(a, b *NDArray) *NDArray {
	if a == nil || b == nil || !a.dtype.IsFloat() || !b.dtype.IsFloat() || a.dtype.IsHalf() || b.dtype.IsHalf() {
		// Integers, and half precision, which Add and Relu widen inside
		// each op (a fused op would keep float32 copies on the tape).
		return Relu(Add(a, b))
	}
	return dispatch("AddRelu", castWidest, []*NDArray{a, b}, func(in []*NDArray) *NDArray { return addReluOp(in[0], in[1]) })
}

func addReluOp(a, b *NDArray) *NDArray {
	const op = "AddRelu"
	defer checkInputs(op, a, b).done()
	bk, ok := kernelsOf[backend.BiasReluKernels](a.be())
	if !ok || !fusedKernels() || a.dtype != b.dtype || !slices.Equal(a.shape, b.shape) || a.Size() == 0 || a.dtype.IsHalf() {
		return Relu(Add(a, b))
	}
	dev, dt, shape := a.st.dev, a.dtype, a.shape
	sess := sessionOf(op, a, b)
	// b as a bias with one channel per value: max(a[i] + b[i], 0).
	p := backend.ChannelParams{Outer: 1, C: a.Size(), Inner: 1, DType: dt, Device: dev}
	y := newArray(op, sess, dev, dt, shape)
	bk.BiasRelu(p, y.arg(), a.arg(), b.arg())
	RecordDiff(op, y, []*NDArray{a, b}, func(g *NDArray, need []bool) []*NDArray {
		defer checkLive(op, g).done()
		defer checkMemory(op, y).done() // the backward pass reads the output
		dx := newArray(op, sess, dev, dt, shape)
		g.be().Binary(backend.ReluGrad, shape, dx.arg(), y.arg(), g.arg()) // y > 0 exactly where the sum is
		if !need[0] {
			return []*NDArray{nil, dx}
		}
		return []*NDArray{dx, pass(dx, need[1])}
	}, func(g *NDArray, _ []bool) []*NDArray {
		dx := Mul(g, positiveMask(y))
		return []*NDArray{dx, dx}
	})
	return y
}

package nd

import "github.com/goluon/goluon/nd/backend"

// The three products of a convolution p, each bilinear: the forward
// convolution of an image i by a filter w into an output o, the backward
// data product (o, w) → i, and the backward filter product (i, o) → w.
// Each one's gradients are the other two, which is what lets GradWith's
// CreateGraph differentiate a convolution's gradient to any order.
const (
	convFwd = iota
	convData
	convFilter
)

// convSet is a convolution p with the shapes of its image, output and
// filter arrays (a Conv1D's are 3-D, with the height of one p has).
type convSet struct {
	p                      backend.ConvParams
	iShape, oShape, wShape []int
}

var convKindName = [...]string{"Conv2D", "Conv2DBackwardData", "Conv2DBackwardFilter"}

// run computes the product kind of a and b without recording.
func (c *convSet) run(kind int, a, b *NDArray) *NDArray {
	op := convKindName[kind]
	defer checkInputs(op, a, b).done()
	if a.dtype.IsHalf() || b.dtype.IsHalf() {
		fail(op, ErrDType, "the gradient of a %v convolution cannot be differentiated again: compute in Float32 or Float64", a.dtype)
	}
	be := a.be()
	shape := [...][]int{c.oShape, c.iShape, c.wShape}[kind]
	out := newArray(op, sessionOf(op, a, b), a.st.dev, a.dtype, shape)
	switch kind {
	case convFwd: // a = i, b = w
		be.Conv2D(c.p, out.arg(), a.arg(), b.arg())
	case convData: // a = o, b = w
		be.Conv2DBackwardData(c.p, out.arg(), a.arg(), b.arg())
	default: // a = i, b = o
		be.Conv2DBackwardFilter(c.p, out.arg(), a.arg(), b.arg())
	}
	return out
}

// grads returns the gradients of the product kind of a and b from g, each
// computed by f (run, or rec to record them).
func (c *convSet) grads(kind int, g, a, b *NDArray, need []bool, f func(kind int, a, b *NDArray) *NDArray) []*NDArray {
	res := make([]*NDArray, 2)
	switch kind {
	case convFwd: // o = F(i, w): i gets D(g, w), w gets W(i, g)
		if need[0] {
			res[0] = f(convData, g, b)
		}
		if need[1] {
			res[1] = f(convFilter, a, g)
		}
	case convData: // i = D(o, w): o gets F(g, w), w gets W(g, o)
		if need[0] {
			res[0] = f(convFwd, g, b)
		}
		if need[1] {
			res[1] = f(convFilter, g, a)
		}
	default: // w = W(i, o): i gets D(o, g), o gets F(i, g)
		if need[0] {
			res[0] = f(convData, b, g)
		}
		if need[1] {
			res[1] = f(convFwd, a, g)
		}
	}
	return res
}

// rec computes the product kind of a and b and records it, with its
// gradients made of recorded products.
func (c *convSet) rec(kind int, a, b *NDArray) *NDArray {
	out := c.run(kind, a, b)
	RecordDiff(convKindName[kind], out, []*NDArray{a, b}, func(g *NDArray, need []bool) []*NDArray {
		return c.grads(kind, g, a, b, need, c.run)
	}, func(g *NDArray, need []bool) []*NDArray {
		return c.grads(kind, g, a, b, need, c.rec)
	})
	return out
}

// convDiff returns the differentiable backward function of the
// convolution of x and w (and a bias when hasBias) into y: p's forward
// product, or with transposed its backward data product.
func convDiff(p backend.ConvParams, x, w *NDArray, yShape []int, hasBias, transposed bool) BackwardFunc {
	c := &convSet{p: p, iShape: x.shape, oShape: yShape, wShape: w.shape}
	kind := convFwd
	if transposed {
		c.iShape, c.oShape, kind = yShape, x.shape, convData
	}
	return func(g *NDArray, need []bool) []*NDArray {
		grads := c.grads(kind, g, x, w, need[:2], c.rec)
		if hasBias {
			var db *NDArray
			if need[2] {
				db = channelSum(g)
			}
			grads = append(grads, db)
		}
		return grads
	}
}

// channelSum sums g over every axis but 1 (a bias's gradient), recorded.
func channelSum(g *NDArray) *NDArray {
	axes := []int{0}
	for i := 2; i < g.NDim(); i++ {
		axes = append(axes, i)
	}
	return Reshape(SumKeepDims(g, axes...), g.shape[1])
}

package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// DenseOpts configures Dense. The zero value is Gluon's default: no
// activation, a bias, in_units inferred, inputs flattened to 2-D.
type DenseOpts struct {
	Act        string // an Activation name, or "" for none
	NoBias     bool
	InUnits    int  // 0: inferred at the first forward pass
	NoFlatten  bool // apply to the last axis instead of flattening
	WeightInit initializer.Initializer
	BiasInit   initializer.Initializer // default zeros
}

// Dense is a fully-connected layer: y = act(x·Wᵀ + b) with W of shape
// [units, in_units].
type Dense struct {
	gluon.BlockMeta
	Units  int
	opts   DenseOpts
	Weight *gluon.Parameter
	Bias   *gluon.Parameter
	// delegate, when set, computes Forward instead (Delegate).
	delegate gluon.Block
}

// NewDense returns a Dense layer with the given number of outputs.
func NewDense(units int, o DenseOpts) *Dense {
	if units <= 0 || o.InUnits < 0 {
		nd.Panicf("nn.NewDense", nd.ErrArgument, "units %d must be positive and in_units %d >= 0 (0: inferred)", units, o.InUnits)
	}
	checkActivation("nn.NewDense", o.Act)
	d := &Dense{BlockMeta: gluon.NewBlockMeta("dense"), Units: units, opts: o}
	d.Weight = d.AddParam(gluon.NewParameter("weight", units, o.InUnits))
	d.Weight.Init = o.WeightInit
	if !o.NoBias {
		d.Bias = d.AddParam(gluon.NewParameter("bias", units))
		d.Bias.Init = o.BiasInit
		if d.Bias.Init == nil {
			d.Bias.Init = initializer.Zero()
		}
	}
	return d
}

// Options returns the options d was made with.
func (d *Dense) Options() DenseOpts { return d.opts }

// Delegate makes Forward return b.Forward(x) instead of computing the
// layer (nil restores it). gluon/quantization uses it for a layer its
// parent calls through a field of its own: the parent's child becomes the
// quantized layer, and calls through the field reach it too.
func (d *Dense) Delegate(b gluon.Block) {
	d.delegate = b
	d.Changed()
}

// Delegated returns the block Delegate set, or nil.
func (d *Dense) Delegated() gluon.Block { return d.delegate }

// Forward computes the layer on x's context.
func (d *Dense) Forward(x *nd.NDArray) *nd.NDArray {
	if d.delegate != nil {
		return d.delegate.Forward(x)
	}
	shape := x.Shape()
	in := x
	if d.opts.NoFlatten {
		in = nd.Reshape(x, -1, shape[len(shape)-1])
	} else if x.NDim() != 2 {
		in = nd.Flatten(x)
	}
	d.Weight.InferShape(d.Units, in.Shape()[1])
	var y *nd.NDArray
	switch {
	case d.Bias == nil:
		y = activate("nn.Dense", d.opts.Act, nd.FullyConnected(in, d.Weight.DataFor(x), nil))
	case d.opts.Act == "relu": // bias and ReLU in one pass
		y = nd.BiasRelu(nd.FullyConnected(in, d.Weight.DataFor(x), nil), d.Bias.DataFor(x), 1)
	default:
		y = activate("nn.Dense", d.opts.Act, nd.FullyConnected(in, d.Weight.DataFor(x), d.Bias.DataFor(x)))
	}
	if d.opts.NoFlatten && x.NDim() != 2 {
		shape[len(shape)-1] = d.Units
		y = nd.Reshape(y, shape...)
	}
	return y
}

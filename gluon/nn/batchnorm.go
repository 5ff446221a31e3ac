package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// BatchNormOpts configures BatchNorm; the zero value is Gluon's default
// (axis 1, momentum 0.9, epsilon 1e-5, learnable scale and shift). A nil
// Axis, Momentum or Epsilon takes its default; any value is written with
// new(v), e.g. Momentum: new(0.99) (see nd.BatchNormOpts).
type BatchNormOpts struct {
	Axis       *int
	Momentum   *float64
	Epsilon    *float64
	NoCenter   bool // no learnable shift (beta)
	NoScale    bool // no learnable scale (gamma)
	InChannels int  // 0: inferred at the first forward pass
	// UseGlobalStats normalises with the running statistics also in
	// training mode.
	UseGlobalStats bool
}

// BatchNorm normalises each channel. In training mode it uses the batch's
// statistics and updates the running mean and variance of the replica on
// the input's context: every device keeps its own statistics, as in Gluon
// (they are not summed by the Trainer; their grad_req is null). In predict
// mode it uses the running statistics.
type BatchNorm struct {
	gluon.BlockMeta
	opts        BatchNormOpts
	axis        int     // the channel axis (negative: from the end)
	epsilon     float64 // resolved from opts
	momentum    float64
	Gamma, Beta *gluon.Parameter
	RunningMean *gluon.Parameter
	RunningVar  *gluon.Parameter
}

// NewBatchNorm returns a batch-normalisation layer.
func NewBatchNorm(o BatchNormOpts) *BatchNorm {
	b := &BatchNorm{BlockMeta: gluon.NewBlockMeta("batchnorm"), opts: o}
	b.axis, b.epsilon, b.momentum = nd.BatchNormOpts{Axis: o.Axis, Epsilon: o.Epsilon, Momentum: o.Momentum}.Resolved()
	c := o.InChannels
	if !o.NoScale {
		b.Gamma = b.AddParam(gluon.NewParameter("gamma", c))
		b.Gamma.Alias = "weight" // PyTorch's name
	}
	if !o.NoCenter {
		b.Beta = b.AddParam(gluon.NewParameter("beta", c))
		b.Beta.Alias = "bias"
	}
	b.RunningMean = b.AddParam(gluon.NewParameter("running_mean", c))
	b.RunningVar = b.AddParam(gluon.NewParameter("running_var", c))
	b.RunningMean.SetGradReq(nd.GradNull)
	b.RunningVar.SetGradReq(nd.GradNull)
	b.RunningMean.Statistic, b.RunningVar.Statistic = true, true
	for _, p := range b.Params() { // float32 beside half activations (gluon.Cast)
		p.KeepFloat32 = true
	}
	return b
}

// channelAxis returns the channel axis for an input of the given shape,
// counted from the front.
func (b *BatchNorm) channelAxis(op string, shape []int) int {
	ax := b.axis
	if ax < 0 {
		ax += len(shape)
	}
	if ax < 0 || ax >= len(shape) {
		nd.Panicf(op, nd.ErrShape, "axis %d out of range for input %v", b.axis, shape)
	}
	return ax
}

// Forward normalises x on its context.
func (b *BatchNorm) Forward(x *nd.NDArray) *nd.NDArray { return b.forward(x, false) }

// ForwardRelu is Relu(Forward(x)), the same bits, in the normalisation's
// pass over the output (nd.BatchNormOpts.Relu): for blocks that follow the
// normalisation with a ReLU in their own Forward.
func (b *BatchNorm) ForwardRelu(x *nd.NDArray) *nd.NDArray { return b.forward(x, true) }

func (b *BatchNorm) forward(x *nd.NDArray, relu bool) *nd.NDArray {
	ax := b.channelAxis("nn.BatchNorm", x.Shape())
	c := x.Shape()[ax]
	dev := x.Context()
	var gamma, beta *nd.NDArray
	if b.Gamma != nil {
		b.Gamma.InferShape(c)
		gamma = b.Gamma.DataFor(x)
	}
	if b.Beta != nil {
		b.Beta.InferShape(c)
		beta = b.Beta.DataFor(x)
	}
	b.RunningMean.InferShape(c)
	b.RunningVar.InferShape(c)
	return nd.BatchNorm(x, gamma, beta, b.RunningMean.Data(dev), b.RunningVar.Data(dev), nd.BatchNormOpts{
		Axis: new(ax), Epsilon: new(b.epsilon), Momentum: new(b.momentum), UseGlobalStats: b.opts.UseGlobalStats, Relu: relu})
}

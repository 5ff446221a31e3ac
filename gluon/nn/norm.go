package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// NormOpts configures LayerNorm, GroupNorm and InstanceNorm; the zero
// value is Gluon's and PyTorch's default (epsilon 1e-5, learnable scale
// and shift, channels inferred at the first forward pass).
type NormOpts struct {
	Epsilon    float64 // default 1e-5
	NoCenter   bool    // no learnable shift (beta)
	NoScale    bool    // no learnable scale (gamma)
	InChannels int     // 0: inferred at the first forward pass
}

func (o NormOpts) eps() float64 {
	if o.Epsilon == 0 {
		return 1e-5
	}
	return o.Epsilon
}

// affineParams holds the optional scale and shift of a normalisation.
type affineParams struct {
	Gamma, Beta *gluon.Parameter
}

func (a *affineParams) add(m *gluon.BlockMeta, o NormOpts) {
	if !o.NoScale {
		a.Gamma = m.AddParam(gluon.NewParameter("gamma", o.InChannels))
		a.Gamma.Alias = "weight" // PyTorch's name
	}
	if !o.NoCenter {
		a.Beta = m.AddParam(gluon.NewParameter("beta", o.InChannels))
		a.Beta.Alias = "bias"
	}
}

// data returns the replicas on x's context, inferring the channel count c.
func (a *affineParams) data(x *nd.NDArray, c int) (gamma, beta *nd.NDArray) {
	if a.Gamma != nil {
		a.Gamma.InferShape(c)
		gamma = a.Gamma.DataFor(x)
	}
	if a.Beta != nil {
		a.Beta.InferShape(c)
		beta = a.Beta.DataFor(x)
	}
	return gamma, beta
}

// LayerNorm normalises each sample over one axis (the last by default),
// Gluon's nn.LayerNorm and PyTorch's nn.LayerNorm over the last dimension.
type LayerNorm struct {
	gluon.BlockMeta
	affineParams
	Axis int
	opts NormOpts
}

// NewLayerNorm returns a layer normalisation over axis (−1: the last).
func NewLayerNorm(axis int, o NormOpts) *LayerNorm {
	l := &LayerNorm{BlockMeta: gluon.NewBlockMeta("layernorm"), Axis: axis, opts: o}
	l.add(&l.BlockMeta, o)
	return l
}

// Forward normalises x.
func (l *LayerNorm) Forward(x *nd.NDArray) *nd.NDArray {
	shape := x.Shape()
	ax := l.Axis
	if ax < 0 {
		ax += len(shape)
	}
	if ax < 0 || ax >= len(shape) {
		nd.Panicf("nn.LayerNorm", nd.ErrShape, "axis %d out of range for input %v", l.Axis, shape)
	}
	gamma, beta := l.data(x, shape[ax])
	return nd.LayerNorm(x, gamma, beta, ax, l.opts.eps())
}

// GroupNorm normalises each sample's groups of channels (axis 1),
// PyTorch's nn.GroupNorm and Gluon's nn.GroupNorm.
type GroupNorm struct {
	gluon.BlockMeta
	affineParams
	Groups int
	opts   NormOpts
}

// NewGroupNorm returns a group normalisation with the given number of
// groups (which must divide the channels).
func NewGroupNorm(groups int, o NormOpts) *GroupNorm {
	if groups < 1 {
		nd.Panicf("nn.NewGroupNorm", nd.ErrArgument, "groups %d must be >= 1", groups)
	}
	g := &GroupNorm{BlockMeta: gluon.NewBlockMeta("groupnorm"), Groups: groups, opts: o}
	g.add(&g.BlockMeta, o)
	return g
}

// Forward normalises x, shaped [N, C, ...].
func (g *GroupNorm) Forward(x *nd.NDArray) *nd.NDArray {
	if x.NDim() < 2 {
		nd.Panicf("nn.GroupNorm", nd.ErrShape, "want an input [N, C, ...], got %v", x.Shape())
	}
	gamma, beta := g.data(x, x.Shape()[1])
	return nd.GroupNorm(x, gamma, beta, g.Groups, g.opts.eps())
}

// InstanceNorm normalises each sample's channels separately (Gluon's
// nn.InstanceNorm; PyTorch's nn.InstanceNorm with affine=True and no
// running statistics). Unlike those, NormOpts' zero value learns a scale
// and a shift (Gluon defaults to no scale, PyTorch to neither): set
// NoScale (and NoCenter) for theirs.
type InstanceNorm struct {
	gluon.BlockMeta
	affineParams
	opts NormOpts
}

// NewInstanceNorm returns an instance normalisation.
func NewInstanceNorm(o NormOpts) *InstanceNorm {
	n := &InstanceNorm{BlockMeta: gluon.NewBlockMeta("instancenorm"), opts: o}
	n.add(&n.BlockMeta, o)
	return n
}

// Forward normalises x, shaped [N, C, ...] with more than one element
// per instance and channel: over a single value the output would be beta
// whatever x, and no gradient would reach x (PyTorch refuses it too).
func (n *InstanceNorm) Forward(x *nd.NDArray) *nd.NDArray {
	spatial := 1
	for _, d := range x.Shape()[min(2, x.NDim()):] {
		spatial *= d
	}
	if x.NDim() < 3 || spatial < 2 {
		nd.Panicf("nn.InstanceNorm", nd.ErrShape, "want an input [N, C, ...] with more than one element per instance and channel, got %v", x.Shape())
	}
	gamma, beta := n.data(x, x.Shape()[1])
	return nd.InstanceNorm(x, gamma, beta, n.opts.eps())
}

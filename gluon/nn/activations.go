package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// The parameterised activation layers of Gluon (nn.LeakyReLU, nn.PReLU,
// nn.ELU, nn.GELU, nn.SiLU); their ops are in nd/activation.go.

// LeakyReLU passes positive inputs and scales the others by Alpha.
type LeakyReLU struct {
	gluon.BlockMeta
	Alpha float64
}

// NewLeakyReLU returns a LeakyReLU layer; a negative alpha panics.
func NewLeakyReLU(alpha float64) *LeakyReLU {
	if alpha < 0 {
		nd.Panicf("nn.NewLeakyReLU", nd.ErrArgument, "negative slope %g", alpha)
	}
	return &LeakyReLU{BlockMeta: gluon.NewBlockMeta("leakyrelu"), Alpha: alpha}
}

// Forward applies the activation.
func (l *LeakyReLU) Forward(x *nd.NDArray) *nd.NDArray { return nd.LeakyReLU(x, l.Alpha) }

// PReLU is LeakyReLU with a learnt slope per channel (axis 1), or one
// shared slope when channels is 1; the slopes start at 0.25, as in
// PyTorch and Gluon.
type PReLU struct {
	gluon.BlockMeta
	Alpha *gluon.Parameter
}

// NewPReLU returns a PReLU layer with the given number of slopes.
func NewPReLU(channels int) *PReLU {
	if channels < 1 {
		nd.Panicf("nn.NewPReLU", nd.ErrArgument, "channels %d must be >= 1", channels)
	}
	p := &PReLU{BlockMeta: gluon.NewBlockMeta("prelu")}
	p.Alpha = p.AddParam(gluon.NewParameter("alpha", channels))
	p.Alpha.Init = initializer.Constant{Value: 0.25}
	return p
}

// Forward applies the activation with the replica of the slopes on x's
// context.
func (p *PReLU) Forward(x *nd.NDArray) *nd.NDArray {
	axis := 1
	if x.NDim() < 2 {
		axis = 0
	}
	return nd.PReLU(x, p.Alpha.DataFor(x), axis)
}

// ELU is the exponential linear unit with scale Alpha.
type ELU struct {
	gluon.BlockMeta
	Alpha float64
}

// NewELU returns an ELU layer.
func NewELU(alpha float64) *ELU { return &ELU{BlockMeta: gluon.NewBlockMeta("elu"), Alpha: alpha} }

// Forward applies the activation.
func (e *ELU) Forward(x *nd.NDArray) *nd.NDArray { return nd.ELU(x, e.Alpha) }

// GELU is the Gaussian error linear unit, exact (erf) or with PyTorch's
// tanh approximation.
type GELU struct {
	gluon.BlockMeta
	TanhApprox bool
}

// NewGELU returns a GELU layer.
func NewGELU(tanhApprox bool) *GELU {
	return &GELU{BlockMeta: gluon.NewBlockMeta("gelu"), TanhApprox: tanhApprox}
}

// Forward applies the activation.
func (g *GELU) Forward(x *nd.NDArray) *nd.NDArray { return nd.GELU(x, g.TanhApprox) }

// SiLU is x·σ(x) (swish).
type SiLU struct{ gluon.BlockMeta }

// NewSiLU returns a SiLU layer.
func NewSiLU() *SiLU { return &SiLU{gluon.NewBlockMeta("silu")} }

// Forward applies the activation.
func (s *SiLU) Forward(x *nd.NDArray) *nd.NDArray { return nd.SiLU(x) }

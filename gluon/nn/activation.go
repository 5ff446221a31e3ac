package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// activate applies a named activation ("" means none).
func activate(op, name string, x *nd.NDArray) *nd.NDArray {
	switch name {
	case "":
		return x
	case "relu":
		return nd.Relu(x)
	case "sigmoid":
		return nd.Sigmoid(x)
	case "tanh":
		return nd.Tanh(x)
	case "softrelu":
		return nd.Softrelu(x)
	case "gelu":
		return nd.GELU(x, false)
	case "silu", "swish":
		return nd.SiLU(x)
	}
	nd.Panicf(op, nd.ErrArgument, "unknown activation %q (want %s)", name, activationNames)
	return nil
}

const activationNames = "relu, sigmoid, tanh, softrelu, gelu or silu"

func checkActivation(op, name string) {
	switch name {
	case "", "relu", "sigmoid", "tanh", "softrelu", "gelu", "silu", "swish":
		return
	}
	nd.Panicf(op, nd.ErrArgument, "unknown activation %q (want %s)", name, activationNames)
}

// Activation applies relu, sigmoid, tanh, softrelu, gelu (the erf form) or
// silu (also called swish).
type Activation struct {
	gluon.BlockMeta
	Name string
}

// NewActivation returns an activation layer; an unknown name panics.
func NewActivation(name string) *Activation {
	checkActivation("nn.NewActivation", name)
	return &Activation{BlockMeta: gluon.NewBlockMeta(name), Name: name}
}

// Forward applies the activation.
func (a *Activation) Forward(x *nd.NDArray) *nd.NDArray { return activate("nn.Activation", a.Name, x) }

// Flatten reshapes [N, ...] to [N, rest].
type Flatten struct{ gluon.BlockMeta }

// NewFlatten returns a Flatten layer.
func NewFlatten() *Flatten { return &Flatten{gluon.NewBlockMeta("flatten")} }

// Forward flattens x.
func (f *Flatten) Forward(x *nd.NDArray) *nd.NDArray { return nd.Flatten(x) }

// Dropout zeroes inputs with probability Rate in training mode and passes
// them through in predict mode. Along Axes, if any, one mask value is
// shared (Gluon's Dropout(rate, axes)): axes (0) on TNC sequences drops the
// same features at every step, axes (2, 3) on NCHW images whole channels.
type Dropout struct {
	gluon.BlockMeta
	Rate float64
	Axes []int
}

// NewDropout returns a Dropout layer sharing its mask along axes (none:
// plain dropout); a rate outside [0, 1) panics.
func NewDropout(rate float64, axes ...int) *Dropout {
	if rate < 0 || rate >= 1 {
		nd.Panicf("nn.NewDropout", nd.ErrArgument, "rate %g outside [0, 1)", rate)
	}
	return &Dropout{BlockMeta: gluon.NewBlockMeta("dropout"), Rate: rate, Axes: axes}
}

// Forward applies dropout.
func (d *Dropout) Forward(x *nd.NDArray) *nd.NDArray { return nd.DropoutAxes(x, d.Rate, d.Axes...) }

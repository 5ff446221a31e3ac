package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// activate applies a named activation ("" means none).
func activate(op, name string, x *nd.NDArray) *nd.NDArray {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil input")
	}
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
	case "softsign":
		return nd.Div(x, nd.AddScalar(nd.Abs(x), 1))
	case "selu":
		return nd.MulScalar(nd.ELU(x, seluAlpha), seluScale)
	case "hardsigmoid":
		return hardSigmoid(x, false)
	case "hardswish":
		return nd.Mul(x, hardSigmoid(x, true))
	case "mish":
		return nd.Mul(x, nd.Tanh(nd.Softrelu(x)))
	case "relu6":
		return clamp(x, 0, 6)
	case "hardtanh":
		return clamp(x, -1, 1)
	case "logsigmoid":
		return nd.Neg(nd.Softrelu(nd.Neg(x)))
	case "tanhshrink":
		return nd.Sub(x, nd.Tanh(x))
	case "celu": // alpha 1: the same function as ELU's
		return nd.ELU(x, 1)
	}
	nd.Panicf(op, nd.ErrArgument, "unknown activation %q (want %s)", name, activationNames)
	return nil
}

// SELU's constants (Klambauer et al. 2017), as PyTorch's and ONNX's.
const (
	seluAlpha = 1.6732632423543772848170429916717
	seluScale = 1.0507009873554804934193349852946
)

// hardSigmoid is PyTorch's hardsigmoid, clip(x/6 + 1/2, 0, 1), with a
// gradient of 1/6 inside (−3, 3) and 0 outside (±Inf included, so that
// hardswish's gradient there is 0 and 1, not NaN). At ±3 PyTorch's
// hardsigmoid has 0 and its hardswish uses 1/6: closed says the latter.
func hardSigmoid(x *nd.NDArray, closed bool) *nd.NDArray {
	lin := nd.AddScalar(nd.MulScalar(x, 1.0/6), 0.5)
	three := nd.FullLike(x, 3)
	inside := nd.Less(nd.Abs(x), three)
	if closed {
		inside = nd.LessEqual(nd.Abs(x), three)
	}
	return nd.Where(inside, lin, nd.Clip(lin, 0, 1).Detach())
}

// clamp is PyTorch's hardtanh between lo and hi: its gradient passes
// strictly inside (0 at the ends, as PyTorch's).
func clamp(x *nd.NDArray, lo, hi float64) *nd.NDArray {
	inside := nd.LogicalAnd(nd.Greater(x, nd.FullLike(x, lo)), nd.Less(x, nd.FullLike(x, hi)))
	return nd.Where(inside, x, nd.Clip(x, lo, hi).Detach())
}

const activationNames = "relu, sigmoid, tanh, softrelu, gelu, silu, softsign, selu, hardsigmoid, hardswish, mish, relu6, hardtanh, logsigmoid, tanhshrink or celu"

func checkActivation(op, name string) {
	switch name {
	case "", "relu", "sigmoid", "tanh", "softrelu", "gelu", "silu", "swish",
		"softsign", "selu", "hardsigmoid", "hardswish", "mish", "relu6", "hardtanh",
		"logsigmoid", "tanhshrink", "celu":
		return
	}
	nd.Panicf(op, nd.ErrArgument, "unknown activation %q (want %s)", name, activationNames)
}

// Activation applies a named activation, Gluon's nn.Activation(act_type)
// and PyTorch's activation modules:
//
//	relu         max(x, 0)
//	sigmoid      1/(1 + e^−x)
//	tanh         tanh x
//	softrelu     log(1 + e^x) (PyTorch's Softplus)
//	gelu         x·Φ(x), the erf form
//	silu, swish  x·sigmoid(x)
//	softsign     x/(1 + |x|)
//	selu         λ·elu(x, α), λ ≈ 1.0507 and α ≈ 1.6733 (PyTorch's SELU)
//	hardsigmoid  clip(x/6 + 1/2, 0, 1) (PyTorch's; MXNet's hard_sigmoid
//	             defaults to slope 0.2)
//	hardswish    x·hardsigmoid(x) (MobileNetV3's)
//	mish         x·tanh(softrelu(x))
//	relu6        clip(x, 0, 6) (MobileNetV2's)
//	hardtanh     clip(x, −1, 1)
//	logsigmoid   log sigmoid(x) = −softrelu(−x)
//	tanhshrink   x − tanh x
//	celu         max(x, 0) + min(e^x − 1, 0) (PyTorch's CELU with α 1)
//
// The same names are the Act option of Dense and the convolutions. At the
// kinks of relu6 and hardtanh the gradient is 0, as PyTorch's.
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

// NewSELU returns the scaled exponential linear unit (PyTorch's nn.SELU,
// Gluon's nn.SELU).
func NewSELU() *Activation { return NewActivation("selu") }

// NewHardSigmoid returns PyTorch's nn.Hardsigmoid, clip(x/6 + 1/2, 0, 1).
func NewHardSigmoid() *Activation { return NewActivation("hardsigmoid") }

// NewHardSwish returns PyTorch's nn.Hardswish, x·hardsigmoid(x).
func NewHardSwish() *Activation { return NewActivation("hardswish") }

// NewMish returns PyTorch's nn.Mish, x·tanh(softrelu(x)).
func NewMish() *Activation { return NewActivation("mish") }

// NewSoftsign returns x/(1 + |x|) (PyTorch's nn.Softsign).
func NewSoftsign() *Activation { return NewActivation("softsign") }

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

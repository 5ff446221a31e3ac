package vision

import (
	"strconv"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// named sets b's name (its key in PyTorch's state_dict) and returns it.
func named[B gluon.Component](name string, b B) B {
	b.Meta().SetName(name)
	return b
}

// seq returns a Sequential whose children are named "0", "1", ... like a
// torch.nn.Sequential's, so that the parameters' names are PyTorch's.
func seq(blocks ...gluon.Block) *nn.Sequential {
	s := nn.NewSequential()
	for i, b := range blocks {
		s.Add(named(strconv.Itoa(i), b))
	}
	return s
}

// kaiming is torchvision's convolution initialisation (kaiming_normal_,
// fan_out, ReLU gain: N(0, 2/fan_out)).
var kaiming = initializer.Xavier{Gaussian: true, Factor: initializer.FactorOut, Magnitude: 2}

// kaimingIn is kaiming_normal_ in its default fan_in mode (DenseNet's
// convolutions): N(0, 2/fan_in).
var kaimingIn = initializer.Xavier{Gaussian: true, Factor: initializer.FactorIn, Magnitude: 2}

// torchLinear is PyTorch's default initialisation of a Linear layer's
// weights: U(−1/√fan_in, 1/√fan_in).
var torchLinear = initializer.Xavier{Factor: initializer.FactorIn, Magnitude: 1}

// conv is a convolution without bias, PyTorch-initialised.
func conv(in, out, kernel, stride, pad, groups int) *nn.Conv2D {
	return convInit(in, out, kernel, stride, pad, groups, kaiming)
}

// convInit is conv with weights initialised by init.
func convInit(in, out, kernel, stride, pad, groups int, init initializer.Initializer) *nn.Conv2D {
	return nn.NewConv2D(out, kernel, nn.Conv2DOpts{
		Stride: [2]int{stride, stride}, Pad: [2]int{pad, pad}, Groups: groups,
		InChannels: in, NoBias: true, WeightInit: init,
	})
}

// convBias is a convolution with a bias, PyTorch-initialised.
func convBias(in, out, kernel, stride, pad, groups int) *nn.Conv2D {
	return nn.NewConv2D(out, kernel, nn.Conv2DOpts{
		Stride: [2]int{stride, stride}, Pad: [2]int{pad, pad}, Groups: groups,
		InChannels: in, WeightInit: kaiming,
	})
}

// bn is a BatchNorm with PyTorch's parameter names (weight, bias) and
// defaults (epsilon 1e-5, momentum 0.1 in PyTorch's convention).
func bn(channels int) *nn.BatchNorm { return bnWith(channels, 1e-5, 0.1) }

// bnWith is bn with epsilon eps and PyTorch's momentum (the weight of the
// batch's statistics, 1 − Gluon's momentum).
func bnWith(channels int, eps, momentum float64) *nn.BatchNorm {
	b := nn.NewBatchNorm(nn.BatchNormOpts{InChannels: channels, Epsilon: new(eps), Momentum: new(1 - momentum)})
	b.Gamma.Rename("weight")
	b.Beta.Rename("bias")
	// The initializers pick ones for "gamma" by name: keep BatchNorm's.
	b.Gamma.Init, b.Beta.Init = initializer.One(), initializer.Zero()
	return b
}

// linear is a fully-connected layer initialised as torchvision's
// classifiers are (normal, standard deviation 0.01; zero bias).
func linear(in, out int) *nn.Dense {
	return nn.NewDense(out, nn.DenseOpts{InUnits: in, WeightInit: initializer.Normal{Sigma: 0.01}})
}

// fn is a parameter-free layer computing f; onnx writes its ONNX form.
type fn struct {
	gluon.BlockMeta
	f    func(*nd.NDArray) *nd.NDArray
	onnx func(g gluon.ONNXGraph, x string) string
}

func (l *fn) Forward(x *nd.NDArray) *nd.NDArray { return l.f(x) }

func relu() *fn {
	return &fn{gluon.NewBlockMeta("relu"), nd.Relu, func(g gluon.ONNXGraph, x string) string {
		return g.Op("Relu", []string{x}, nil, 1)[0]
	}}
}
func identity() *fn {
	return &fn{gluon.NewBlockMeta("identity"), func(x *nd.NDArray) *nd.NDArray { return x },
		func(_ gluon.ONNXGraph, x string) string { return x }}
}
func relu6() *fn {
	return &fn{gluon.NewBlockMeta("relu6"), func(x *nd.NDArray) *nd.NDArray { return nd.Clip(x, 0, 6) },
		func(g gluon.ONNXGraph, x string) string {
			return g.Op("Clip", []string{x, g.Const([]float32{0}), g.Const([]float32{6})}, nil, 1)[0]
		}}
}

// convNormAct is torchvision's Conv2dNormActivation: a convolution
// without bias ("0", padded to keep the size at stride 1), its BatchNorm
// ("1", made by norm) and, unless act is nil, an activation ("2").
func convNormAct(in, out, kernel, stride, groups int, norm func(int) *nn.BatchNorm, act func() gluon.Block) *nn.Sequential {
	layers := []gluon.Block{conv(in, out, kernel, stride, (kernel-1)/2, groups), norm(out)}
	if act != nil {
		layers = append(layers, act())
	}
	return seq(layers...)
}

// dropout is a Dropout of rate p, or an identity when p is not positive.
func dropout(p float64) gluon.Block {
	if p > 0 {
		return nn.NewDropout(p)
	}
	return identity()
}

// rate is an Options rate: the model's default d for 0, none (0) for a
// negative one.
func rate(r, d float64) float64 {
	switch {
	case r == 0:
		return d
	case r < 0:
		return 0
	}
	return r
}

// The activations, as constructors for convNormAct.
func reluBlock() gluon.Block      { return relu() }
func hardswishBlock() gluon.Block { return nn.NewHardSwish() }
func siluBlock() gluon.Block      { return nn.NewSiLU() }

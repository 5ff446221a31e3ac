package vision

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// squeezeExcitation is torchvision's SqueezeExcitation: the channels'
// means through two 1×1 convolutions with biases (fc1, fc2) and their
// activations give each channel a scale.
type squeezeExcitation struct {
	gluon.BlockMeta
	fc1, fc2   *nn.Conv2D
	act, scale gluon.Block // parameter-free, not children
}

// newSE returns a squeeze-and-excitation block of channels channels
// squeezed to squeeze, with activation act after fc1 and scale after fc2.
func newSE(channels, squeeze int, act, scale gluon.Block) *squeezeExcitation {
	s := &squeezeExcitation{BlockMeta: gluon.NewBlockMeta("squeezeexcitation"), act: act, scale: scale}
	s.fc1 = named("fc1", convBias(channels, squeeze, 1, 1, 0, 1))
	s.fc2 = named("fc2", convBias(squeeze, channels, 1, 1, 0, 1))
	s.AddChild(s.fc1)
	s.AddChild(s.fc2)
	return s
}

func (s *squeezeExcitation) Forward(x *nd.NDArray) *nd.NDArray {
	w := s.scale.Forward(s.fc2.Forward(s.act.Forward(s.fc1.Forward(nd.GlobalAvgPool2D(x)))))
	return nd.Mul(w, x)
}

// ExportONNX writes the block: GlobalAveragePool, the convolutions and
// activations, and Mul.
func (s *squeezeExcitation) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	w, err := chain(g, g.Op("GlobalAveragePool", []string{x}, nil, 1)[0], s.fc1, s.act, s.fc2, s.scale)
	if err != nil {
		return "", err
	}
	return g.Op("Mul", []string{w, x}, nil, 1)[0], nil
}

// stochasticDepth is torchvision's StochasticDepth in "row" mode: in
// training mode each sample's x is zeroed with probability p, and kept
// and scaled by 1/(1−p) otherwise (one mask value for all of a sample's
// elements); in predict mode, or with p 0, x passes.
func stochasticDepth(x *nd.NDArray, p float64) *nd.NDArray {
	if p <= 0 || !x.Session().IsTraining() {
		return x
	}
	if p >= 1 {
		return nd.MulScalar(x, 0)
	}
	axes := make([]int, x.NDim()-1)
	for i := range axes {
		axes[i] = i + 1
	}
	return nd.DropoutAxes(x, p, axes...)
}

// depthRate is a stochastic-depth probability: torchvision's
// stochastic_depth_prob from Options.StochasticDepth (default d, negative
// for none), which must not exceed 1.
func depthRate(op string, o Options, d float64) float64 {
	p := rate(o.StochasticDepth, d)
	if p > 1 {
		nd.Panicf(op, nd.ErrArgument, "stochastic depth probability %g above 1", p)
	}
	return p
}

package nn

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// The dropout layers of PyTorch besides plain dropout: channel-wise
// (Dropout1d, 2d, 3d) and the SELU-preserving alpha dropouts. Like
// Dropout they act in training mode only, draw their masks from the
// input's session generator (nd.Seed makes them reproducible; a
// hybridized replay draws new ones) and write nothing to ONNX.

// ChannelDropout zeroes whole channels: each channel of each sample
// (axis 1 of [N, C, ...]) is dropped with probability Rate, and the kept
// ones are scaled by 1/(1 − Rate), in training mode (PyTorch's
// nn.Dropout1d, nn.Dropout2d and nn.Dropout3d; Gluon's Dropout with the
// spatial axes). In predict mode it passes the input through. Spatial is
// the number of spatial axes: 1 for [N, C, L] or unbatched [C, L], 2 for
// [N, C, H, W], 3 for [N, C, D, H, W] or unbatched [C, D, H, W].
//
// A 3-dimensional input to Dropout2D is an error: PyTorch 1.13 treats it
// as [N, C, L] (with a warning that this will change to [C, H, W]);
// use NewDropout1D for it, or add the batch axis.
type ChannelDropout struct {
	gluon.BlockMeta
	Rate    float64
	Spatial int
}

func newChannelDropout(op string, rate float64, spatial int) *ChannelDropout {
	if !(rate >= 0 && rate < 1) {
		nd.Panicf(op, nd.ErrArgument, "rate %g outside [0, 1)", rate)
	}
	return &ChannelDropout{BlockMeta: gluon.NewBlockMeta("dropout"), Rate: rate, Spatial: spatial}
}

// NewDropout1D returns channel dropout for [N, C, L] or [C, L] (PyTorch's
// nn.Dropout1d); a rate outside [0, 1) panics.
func NewDropout1D(rate float64) *ChannelDropout { return newChannelDropout("nn.NewDropout1D", rate, 1) }

// NewDropout2D returns channel dropout for [N, C, H, W] (PyTorch's
// nn.Dropout2d); a rate outside [0, 1) panics.
func NewDropout2D(rate float64) *ChannelDropout { return newChannelDropout("nn.NewDropout2D", rate, 2) }

// NewDropout3D returns channel dropout for [N, C, D, H, W] or
// [C, D, H, W] (PyTorch's nn.Dropout3d); a rate outside [0, 1) panics.
func NewDropout3D(rate float64) *ChannelDropout { return newChannelDropout("nn.NewDropout3D", rate, 3) }

// Forward applies channel dropout.
func (d *ChannelDropout) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.ChannelDropout"
	checkFloatInput(op, x)
	if d.Spatial < 1 || d.Spatial > 3 {
		nd.Panicf(op, nd.ErrArgument, "%d spatial axes (build it with NewDropout1D, 2D or 3D)", d.Spatial)
	}
	n := x.NDim()
	batched := n == d.Spatial+2
	if !batched && (n != d.Spatial+1 || d.Spatial == 2) {
		switch d.Spatial {
		case 1:
			nd.Panicf(op, nd.ErrShape, "Dropout1D wants [N, C, L] or [C, L], got %v", x.Shape())
		case 2:
			nd.Panicf(op, nd.ErrShape, "Dropout2D wants [N, C, H, W], got %v (for [N, C, L] use Dropout1D; add the batch axis to [C, H, W])", x.Shape())
		default:
			nd.Panicf(op, nd.ErrShape, "Dropout3D wants [N, C, D, H, W] or [C, D, H, W], got %v", x.Shape())
		}
	}
	axes := make([]int, d.Spatial)
	for i := range axes {
		axes[i] = n - d.Spatial + i
	}
	return nd.DropoutAxes(x, d.Rate, axes...)
}

// ExportONNX writes nothing: dropout is the identity in predict mode.
func (d *ChannelDropout) ExportONNX(_ gluon.ONNXGraph, x string) (string, error) { return x, nil }

// seluSaturation is −λα, the value SELU tends to for large negative
// inputs: alpha dropout sets dropped elements to it.
const seluSaturation = -seluScale * seluAlpha

// AlphaDropout is dropout for self-normalising networks (Klambauer et al.
// 2017; PyTorch's nn.AlphaDropout and nn.FeatureAlphaDropout): in
// training mode each element (each channel, axis 1 of [N, C, ...], with
// Feature) is dropped with probability p = Rate and set to SELU's
// saturation value α′ = −λα, and the result is scaled and shifted by the
// a and b that keep a zero mean and unit variance:
//
//	a = ((1 − p)(1 + p·α′²))^(−1/2),  b = −a·α′·p
//	y = a·x + b (kept),  a·α′ + b (dropped)
//
// In predict mode it passes the input through.
type AlphaDropout struct {
	gluon.BlockMeta
	Rate float64
	// Feature drops whole channels (PyTorch's FeatureAlphaDropout).
	Feature bool
}

// NewAlphaDropout returns element-wise alpha dropout; a rate outside
// [0, 1) panics.
func NewAlphaDropout(rate float64) *AlphaDropout {
	return newAlphaDropout("nn.NewAlphaDropout", rate, false)
}

// NewFeatureAlphaDropout returns alpha dropout of whole channels, for
// inputs [N, C, ...]; a rate outside [0, 1) panics.
func NewFeatureAlphaDropout(rate float64) *AlphaDropout {
	return newAlphaDropout("nn.NewFeatureAlphaDropout", rate, true)
}

func newAlphaDropout(op string, rate float64, feature bool) *AlphaDropout {
	if !(rate >= 0 && rate < 1) {
		nd.Panicf(op, nd.ErrArgument, "rate %g outside [0, 1)", rate)
	}
	return &AlphaDropout{BlockMeta: gluon.NewBlockMeta("alphadropout"), Rate: rate, Feature: feature}
}

// alphaDropoutAffine returns the scale a and the shifts of the kept and
// dropped elements for rate p.
func alphaDropoutAffine(p float64) (a, kept, dropped float64) {
	a = 1 / math.Sqrt((seluSaturation*seluSaturation*p+1)*(1-p))
	b := -a * seluSaturation * p
	return a, b, a*seluSaturation + b
}

// Forward applies alpha dropout.
func (d *AlphaDropout) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.AlphaDropout"
	checkFloatInput(op, x)
	if !(d.Rate >= 0 && d.Rate < 1) {
		nd.Panicf(op, nd.ErrArgument, "rate %g outside [0, 1)", d.Rate)
	}
	var axes []int
	if d.Feature {
		if x.NDim() < 2 {
			nd.Panicf(op, nd.ErrShape, "feature alpha dropout wants an input [N, C, ...], got %v", x.Shape())
		}
		for a := 2; a < x.NDim(); a++ {
			axes = append(axes, a)
		}
	}
	if !x.Session().IsTraining() || d.Rate == 0 {
		return x
	}
	// The mask: Dropout's draw on ones, 0 where dropped.
	mask := nd.DropoutAxes(nd.OnesLike(x), d.Rate, axes...)
	kept := nd.NotEqual(mask, nd.ZerosLike(mask))
	a, b, dropped := alphaDropoutAffine(d.Rate)
	return nd.Where(kept, nd.AddScalar(nd.MulScalar(x, a), b), nd.FullLike(x, dropped))
}

// ExportONNX writes nothing: alpha dropout is the identity in predict
// mode.
func (d *AlphaDropout) ExportONNX(_ gluon.ONNXGraph, x string) (string, error) { return x, nil }

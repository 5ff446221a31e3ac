package audio

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// defaultMuLawChannels is torchaudio's quantization_channels.
const defaultMuLawChannels = 256

// checkChannels fails unless a mu-law code has at least 2 levels.
func checkChannels(op string, channels int) {
	if channels < 2 {
		nd.Panicf(op, nd.ErrArgument, "%d quantization channels: want at least 2", channels)
	}
}

// muLawInput checks x and converts an integer or Bool array to
// Float32, as torchaudio converts it (to torch.float).
func muLawInput(op string, x *nd.NDArray) *nd.NDArray {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil input")
	}
	if !x.DType().IsFloat() {
		return x.AsType(nd.Float32)
	}
	return x
}

// MuLawEncode returns the mu-law codes of the signal x, scaled to
// [−1, 1], in 0 … channels−1 (torchaudio.functional.mu_law_encoding):
// with μ = channels − 1, y = sign(x)·log(1 + μ|x|)/log(1 + μ), then
// ⌊(y + 1)/2·μ + 0.5⌋ (truncated toward zero, as torch's conversion) as
// Int64. Values beyond ±1 give codes beyond the range, as torchaudio's;
// NaN gives 0 and ±∞ the largest and smallest int64 (nd's conversion).
// An integer x is converted to Float32 first, as torchaudio does (with
// a warning). channels must be at least 2. The codes have no gradient.
func MuLawEncode(x *nd.NDArray, channels int) *nd.NDArray {
	const op = "audio.MuLawEncode"
	checkChannels(op, channels)
	x = muLawInput(op, x).Detach() // nothing to record: the codes have no gradient
	mu := float64(channels - 1)
	y := nd.DivScalar(nd.Mul(nd.Sign(x), nd.Log1p(nd.MulScalar(nd.Abs(x), mu))), math.Log1p(mu))
	y = nd.AddScalar(nd.MulScalar(nd.DivScalar(nd.AddScalar(y, 1), 2), mu), 0.5)
	return y.AsType(nd.Int64)
}

// MuLawDecode returns the signal of the mu-law codes x
// (torchaudio.functional.mu_law_decoding): with μ = channels − 1 and
// y = x/μ·2 − 1, sign(y)·(exp(|y|·log(1 + μ)) − 1)/μ, in [−1, 1] for
// codes in 0 … μ. An integer x gives Float32, as torchaudio's; a
// floating-point x keeps its dtype and gets a gradient. channels must be
// at least 2.
func MuLawDecode(x *nd.NDArray, channels int) *nd.NDArray {
	const op = "audio.MuLawDecode"
	checkChannels(op, channels)
	x = muLawInput(op, x)
	mu := float64(channels - 1)
	y := nd.SubScalar(nd.MulScalar(nd.DivScalar(x, mu), 2), 1)
	e := nd.SubScalar(nd.Exp(nd.MulScalar(nd.Abs(y), math.Log1p(mu))), 1)
	return nd.DivScalar(nd.Mul(nd.Sign(y), e), mu)
}

// MuLawEncoding is torchaudio's MuLawEncoding as a Block: MuLawEncode
// with its number of quantization channels. Its output is Int64 (a
// data pipeline's Transform gives the codes as float32 values).
type MuLawEncoding struct {
	gluon.BlockMeta
	channels int
}

// NewMuLawEncoding returns a MuLawEncoding of channels levels (0: 256,
// torchaudio's default); fewer than 2 panic with an *nd.Error.
func NewMuLawEncoding(channels int) *MuLawEncoding {
	if channels == 0 {
		channels = defaultMuLawChannels
	}
	checkChannels("audio.NewMuLawEncoding", channels)
	return &MuLawEncoding{BlockMeta: gluon.NewBlockMeta("mulawencoding"), channels: channels}
}

// Channels returns the number of quantization channels.
func (m *MuLawEncoding) Channels() int { return m.channels }

// Forward returns the codes of x.
func (m *MuLawEncoding) Forward(x *nd.NDArray) *nd.NDArray { return MuLawEncode(x, m.channels) }

// MuLawDecoding is torchaudio's MuLawDecoding as a Block: MuLawDecode
// with its number of quantization channels. It is differentiable for a
// floating-point input.
type MuLawDecoding struct {
	gluon.BlockMeta
	channels int
}

// NewMuLawDecoding returns a MuLawDecoding of channels levels (0: 256);
// fewer than 2 panic with an *nd.Error.
func NewMuLawDecoding(channels int) *MuLawDecoding {
	if channels == 0 {
		channels = defaultMuLawChannels
	}
	checkChannels("audio.NewMuLawDecoding", channels)
	return &MuLawDecoding{BlockMeta: gluon.NewBlockMeta("mulawdecoding"), channels: channels}
}

// Channels returns the number of quantization channels.
func (m *MuLawDecoding) Channels() int { return m.channels }

// Forward returns the signal of the codes x.
func (m *MuLawDecoding) Forward(x *nd.NDArray) *nd.NDArray { return MuLawDecode(x, m.channels) }

// ExportONNX writes the decoding in MuLawDecode's steps: y = x/μ·2 − 1,
// then Sign(y)·(Exp(|y|·log(1 + μ)) − 1)/μ. The input must be
// floating-point.
func (m *MuLawDecoding) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	mu := float64(m.channels - 1)
	y := onnxArith(g, "Sub", onnxArith(g, "Mul", onnxArith(g, "Div", x, mu), 2), 1)
	e := onnxArith(g, "Sub", onnxOp(g, "Exp", []string{onnxArith(g, "Mul", onnxOp(g, "Abs", []string{y}, nil), math.Log1p(mu))}, nil), 1)
	return onnxArith(g, "Div", onnxOp(g, "Mul", []string{onnxOp(g, "Sign", []string{y}, nil), e}, nil), mu), nil
}

package initializer

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/goluon/goluon/nd"
)

// fans returns a weight's fan-in and fan-out as MXNet and PyTorch compute
// them: shape[1]·∏shape[2:] and shape[0]·∏shape[2:] (a vector's fan-in
// and fan-out are its length, as PyTorch's for a 1-D tensor is refused:
// here a bias-like weight is allowed).
func fans(op string, shape []int) (in, out float64) {
	switch len(shape) {
	case 0:
		nd.Panicf(op, nd.ErrShape, "a scalar weight has no fan-in")
	case 1:
		return float64(shape[0]), float64(shape[0])
	}
	recept := 1
	for _, s := range shape[2:] {
		recept *= s
	}
	return float64(shape[1] * recept), float64(shape[0] * recept)
}

// Gain is PyTorch's calculate_gain: the factor that keeps activations'
// variance through a nonlinearity — "linear", "identity", "sigmoid",
// "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d" and
// "conv_transpose3d" 1; "tanh" 5/3; "relu" √2; "leaky_relu"
// √(2/(1+slope²)); "selu" 3/4.
func Gain(nonlinearity string, slope float64) float64 {
	switch nonlinearity {
	case "linear", "identity", "sigmoid", "conv1d", "conv2d", "conv3d",
		"conv_transpose1d", "conv_transpose2d", "conv_transpose3d":
		return 1
	case "tanh":
		return 5.0 / 3
	case "relu":
		return math.Sqrt2
	case "leaky_relu":
		return math.Sqrt(2 / (1 + slope*slope))
	case "selu":
		return 0.75
	}
	nd.Panicf("initializer.Gain", nd.ErrArgument, "unknown nonlinearity %q", nonlinearity)
	return 0
}

// Kaiming is He initialisation as PyTorch's kaiming_uniform_ and
// kaiming_normal_ define it: std = gain/√fan, with fan the fan-in (Mode
// "fan_in", the default) or fan-out ("fan_out") and gain Gain(Nonlinearity,
// Slope) (Nonlinearity "leaky_relu" by default, as PyTorch's, where a zero
// Slope is plain ReLU's √2). Values are U(−√3·std, √3·std), or N(0, std²)
// with Normal. PyTorch's default for Linear and Conv weights is Kaiming{Slope:
// √5}: U(±1/√fan_in).
type Kaiming struct {
	Normal       bool
	Mode         string  // "fan_in" (default) or "fan_out"
	Nonlinearity string  // default "leaky_relu"
	Slope        float64 // the leaky ReLU's negative slope (PyTorch's a)
}

// InitWeight fills data with Kaiming values.
func (k Kaiming) InitWeight(shape []int, data []float64, rng *rand.Rand) {
	const op = "initializer.Kaiming"
	in, out := fans(op, shape)
	fan := in
	switch k.Mode {
	case "", "fan_in":
	case "fan_out":
		fan = out
	default:
		nd.Panicf(op, nd.ErrArgument, "unknown mode %q (want fan_in or fan_out)", k.Mode)
	}
	nl := k.Nonlinearity
	if nl == "" {
		nl = "leaky_relu"
	}
	std := Gain(nl, k.Slope) / math.Sqrt(fan)
	if k.Normal {
		Normal{Sigma: std}.InitWeight(shape, data, rng)
		return
	}
	Uniform{Scale: math.Sqrt(3) * std}.InitWeight(shape, data, rng)
}

// TruncatedNormal draws from N(Mean, Std²) restricted to [Low, High]
// (absolute bounds, as PyTorch's trunc_normal_), by inverting the normal
// CDF on the truncated range. A zero Std is 1 and zero bounds are
// PyTorch's −2 and 2, so TruncatedNormal{Std: 0.02} is timm's ViT
// initialisation, trunc_normal_(std=.02), whose bounds lie 100 standard
// deviations out.
type TruncatedNormal struct {
	Mean, Std, Low, High float64
}

// InitWeight fills data with truncated normal values.
func (t TruncatedNormal) InitWeight(_ []int, data []float64, rng *rand.Rand) {
	std := t.Std
	if std == 0 {
		std = 1
	}
	lo, hi := t.Low, t.High
	if lo == 0 && hi == 0 {
		lo, hi = -2, 2
	}
	if !(lo < hi) {
		nd.Panicf("initializer.TruncatedNormal", nd.ErrArgument, "empty range [%g, %g]", lo, hi)
	}
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-t.Mean)/(std*math.Sqrt2)) }
	a, b := cdf(lo), cdf(hi)
	for i := range data {
		u := a + (b-a)*rng.Float64()
		v := t.Mean + std*math.Sqrt2*math.Erfinv(2*u-1)
		data[i] = min(max(v, lo), hi) // rounding at the ends
	}
}

// Orthogonal fills a weight with a (semi-)orthogonal matrix times Gain,
// the weight seen as shape[0] rows of ∏shape[1:] (PyTorch's orthogonal_
// and Gluon's Orthogonal): the Q of a QR factorisation of a Gaussian
// matrix, its columns' signs fixed by R's diagonal so that it is uniformly
// distributed. Rows are orthonormal when there are no more rows than
// columns, columns otherwise. A zero Gain is PyTorch's 1 (MXNet's
// Orthogonal defaults to 1.414).
type Orthogonal struct{ Gain float64 }

// InitWeight fills data with an orthogonal matrix.
func (o Orthogonal) InitWeight(shape []int, data []float64, rng *rand.Rand) {
	if len(shape) < 2 {
		nd.Panicf("initializer.Orthogonal", nd.ErrShape, "weight of shape %v needs at least 2 dimensions", shape)
	}
	rows := shape[0]
	cols := len(data) / max(rows, 1)
	if rows == 0 || cols == 0 {
		return
	}
	r, c := rows, cols
	if rows < cols {
		r, c = cols, rows // factorise the transpose: Q has orthonormal columns
	}
	g := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q, rr mat.Dense
	qr.QTo(&q)
	qr.RTo(&rr)
	gain := o.Gain
	if gain == 0 {
		gain = 1
	}
	for j := range c {
		s := gain
		if rr.At(j, j) < 0 {
			s = -gain
		}
		for i := range r {
			v := q.At(i, j) * s
			if rows < cols {
				data[j*cols+i] = v
			} else {
				data[i*cols+j] = v
			}
		}
	}
}

// Bilinear fills a transposed-convolution weight [C, 1 or C, k, k] with
// the bilinear interpolation kernel, so that the layer upsamples by the
// factor ⌈k/2⌉ (MXNet's Bilinear initializer, for FCN-style upsampling).
type Bilinear struct{}

// InitWeight fills data with the bilinear kernel.
func (Bilinear) InitWeight(shape []int, data []float64, _ *rand.Rand) {
	if len(shape) != 4 || shape[2] != shape[3] {
		nd.Panicf("initializer.Bilinear", nd.ErrShape, "weight of shape %v: want [C, C', k, k]", shape)
	}
	k := shape[3]
	f := math.Ceil(float64(k) / 2)
	c := (2*f - 1 - math.Mod(f, 2)) / (2 * f)
	for i := range data {
		x, y := float64(i%k), float64((i/k)%k)
		data[i] = (1 - math.Abs(x/f-c)) * (1 - math.Abs(y/f-c))
	}
}

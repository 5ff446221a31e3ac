package loss_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestGradCheckExtra checks the margin, ranking, Poisson, CTC and weighted
// losses against central differences in float64, with respect to every
// input but those listed as not differentiable (labels that are indices or
// signs, lengths).
func TestGradCheckExtra(t *testing.T) {
	dev := ctx.CPU(0)
	r := func(seed uint64, lo, hi float64, shape ...int) *nd.NDArray {
		return ndtest.Rand(dev, seed, lo, hi, shape...)
	}
	sgn := func(v ...float64) *nd.NDArray { return nd.FromSlice(dev, v, len(v)) }
	// Scores whose product with the signs stays away from the margin 1.
	hingeY := nd.FromSlice(dev, []float64{1, -1, -1, 1, 1, -1, 1, -1, 1, 1, -1, -1}, 3, 4)
	hingeP := nd.Mul(hingeY, ndtest.AwayFrom(dev, 40, -2, 3, 0.05, []float64{1, 0.5}, 3, 4))
	ctcLabel := nd.FromSlice(dev, []float64{1, 2, 2, 0, 3, -1, -1, -1, 1, 3, 1, 3}, 3, 4)
	ctcLen := nd.FromSlice(dev, []float64{7, 5, 8}, 3)
	cw := r(41, 0.2, 3, 5)
	cases := []struct {
		name   string
		in     []*nd.NDArray
		f      func(in []*nd.NDArray) *nd.NDArray
		noGrad []int
	}{
		{"Hinge", []*nd.NDArray{hingeP, hingeY}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.NewHinge().Forward(in[0], in[1])
		}, []int{1}},
		{"SquaredHinge/margin0.5", []*nd.NDArray{hingeP, hingeY, r(42, 0.1, 2, 3)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SquaredHinge{Margin: 0.5}.ForwardWeighted(in[0], in[1], in[2])
		}, []int{1}},
		{"Logistic/signed", []*nd.NDArray{r(43, -5, 5, 3, 4), hingeY}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.NewLogistic().Forward(in[0], in[1])
		}, []int{1}},
		{"Logistic/binary", []*nd.NDArray{r(44, -5, 5, 3, 4), r(45, 0, 1, 3, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.Logistic{BinaryLabels: true, Weight: 2}.Forward(in[0], in[1])
		}, nil},
		{"Triplet", []*nd.NDArray{r(46, -1, 1, 4, 3), r(47, -1, 1, 4, 3), r(48, -1, 1, 4, 3)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.Triplet{Margin: 3}.Forward(in[0], in[1], in[2]) // every sample above the hinge
		}, nil},
		{"CosineEmbedding", []*nd.NDArray{r(49, -1, 1, 4, 5), r(50, -1, 1, 4, 5), sgn(1, -1, 1, -1), r(51, 0.1, 2, 4)},
			func(in []*nd.NDArray) *nd.NDArray {
				return loss.CosineEmbedding{Margin: -2}.ForwardWeighted(in[0], in[1], in[2], in[3])
			}, []int{2}},
		{"PoissonNLL/log-rate", []*nd.NDArray{r(52, -1, 1.5, 3, 4), r(53, 0, 4, 3, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.NewPoissonNLL().Forward(in[0], in[1])
		}, nil},
		{"PoissonNLL/rate-full", []*nd.NDArray{r(54, 0.2, 4, 3, 4), r(55, 1.2, 5, 3, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.PoissonNLL{ComputeFull: true}.Forward(in[0], in[1])
		}, nil},
		{"CTC/NTC", []*nd.NDArray{r(56, -2, 2, 3, 8, 5)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.NewCTC().Forward(in[0], ctcLabel, ctcLen, nil)
		}, nil},
		{"CTC/TNC-blank0", []*nd.NDArray{r(57, -2, 2, 8, 3, 5), r(58, 0.1, 2, 3)}, func(in []*nd.NDArray) *nd.NDArray {
			lab := nd.FromSlice(dev, []float64{1, 2, 2, 4, 3, 4, -1, -1, 1, 3, 1, 3}, 3, 4)
			return loss.CTC{Layout: "TNC"}.ForwardWeighted(in[0], lab, ctcLen, nil, in[1])
		}, nil},
		{"SoftmaxCE/class-weight", []*nd.NDArray{r(59, -2, 2, 4, 5), classes(dev, 5, 4), cw}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, ClassWeight: in[2]}.Forward(in[0], in[1])
		}, []int{1}},
		{"SoftmaxCE/class-weight-smoothing", []*nd.NDArray{r(60, -2, 2, 4, 5), classes(dev, 5, 4), cw}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, LabelSmoothing: 0.2, ClassWeight: in[2]}.Forward(in[0], in[1])
		}, []int{1}},
		{"SoftmaxCE/class-weight-dense", []*nd.NDArray{r(61, -2, 2, 4, 5), softLabels(dev, 62, -1, 4, 5), cw}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SoftmaxCrossEntropy{Axis: -1, ClassWeight: in[2]}.Forward(in[0], in[1])
		}, nil},
		{"SoftmaxCE/token-mean-class-weight-ignore", []*nd.NDArray{r(69, -2, 2, 2, 3, 5), nd.FromSlice(dev, []float64{1, -100, 4, 0, 2, -100}, 2, 3), cw}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, UseIgnore: true, IgnoreLabel: -100, TokenMean: true, LabelSmoothing: 0.1, ClassWeight: in[2]}.Forward(in[0], in[1])
		}, []int{1}},
		{"SigmoidBCE/pos-weight", []*nd.NDArray{r(63, -4, 4, 3, 4), r(64, 0, 1, 3, 4), r(65, 0.2, 3, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SigmoidBCE{PosWeight: in[2]}.Forward(in[0], in[1])
		}, nil},
		{"SigmoidBCE/pos-weight-sigmoid", []*nd.NDArray{r(66, 0.05, 0.95, 3, 4), r(67, 0, 1, 3, 4), r(68, 0.2, 3, 3, 1)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.SigmoidBCE{FromSigmoid: true, PosWeight: in[2]}.Forward(in[0], in[1])
		}, nil},
		{"KLDiv/log-target", []*nd.NDArray{r(69, -3, -0.1, 3, 4), r(70, -3, -0.1, 3, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.KLDiv{FromLogits: true, LogTarget: true}.Forward(in[0], in[1])
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ndtest.CheckGrad(t, c.f, c.in, ndtest.GradTol{}, c.noGrad...)
		})
	}
}

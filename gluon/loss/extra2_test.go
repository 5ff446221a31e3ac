package loss_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestGradCheckExtra2 checks the Gaussian NLL, multi-margin and margin
// ranking losses against central differences in float64, with respect to
// every input but the labels that are classes or signs, away from the
// hinges and the variance clamp.
func TestGradCheckExtra2(t *testing.T) {
	dev := ctx.CPU(0)
	r := func(seed uint64, lo, hi float64, shape ...int) *nd.NDArray {
		return ndtest.Rand(dev, seed, lo, hi, shape...)
	}
	signs := nd.FromSlice(dev, []float64{1, -1, -1, 1, 1, -1, 1, -1, 1, 1, -1, -1}, 3, 4)
	labels := nd.FromSlice(dev, []int64{0, 3, 1, 2, 3}, 5)
	cases := []struct {
		name   string
		in     []*nd.NDArray
		f      func(in []*nd.NDArray) *nd.NDArray
		noGrad []int
	}{
		{"GaussianNLL", []*nd.NDArray{r(1, -2, 2, 3, 4), r(2, -2, 2, 3, 4), r(3, 0.1, 2, 3, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.NewGaussianNLL().Forward(in[0], in[1], in[2])
		}, nil},
		{"GaussianNLL/row-variance-full", []*nd.NDArray{r(4, -2, 2, 3, 2, 4), r(5, -2, 2, 3, 2, 4), r(6, 0.1, 2, 3, 2), r(7, 0.2, 2, 3)},
			func(in []*nd.NDArray) *nd.NDArray {
				return loss.GaussianNLL{Full: true, Weight: 0.5}.ForwardWeighted(in[0], in[1], in[2], in[3])
			}, nil},
		{"MultiMargin", []*nd.NDArray{r(8, -2, 2, 5, 4)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.NewMultiMargin().Forward(in[0], labels)
		}, nil},
		{"MultiMargin/p2-class-weight", []*nd.NDArray{r(9, -2, 2, 5, 4), r(10, 0.2, 3, 4), r(11, 0.2, 2, 5)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.MultiMargin{P: 2, Margin: 0.7, ClassWeight: in[1]}.ForwardWeighted(in[0], labels, in[2])
		}, nil},
		{"MarginRanking", []*nd.NDArray{r(12, -2, 2, 3, 4), r(13, -2, 2, 3, 4), signs}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.MarginRanking{Margin: 5}.Forward(in[0], in[1], in[2]) // every term above the hinge
		}, []int{2}},
		{"MarginRanking/weighted", []*nd.NDArray{r(14, -2, 2, 3, 4), r(15, -2, 2, 3, 4), signs, r(16, 0.1, 2, 3)}, func(in []*nd.NDArray) *nd.NDArray {
			return loss.MarginRanking{Margin: 5, Weight: 2}.ForwardWeighted(in[0], in[1], in[2], in[3])
		}, []int{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ndtest.CheckGrad(t, c.f, c.in, ndtest.GradTol{}, c.noGrad...)
		})
	}
}

// TestExtra2Misuse: bad inputs and settings panic with an *nd.Error of
// the right kind naming the loss.
func TestExtra2Misuse(t *testing.T) {
	dev := ctx.CPU(0)
	f := func(shape ...int) *nd.NDArray { return nd.Ones(dev, nd.Float32, shape...) }
	ints := func(v ...int64) *nd.NDArray { return nd.FromSlice(dev, v, len(v)) }
	for _, c := range []struct {
		name string
		kind nd.ErrorKind
		f    func()
		want string
	}{
		{"gaussian variance shape", nd.ErrShape, func() { loss.NewGaussianNLL().Forward(f(2, 3), f(2, 3), f(2, 2)) }, "variances"},
		{"gaussian negative variance", nd.ErrArgument, func() {
			loss.NewGaussianNLL().Forward(f(2, 2), f(2, 2), nd.FromSlice(dev, []float32{1, -0.5, 1, 1}, 2, 2))
		}, "negative"},
		{"gaussian nil variance", nd.ErrArgument, func() { loss.NewGaussianNLL().Forward(f(2, 3), f(2, 3), nil) }, "nil variances"},
		{"gaussian variance dtype", nd.ErrDType, func() { loss.NewGaussianNLL().Forward(f(2, 3), f(2, 3), nd.Ones(dev, nd.Float64, 2, 3)) }, "variances"},
		{"gaussian variance context", nd.ErrContext, func() {
			loss.NewGaussianNLL().Forward(f(2, 3), f(2, 3), nd.Ones(ctx.CPU(1), nd.Float32, 2, 3))
		}, "cpu(1)"},
		{"gaussian labels", nd.ErrShape, func() { loss.NewGaussianNLL().Forward(f(2, 3), f(2, 4), f(2, 3)) }, "labels"},
		{"gaussian epsilon", nd.ErrArgument, func() { loss.GaussianNLL{Epsilon: -1}.Forward(f(2, 3), f(2, 3), f(2, 3)) }, "epsilon"},
		{"multimargin p", nd.ErrArgument, func() { loss.MultiMargin{P: 3}.Forward(f(2, 3), ints(0, 1)) }, "p = 3"},
		{"multimargin margin", nd.ErrArgument, func() { loss.MultiMargin{Margin: math.NaN()}.Forward(f(2, 3), ints(0, 1)) }, "margin"},
		{"multimargin rank", nd.ErrShape, func() { loss.NewMultiMargin().Forward(f(2, 3, 4), ints(0, 1)) }, "[N, C]"},
		{"multimargin labels", nd.ErrShape, func() { loss.NewMultiMargin().Forward(f(2, 3), ints(0, 1, 2)) }, "labels"},
		{"multimargin label range", nd.ErrArgument, func() { loss.NewMultiMargin().Forward(f(2, 3), ints(0, 3)) }, "label 3"},
		{"multimargin negative label", nd.ErrArgument, func() { loss.NewMultiMargin().Forward(f(2, 3), ints(-1, 0)) }, "label -1"},
		{"multimargin fractional label", nd.ErrArgument, func() {
			loss.NewMultiMargin().Forward(f(2, 3), nd.FromSlice(dev, []float32{0, 1.5}, 2))
		}, "1.5"},
		{"multimargin class weights", nd.ErrShape, func() { loss.MultiMargin{ClassWeight: f(2)}.Forward(f(2, 3), ints(0, 1)) }, "class weights"},
		{"ranking shapes", nd.ErrShape, func() { loss.NewMarginRanking().Forward(f(2, 3), f(2, 2), f(2, 3)) }, "second inputs"},
		{"ranking labels", nd.ErrShape, func() { loss.NewMarginRanking().Forward(f(2, 3), f(2, 3), f(2)) }, "labels"},
		{"ranking margin", nd.ErrArgument, func() { loss.MarginRanking{Margin: math.Inf(1)}.Forward(f(2), f(2), f(2)) }, "margin"},
		{"ranking nil", nd.ErrArgument, func() { loss.NewMarginRanking().Forward(f(2), nil, f(2)) }, "nil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.f)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *nd.Error", err)
			}
			if e.Kind != c.kind || !strings.Contains(e.Error(), c.want) || !strings.HasPrefix(e.Op, "loss.") {
				t.Errorf("got %v (kind %v), want kind %v mentioning %q", e, e.Kind, c.kind, c.want)
			}
		})
	}
}

// TestExtra2Edges: the variance clamp and its gradient, integer and
// float class labels alike, margin ranking's integer labels, hybridized
// losses, and Weighted implemented.
func TestExtra2Edges(t *testing.T) {
	dev := ctx.CPU(0)
	var _ loss.Weighted = loss.NewMultiMargin()
	t.Run("variance below epsilon: clamped value, gradient kept", func(t *testing.T) {
		v := nd.FromSlice(dev, []float64{0, 1e-9}, 2, 1)
		v.AttachGrad(nd.GradWrite)
		pred := nd.FromSlice(dev, []float64{1, 2}, 2, 1)
		var l *nd.NDArray
		autograd.Record(func() { l = loss.NewGaussianNLL().Forward(pred, nd.ZerosLike(pred), v) })
		autograd.Backward(l)
		// ½(log ε + x²/ε) and its derivative in the variance at ε.
		eps := 1e-6
		for i, x := range []float64{1, 2} {
			want := 0.5 * (math.Log(eps) + x*x/eps)
			if got := l.Float64s()[i]; math.Abs(got-want) > 1e-9*want {
				t.Errorf("loss %d: %v, want %v", i, got, want)
			}
			dv := 0.5 * (1/eps - x*x/(eps*eps))
			if got := v.Grad().Float64s()[i]; math.Abs(got-dv) > 1e-9*math.Abs(dv) {
				t.Errorf("variance gradient %d: %v, want %v", i, got, dv)
			}
		}
	})
	t.Run("class labels of any index dtype", func(t *testing.T) {
		pred := ndtest.Rand(dev, 3, -1, 1, 3, 4)
		want := loss.NewMultiMargin().Forward(pred, nd.FromSlice(dev, []float64{0, 3, 2}, 3)).Float64s()
		for _, lab := range []*nd.NDArray{
			nd.FromSlice(dev, []int64{0, 3, 2}, 3), nd.FromSlice(dev, []int32{0, 3, 2}, 3, 1), nd.FromSlice(dev, []uint8{0, 3, 2}, 3),
		} {
			got := loss.NewMultiMargin().Forward(pred, lab).Float64s()
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("%v labels: %v, want %v", lab.DType(), got, want)
					break
				}
			}
		}
	})
	t.Run("margin ranking integer labels", func(t *testing.T) {
		a, b := ndtest.Rand(dev, 4, -1, 1, 4), ndtest.Rand(dev, 5, -1, 1, 4)
		want := loss.NewMarginRanking().Forward(a, b, nd.FromSlice(dev, []float64{1, -1, 1, -1}, 4)).Float64s()
		got := loss.NewMarginRanking().Forward(a, b, nd.FromSlice(dev, []int64{1, -1, 1, -1}, 4)).Float64s()
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("integer labels %v, float labels %v", got, want)
			}
		}
	})
	t.Run("hybridized", func(t *testing.T) {
		pred := ndtest.Rand(dev, 6, -1, 1, 3, 4)
		lab := nd.FromSlice(dev, []int64{1, 0, 3}, 3)
		variance := ndtest.Rand(dev, 7, 0.5, 1, 3, 4)
		for name, f := range map[string]func(in ...*nd.NDArray) *nd.NDArray{
			"multimargin": func(in ...*nd.NDArray) *nd.NDArray { return loss.NewMultiMargin().Forward(in[0], lab) },
			"gaussian": func(in ...*nd.NDArray) *nd.NDArray {
				return loss.NewGaussianNLL().Forward(in[0], nd.ZerosLike(in[0]), variance)
			},
		} {
			want := f(pred).Float64s()
			h := gluon.Hybridize(&lossBlock{BlockMeta: gluon.NewBlockMeta("loss"), f: f}, gluon.HybridOpts{})
			for range 2 {
				got := h.Forward(pred).Float64s()
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s hybridized: %v, eager %v", name, got, want)
					}
				}
			}
		}
	})
}

// lossBlock wraps a loss of one input as a Block, to hybridize it.
type lossBlock struct {
	gluon.BlockMeta
	f func(in ...*nd.NDArray) *nd.NDArray
}

func (b *lossBlock) Forward(x *nd.NDArray) *nd.NDArray { return b.f(x) }

// ExampleMultiMargin scores two samples over three classes: the first
// clears the margin 1 against every other class (loss 0); the second's
// label scores 0.5 against 1 and 0, so its terms are 1.5 and 0.5, summed
// and divided by the 3 classes.
func ExampleMultiMargin() {
	dev := ctx.CPU(0)
	scores := nd.FromSlice(dev, []float32{3, 1, 0, 1, 0.5, 0}, 2, 3)
	labels := nd.FromSlice(dev, []int64{0, 1}, 2)
	l := loss.NewMultiMargin().Forward(scores, labels)
	fmt.Printf("%.4f\n", l.Float32s())
	// Output:
	// [0.0000 0.6667]
}

// ExampleGaussianNLL gives the negative log-likelihood of 1 under
// normals of mean 0 and variance 1 and 4, without the constant ½·log 2π:
// ½·(log σ² + 1/σ²).
func ExampleGaussianNLL() {
	dev := ctx.CPU(0)
	mean := nd.FromSlice(dev, []float64{0, 0}, 2)
	target := nd.FromSlice(dev, []float64{1, 1}, 2)
	variance := nd.FromSlice(dev, []float64{1, 4}, 2)
	l := loss.NewGaussianNLL().Forward(mean, target, variance)
	fmt.Printf("%.4f, want %.4f\n", l.Float64s(), []float64{0.5, 0.5 * (math.Log(4) + 0.25)})
	// Output:
	// [0.5000 0.8181], want [0.5000 0.8181]
}

package loss_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

var (
	_ loss.Weighted = loss.L2{}
	_ loss.Weighted = loss.L1{}
	_ loss.Weighted = loss.SigmoidBCE{}
	_ loss.Weighted = loss.SoftmaxCrossEntropy{}
)

func f64(dev ctx.Context, v []float64, shape ...int) *nd.NDArray {
	return nd.FromSlice(dev, v, shape...)
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		l    loss.Loss
		want string
	}{
		{loss.NewL2(), "L2Loss"},
		{loss.NewL1(), "L1Loss"},
		{loss.NewSigmoidBCE(false), "SigmoidBinaryCrossEntropyLoss"},
		{loss.NewSoftmaxCrossEntropy(), "SoftmaxCrossEntropyLoss"},
	} {
		if got := c.l.Name(); got != c.want {
			t.Errorf("Name() = %q, want %q", got, c.want)
		}
	}
}

// TestHandValues checks small cases computed by hand.
func TestHandValues(t *testing.T) {
	dev := ctx.CPU(0)
	pred := f64(dev, []float64{1, 2, 3, 4}, 2, 2)
	label := f64(dev, []float64{0, 2, 5, 4}, 2, 2)
	ln2 := math.Log(2)
	for _, c := range []struct {
		name string
		got  *nd.NDArray
		want []float64
	}{
		// 0.5·mean((1)², 0) = 0.25; 0.5·mean(2², 0) = 1.
		{"L2", loss.NewL2().Forward(pred, label), []float64{0.25, 1}},
		{"L2/zero-weight-is-1", loss.L2{}.Forward(pred, label), []float64{0.25, 1}},
		{"L2/weight", loss.L2{Weight: 4}.Forward(pred, label), []float64{1, 4}},
		{"L1", loss.NewL1().Forward(pred, label), []float64{0.5, 1}},
		{"L1/sample-weight", loss.NewL1().ForwardWeighted(pred, label, f64(dev, []float64{2, 0.5}, 2, 1)), []float64{1, 0.5}},
		// Logit 0: log 2 whatever the label.
		{"SigmoidBCE/zero-logit", loss.NewSigmoidBCE(false).Forward(nd.Zeros(dev, nd.Float32, 2, 1).AsType(nd.Float64), f64(dev, []float64{0, 1}, 2)), []float64{ln2, ln2}},
		// Uniform scores over 4 classes: log 4 for any label.
		{"SoftmaxCE/uniform", loss.NewSoftmaxCrossEntropy().Forward(nd.Full(dev, nd.Float64, 3, 2, 4), f64(dev, []float64{0, 3}, 2)), []float64{2 * ln2, 2 * ln2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.got.Float64s()
			for i := range c.want {
				if math.Abs(got[i]-c.want[i]) > 1e-12 {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestSampleWeightShapes checks that [N], [N, 1] and a full [N, C] array of
// per-sample values weight the same way, and that [C] weights classes.
func TestSampleWeightShapes(t *testing.T) {
	dev := ctx.CPU(0)
	pred := f64(dev, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	label := nd.ZerosLike(pred)
	plain := loss.NewL2().Forward(pred, label).Float64s()
	for _, sw := range []*nd.NDArray{
		f64(dev, []float64{2, 3}, 2),
		f64(dev, []float64{2, 3}, 2, 1),
		f64(dev, []float64{2, 2, 2, 3, 3, 3}, 2, 3),
	} {
		got := loss.NewL2().ForwardWeighted(pred, label, sw).Float64s()
		for i, w := range []float64{2, 3} {
			if math.Abs(got[i]-w*plain[i]) > 1e-12 {
				t.Errorf("sample weight %v: got %v, want [2 3]·%v", sw.Shape(), got, plain)
			}
		}
	}
	// A trailing-axis weight [C] broadcasts per class, as nd.Mul does.
	got := loss.NewL2().ForwardWeighted(pred, label, f64(dev, []float64{2, 3, 2}, 3)).Float64s()
	want := []float64{0.5 * (2*1 + 3*4 + 2*9) / 3, 0.5 * (2*16 + 3*25 + 2*36) / 3}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("per-class weights: got %v, want %v", got, want)
		}
	}
}

// TestSampleWeightAmbiguous: a one-dimensional weight whose length is
// both the batch size and the last axis's could weight samples (this
// package's rule) or the last axis (NumPy's broadcasting, a per-class
// weight): the meaning would change with the batch size, so it is an
// error that says how to write either.
func TestSampleWeightAmbiguous(t *testing.T) {
	dev := ctx.CPU(0)
	pred := f64(dev, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
	err := nd.Catch(func() {
		loss.NewSigmoidBCE(false).ForwardWeighted(pred, nd.ZerosLike(pred), f64(dev, []float64{1, 2, 3}, 3))
	})
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), "[3, 1]") {
		t.Fatalf("got %v", err)
	}
	// [N, 1] and [1, C] say which.
	bySample := loss.NewL2().ForwardWeighted(pred, nd.ZerosLike(pred), f64(dev, []float64{1, 2, 3}, 3, 1)).Float64s()
	byClass := loss.NewL2().ForwardWeighted(pred, nd.ZerosLike(pred), f64(dev, []float64{1, 2, 3}, 1, 3)).Float64s()
	if want := 2 * 0.5 * (16 + 25 + 36) / 3; math.Abs(bySample[1]-want) > 1e-12 {
		t.Errorf("per sample: %v, want row 1 = %v", bySample, want)
	}
	if want := 0.5 * (1*16 + 2*25 + 3*36) / 3; math.Abs(byClass[1]-want) > 1e-12 {
		t.Errorf("per class: %v, want row 1 = %v", byClass, want)
	}
}

// TestSigmoidBCEStable checks that huge logits give finite, exact losses in
// both dtypes, and that the gradient at logit 0 is sigmoid(0) − z.
func TestSigmoidBCEStable(t *testing.T) {
	dev := ctx.CPU(0)
	for _, dt := range []nd.DType{nd.Float32, nd.Float64} {
		x := f64(dev, []float64{1000, -1000, 1000, -1000}, 4).AsType(dt)
		z := f64(dev, []float64{1, 0, 0, 1}, 4).AsType(dt)
		got := loss.NewSigmoidBCE(false).Forward(x, z).Float64s()
		want := []float64{0, 0, 1000, 1000}
		for i := range want {
			if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-6 {
				t.Fatalf("%v: got %v, want %v", dt, got, want)
			}
		}
	}
	x := nd.Zeros(dev, nd.Float32, 2).AsType(nd.Float64)
	x.AttachGrad(nd.GradWrite)
	var l *nd.NDArray
	autograd.Record(func() {
		l = loss.NewSigmoidBCE(false).Forward(x, f64(dev, []float64{0, 1}, 2))
	})
	autograd.Backward(l)
	if g := x.Grad().Float64s(); g[0] != 0.5 || g[1] != -0.5 {
		t.Fatalf("gradient at logit 0 = %v, want [0.5 -0.5]", g)
	}
}

// TestOtherContext checks that a loss runs where its inputs live.
func TestOtherContext(t *testing.T) {
	dev := ctx.CPU(1)
	out := loss.NewSoftmaxCrossEntropy().Forward(nd.Zeros(dev, nd.Float32, 2, 3), nd.Zeros(dev, nd.Float32, 2))
	if out.Context() != dev || !slices.Equal(out.Shape(), []int{2}) {
		t.Fatalf("got %v", out)
	}
}

// TestErrors checks that misuse panics with an *nd.Error of the right kind
// whose text names the loss and the shapes or contexts.
func TestErrors(t *testing.T) {
	c0, c1 := ctx.CPU(0), ctx.CPU(1)
	z := func(dev ctx.Context, shape ...int) *nd.NDArray { return nd.Zeros(dev, nd.Float32, shape...) }
	sce := loss.NewSoftmaxCrossEntropy()
	for _, c := range []struct {
		name string
		f    func()
		kind nd.ErrorKind
		want []string
	}{
		{"context", func() { loss.NewL2().Forward(z(c0, 4, 3), z(c1, 4, 3)) }, nd.ErrContext,
			[]string{"loss.L2: context mismatch", "cpu(0)", "cpu(1)", "[4 3]"}},
		{"sample-weight-context", func() { loss.NewL1().ForwardWeighted(z(c0, 4), z(c0, 4), z(c1, 4)) }, nd.ErrContext,
			[]string{"loss.L1", "sample weights on cpu(1)"}},
		{"dtype", func() { loss.NewL1().Forward(z(c0, 4), z(c0, 4).AsType(nd.Float64)) }, nd.ErrDType,
			[]string{"loss.L1: dtype mismatch", "float"}},
		{"int-labels-l2", func() { loss.NewL2().Forward(z(c0, 2), nd.FromSlice(c0, []int64{0, 1})) }, nd.ErrDType,
			[]string{"loss.L2: dtype mismatch", "float32", "int64"}},
		{"int-labels-dense", func() { loss.SoftmaxCrossEntropy{Axis: -1}.Forward(z(c0, 2, 3), nd.Zeros(c0, nd.Int64, 2, 3)) }, nd.ErrDType,
			[]string{"loss.SoftmaxCrossEntropy: dtype mismatch", "int64"}},
		{"bool-sparse-labels", func() { sce.Forward(z(c0, 2, 3), nd.FromSlice(c0, []bool{true, false})) }, nd.ErrDType,
			[]string{"loss.SoftmaxCrossEntropy: dtype mismatch", "bool"}},
		{"label-shape", func() { loss.NewL2().Forward(z(c0, 4, 3), z(c0, 4, 2)) }, nd.ErrShape,
			[]string{"loss.L2: shape error", "[4 2]", "[4 3]"}},
		{"bce-label-shape", func() { loss.NewSigmoidBCE(true).Forward(z(c0, 4, 3), z(c0, 4)) }, nd.ErrShape,
			[]string{"loss.SigmoidBCE", "[4]", "[4 3]"}},
		{"sparse-label-shape", func() { sce.Forward(z(c0, 4, 5), z(c0, 3)) }, nd.ErrShape,
			[]string{"loss.SoftmaxCrossEntropy: shape error: sparse labels of shape [3]", "[4 5]"}},
		{"dense-label-shape", func() { loss.SoftmaxCrossEntropy{Axis: -1}.Forward(z(c0, 4, 5), z(c0, 4)) }, nd.ErrShape,
			[]string{"dense labels of shape [4]", "[4 5]"}},
		{"batch-axis", func() { loss.SoftmaxCrossEntropy{}.Forward(z(c0, 4, 5), z(c0, 5)) }, nd.ErrArgument,
			[]string{"loss.SoftmaxCrossEntropy", "batch axis"}},
		{"axis-range", func() { loss.SoftmaxCrossEntropy{Axis: 2}.Forward(z(c0, 4, 5), z(c0, 4)) }, nd.ErrArgument,
			[]string{"axis 2 out of range"}},
		{"scalar-pred", func() { loss.NewL2().Forward(nd.Zeros(c0, nd.Float32), nd.Zeros(c0, nd.Float32)) }, nd.ErrShape,
			[]string{"loss.L2", "no batch axis"}},
		{"sample-weight-shape", func() { loss.NewL2().ForwardWeighted(z(c0, 4, 3), z(c0, 4, 3), z(c0, 5)) }, nd.ErrShape,
			[]string{"loss.L2: shape error: sample weights of shape [5]", "[4 3]"}},
		{"sample-weight-grows-loss", func() { loss.NewL2().ForwardWeighted(z(c0, 4), z(c0, 4), z(c0, 2, 4)) }, nd.ErrShape,
			[]string{"sample weights of shape [2 4]", "[4]"}},
		{"nil-label", func() { loss.NewL1().Forward(z(c0, 4), nil) }, nd.ErrArgument,
			[]string{"loss.L1", "nil"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.f)
			if err == nil {
				t.Fatal("no panic")
			}
			if !errors.Is(err, &nd.Error{Kind: c.kind}) {
				t.Errorf("kind of %q is not %v", err, c.kind)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

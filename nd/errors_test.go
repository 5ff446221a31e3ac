package nd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestErrors(t *testing.T) {
	dev := ctx.CPU(0)
	m23 := nd.Ones(dev, nd.Float32, 2, 3)
	m43 := nd.Ones(dev, nd.Float32, 4, 3)
	f64 := nd.Full(dev, nd.Float64, 1, 2, 3)
	img := nd.Ones(dev, nd.Float32, 1, 2, 5, 5)
	released := nd.Ones(dev, nd.Float32, 2, 3)
	released.Release()
	cases := []struct {
		name string
		kind nd.ErrorKind
		want []string // substrings of the message
		call func()
	}{
		{"broadcast", nd.ErrShape, []string{"nd.Add:", "[2 3]", "[4 3]"}, func() { nd.Add(m23, m43) }},
		{"matmul inner", nd.ErrShape, []string{"nd.MatMul:", "[2 3]"}, func() { nd.MatMul(m23, m23) }},
		{"reshape", nd.ErrShape, []string{"nd.Reshape:", "[2 3]", "[4 2]"}, func() { nd.Reshape(m23, 4, 2) }},
		{"concat", nd.ErrShape, []string{"nd.Concat:", "[2 3]", "[4 3]"}, func() { nd.Concat([]*nd.NDArray{m23, m43}, 1) }},
		{"conv groups", nd.ErrShape, []string{"nd.Conv2D:", "[1 2 5 5]"}, func() {
			nd.Conv2D(img, nd.Ones(dev, nd.Float32, 3, 2, 3, 3), nil, nd.ConvOpts{Groups: 2})
		}},
		{"conv kernel too big", nd.ErrShape, []string{"nd.Conv2D:"}, func() {
			nd.Conv2D(img, nd.Ones(dev, nd.Float32, 1, 2, 7, 7), nil, nd.ConvOpts{})
		}},
		{"conv1d rank", nd.ErrShape, []string{"nd.Conv1D:", "NCW", "[1 2 5 5]"}, func() {
			nd.Conv1D(img, nd.Ones(dev, nd.Float32, 1, 2, 3), nil, nd.Conv1DOpts{})
		}},
		{"conv1d channels", nd.ErrShape, []string{"nd.Conv1D:"}, func() {
			nd.Conv1D(nd.Ones(dev, nd.Float32, 1, 2, 9), nd.Ones(dev, nd.Float32, 4, 3, 3), nil, nd.Conv1DOpts{})
		}},
		{"deconv channels", nd.ErrShape, []string{"nd.Conv2DTranspose:", "[1 2 5 5]"}, func() {
			nd.Conv2DTranspose(img, nd.Ones(dev, nd.Float32, 3, 2, 3, 3), nil, nd.ConvTransposeOpts{})
		}},
		{"deconv output padding", nd.ErrArgument, []string{"nd.Conv2DTranspose:", "output padding"}, func() {
			nd.Conv2DTranspose(img, nd.Ones(dev, nd.Float32, 2, 2, 3, 3), nil, nd.ConvTransposeOpts{Stride: [2]int{2, 2}, OutputPad: [2]int{2, 0}})
		}},
		{"deconv bias", nd.ErrShape, []string{"nd.Conv2DTranspose:", "bias"}, func() {
			nd.Conv2DTranspose(img, nd.Ones(dev, nd.Float32, 2, 3, 3, 3), nd.Ones(dev, nd.Float32, 2), nd.ConvTransposeOpts{})
		}},
		{"dropout axes", nd.ErrArgument, []string{"nd.DropoutAxes:"}, func() { nd.DropoutAxes(m23, 0.5, 2) }},
		{"pool rank", nd.ErrShape, []string{"nd.Pool2D:", "[2 3]"}, func() { nd.MaxPool2D(m23, [2]int{2, 2}, [2]int{}, [2]int{}) }},
		{"pick index shape", nd.ErrShape, []string{"nd.Pick:", "[4]", "[2 3]"}, func() { nd.Pick(m23, nd.Zeros(dev, nd.Float32, 4), 1) }},
		{"batchnorm channels", nd.ErrShape, []string{"nd.BatchNorm:", "[3]"}, func() {
			nd.BatchNorm(img, nil, nil, nd.Zeros(dev, nd.Float32, 3), nd.Ones(dev, nd.Float32, 3), nd.BatchNormOpts{})
		}},
		{"dtype", nd.ErrDType, []string{"nd.Mul:", "float32", "float64"}, func() { nd.Mul(m23, f64) }},
		{"axis", nd.ErrArgument, []string{"nd.Sum:", "axis 2"}, func() { nd.Sum(m23, 2) }},
		{"dropout p", nd.ErrArgument, []string{"nd.Dropout:"}, func() { nd.Dropout(m23, 1) }},
		{"from slice", nd.ErrShape, []string{"nd.FromSlice:", "[2 2]"}, func() { nd.FromSlice(dev, []float32{1, 2, 3}, 2, 2) }},
		{"negative shape", nd.ErrShape, []string{"nd.Full:"}, func() { nd.Zeros(dev, nd.Float32, 2, -1) }},
		{"released", nd.ErrReleased, []string{"nd.Exp:", "released"}, func() { nd.Exp(released) }},
		{"released read", nd.ErrReleased, []string{"released"}, func() { released.Float32s() }},
		{"nil input", nd.ErrArgument, []string{"nd.Add:", "nil"}, func() { nd.Add(m23, nil) }},
		{"gpu without backend", nd.ErrDevice, []string{"gpu(0)", "-tags cuda"}, func() { nd.Zeros(ctx.GPU(0), nd.Float32, 2) }},
		{"int exp", nd.ErrDType, []string{"nd.Exp:", "floating-point", "int64"}, func() { nd.Exp(nd.Zeros(dev, nd.Int64, 2)) }},
		{"int float mix", nd.ErrDType, []string{"nd.Add:", "int64", "float32"}, func() { nd.Add(nd.Zeros(dev, nd.Int64, 2), nd.Zeros(dev, nd.Float32, 2)) }},
		{"int fractional scalar", nd.ErrDType, []string{"nd.MulScalar:", "0.5", "int32"}, func() { nd.MulScalar(nd.Zeros(dev, nd.Int32, 2), 0.5) }},
		{"bool arithmetic", nd.ErrDType, []string{"nd.Add:", "bool"}, func() { nd.Add(nd.Zeros(dev, nd.Bool, 2), nd.Zeros(dev, nd.Bool, 2)) }},
		{"int matmul", nd.ErrDType, []string{"nd.Dot:", "int32"}, func() { nd.MatMul(nd.Zeros(dev, nd.Int32, 2, 2), nd.Zeros(dev, nd.Int32, 2, 2)) }},
		{"int mean", nd.ErrDType, []string{"nd.Mean:", "int64"}, func() { nd.Mean(nd.Zeros(dev, nd.Int64, 2)) }},
		{"int grad", nd.ErrDType, []string{"nd.AttachGrad:", "int64", "floating-point"}, func() { nd.Zeros(dev, nd.Int64, 2).AttachGrad(nd.GradWrite) }},
		{"int random", nd.ErrDType, []string{"nd.RandomUniform:", "int32"}, func() { nd.RandomUniform(dev, nd.Int32, 0, 1, 2) }},
		{"bool index", nd.ErrDType, []string{"nd.Take:", "bool"}, func() { nd.Take(m23, nd.Zeros(dev, nd.Bool, 2), 0, nd.TakeClip) }},
		{"where condition", nd.ErrDType, []string{"nd.Where:", "bool array", "float32"}, func() { nd.Where(m23, m23, m23) }},
		{"gather index rank", nd.ErrShape, []string{"nd.Gather:", "[2]", "[2 3]"}, func() { nd.Gather(m23, nd.Zeros(dev, nd.Int64, 2), 1) }},
		{"index add source", nd.ErrShape, []string{"nd.IndexAdd:", "[2 3]"}, func() { nd.IndexAdd(m23, nd.Zeros(dev, nd.Int64, 3), m23, 0) }},
		{"masked fill shape", nd.ErrShape, []string{"nd.MaskedFill:", "[4 3]", "[2 3]"}, func() { nd.MaskedFill(m23, nd.Zeros(dev, nd.Bool, 4, 3), 0) }},
		{"slice step 0", nd.ErrArgument, []string{"nd.Slice:", "step 0"}, func() { nd.Slice(m23, nd.SpanStep(0, 2, 0)) }},
		{"slice ranks", nd.ErrArgument, []string{"nd.Slice:", "3 ranges"}, func() { nd.Slice(m23, nd.All(), nd.All(), nd.All()) }},
		{"topk k", nd.ErrArgument, []string{"nd.TopK:", "k = 4"}, func() { nd.TopK(m23, 4, 1, true) }},
		{"norm ord", nd.ErrArgument, []string{"nd.Norm:", "ord 3"}, func() { nd.Norm(m23, 3) }},
		{"var ddof", nd.ErrArgument, []string{"nd.Var:", "ddof 3"}, func() { nd.Var(m23, 3, 1) }},
		{"prelu alpha", nd.ErrShape, []string{"nd.PReLU:", "[2]", "[3]"}, func() { nd.PReLU(m23, nd.Ones(dev, nd.Float32, 2), 1) }},
		{"layer norm gamma", nd.ErrShape, []string{"nd.LayerNorm:", "[2]", "want [3]"}, func() { nd.LayerNorm(m23, nd.Ones(dev, nd.Float32, 2), nil, -1, 1e-5) }},
		{"layer norm eps", nd.ErrArgument, []string{"nd.LayerNorm:", "negative eps"}, func() { nd.LayerNorm(m23, nil, nil, -1, -1) }},
		{"group norm groups", nd.ErrArgument, []string{"nd.GroupNorm:", "2 groups", "3 channels"}, func() { nd.GroupNorm(m23, nil, nil, 2, 1e-5) }},
		{"instance norm rank", nd.ErrShape, []string{"nd.InstanceNorm:", "[N, C, ...]"}, func() { nd.InstanceNorm(nd.Ones(dev, nd.Float32, 3), nil, nil, 1e-5) }},
		{"int gelu", nd.ErrDType, []string{"nd.GELU:", "int64"}, func() { nd.GELU(nd.Zeros(dev, nd.Int64, 2), false) }},
		{"unknown host type", nd.ErrArgument, []string{"nd.FromSlice:", "[]int16"}, func() { nd.FromSlice(dev, []int16{1}) }},
		{"scalar of many", nd.ErrShape, []string{"nd.Scalar:", "[2 3]"}, func() { m23.Scalar() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.call)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want *nd.Error", err)
			}
			if e.Kind != c.kind {
				t.Errorf("kind %v, want %v (%v)", e.Kind, c.kind, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestCatchPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the original panic", r)
		}
	}()
	_ = nd.Catch(func() { panic("boom") })
	t.Fatal("Catch swallowed a foreign panic")
}

func TestReleaseIsIdempotentAndKeepsViews(t *testing.T) {
	a := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4}, 2, 2)
	v := nd.Reshape(a, 4)
	a.Release()
	a.Release()
	var nilArr *nd.NDArray
	nilArr.Release()
	if got := v.Float32s(); got[3] != 4 {
		t.Fatalf("view lost its data after the source was released: %v", got)
	}
	if !a.Released() || v.Released() {
		t.Fatal("Released() reports the wrong arrays")
	}
}

// TestActivationNil: a nil input is an *nd.Error (ELU and SiLU indexed an
// empty list).
func TestActivationNil(t *testing.T) {
	for name, f := range map[string]func(){
		"ELU":  func() { nd.ELU(nil, 1) },
		"SiLU": func() { nd.SiLU(nil) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s(nil): %v", name, err)
		}
	}
}

package nd

import (
	"errors"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestHalfOpsKeepHalfOnTape: convolution, FullyConnected, pooling and
// dropout on half arrays record one node of their own whose inputs are
// the half arrays, not casts around a float32 op: the tape keeps half the
// bytes.
func TestHalfOpsKeepHalfOnTape(t *testing.T) {
	dev := ctx.CPU(0)
	Seed(12)
	x := RandomNormal(dev, Float32, 0, 1, 2, 3, 8, 8).AsType(Float16).Detach()
	w := RandomNormal(dev, Float32, 0, 1, 4, 3, 3, 3).AsType(Float16).Detach()
	m := RandomNormal(dev, Float32, 0, 1, 2, 5).AsType(Float16).Detach()
	v := RandomNormal(dev, Float32, 0, 1, 3, 5).AsType(Float16).Detach()
	for _, a := range []*NDArray{x, w, m, v} {
		a.AttachGrad(GradWrite)
	}
	exit := EnterRecording(true)
	defer exit()
	for name, y := range map[string]*NDArray{
		"Conv2D":         Conv2D(x, w, nil, ConvOpts{}),
		"FullyConnected": FullyConnected(m, v, nil),
		"MaxPool2D":      MaxPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{}),
		"AvgPool2D":      AvgPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{}),
		"Dropout":        Dropout(x, 0.5),
	} {
		n := y.state().node
		if y.dtype != Float16 || n == nil || n.op == "AsType" || n.inputs[0].dtype != Float16 {
			op, in := "none", DType(0)
			if n != nil {
				op, in = n.op, n.inputs[0].dtype
			}
			t.Errorf("%s: output %v recorded by %s on %v inputs; want its own node on float16 inputs", name, y.dtype, op, in)
		}
	}
}

// TestHalfFullyConnectedContexts: a half FullyConnected checks every
// operand's context, the bias's included.
func TestHalfFullyConnectedContexts(t *testing.T) {
	x := Ones(ctx.CPU(0), Float16, 2, 3)
	w := Ones(ctx.CPU(0), Float16, 4, 3)
	b := Ones(ctx.CPU(1), Float16, 4)
	err := Catch(func() { FullyConnected(x, w, b) })
	var ne *Error
	if !errors.As(err, &ne) || ne.Kind != ErrContext {
		t.Errorf("bias on another context: %v, want ErrContext", err)
	}
}

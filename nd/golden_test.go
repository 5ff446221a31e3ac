package nd_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/golden/make_goldens.py (PyTorch 1.13,
// float64). Each case holds inputs, parameters, the loss, extra outputs
// and the gradient of the loss with respect to every input and parameter.

type goldenTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type goldenCase struct {
	Name    string                  `json:"name"`
	Tensors map[string]goldenTensor `json:"tensors"`
	Loss    float64                 `json:"loss"`
	Grads   map[string]goldenTensor `json:"grads"`
	Outputs map[string]goldenTensor `json:"outputs"`
}

func loadGoldens(t *testing.T) map[string]goldenCase {
	t.Helper()
	m := map[string]goldenCase{}
	for _, c := range loadGoldenFile(t, "testdata/golden/goldens.json") {
		m[c.Name] = c
	}
	return m
}

// goldenTol: the computation is float64 on both sides; differences come
// only from summation order.
const goldenTol = 1e-10

func closeTo(t *testing.T, what string, got []float64, want goldenTensor) {
	t.Helper()
	if len(got) != len(want.Data) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want.Data))
	}
	for i := range got {
		// A NaN fails the comparison below as written, not by accident:
		// !(d <= tol) is true for NaN.
		if d := math.Abs(got[i] - want.Data[i]); !(d <= goldenTol*(1+math.Abs(want.Data[i]))) {
			t.Errorf("%s[%d] = %.15g, PyTorch %.15g", what, i, got[i], want.Data[i])
			return
		}
	}
}

// run evaluates build inside a recording scope with gradients attached to
// every tensor named in the case's grads, then compares loss, outputs and
// gradients with PyTorch.
func runGolden(t *testing.T, c goldenCase, build func(in map[string]*nd.NDArray, out map[string]*nd.NDArray) *nd.NDArray) {
	dev := ctx.CPU(0)
	in := map[string]*nd.NDArray{}
	for name, tt := range c.Tensors {
		in[name] = nd.FromSlice(dev, tt.Data, tt.Shape...)
	}
	for name := range c.Grads {
		in[name].AttachGrad(nd.GradWrite)
	}
	outs := map[string]*nd.NDArray{}
	var loss *nd.NDArray
	autograd.Record(func() {
		loss = build(in, outs)
		autograd.Backward(loss)
	})
	if got := loss.Scalar(); math.Abs(got-c.Loss) > goldenTol*(1+math.Abs(c.Loss)) {
		t.Errorf("loss = %.15g, PyTorch %.15g", got, c.Loss)
	}
	for name, want := range c.Outputs {
		o, ok := outs[name]
		if !ok {
			t.Errorf("output %q not produced", name)
			continue
		}
		closeTo(t, "output "+name, o.Float64s(), want)
	}
	for name, want := range c.Grads {
		closeTo(t, "grad "+name, in[name].Grad().Float64s(), want)
	}
}

func TestGoldenConvNet(t *testing.T) {
	c := loadGoldens(t)["convnet"]
	runGolden(t, c, func(in, out map[string]*nd.NDArray) *nd.NDArray {
		h := nd.Relu(nd.Conv2D(in["x"], in["w1"], in["b1"], nd.ConvOpts{Pad: [2]int{1, 1}}))
		h = nd.MaxPool2D(h, [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		h = nd.Conv2D(h, in["w2"], in["b2"], nd.ConvOpts{})
		h = nd.BatchNorm(h, in["g"], in["be"], in["rm"], in["rv"], nd.BatchNormOpts{Epsilon: new(1e-5), Momentum: new(0.9)})
		h = nd.AvgPool2D(nd.Tanh(h), [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		logits := nd.FullyConnected(nd.Flatten(h), in["w3"], in["b3"])
		out["logits"] = logits
		out["running_mean_after"] = in["rm"]
		out["running_var_after"] = in["rv"]
		picked := nd.Pick(nd.LogSoftmax(logits, 1), in["labels"], 1)
		return nd.Neg(nd.Mean(picked))
	})
}

func TestGoldenConvVariants(t *testing.T) {
	c := loadGoldens(t)["conv_variants"]
	runGolden(t, c, func(in, out map[string]*nd.NDArray) *nd.NDArray {
		h := nd.Sigmoid(nd.Conv2D(in["x"], in["w"], nil, nd.ConvOpts{
			Groups: 2, Stride: [2]int{2, 2}, Pad: [2]int{2, 2}, Dilate: [2]int{2, 2}}))
		h = nd.Pool2D(h, nd.PoolOpts{Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, ExcludePad: true}) // count_include_pad=False
		h = nd.MaxPool2D(h, [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1})
		out["out"] = h
		return nd.Sum(nd.Mul(h, in["r"]))
	})
}

func TestGoldenMLPOps(t *testing.T) {
	c := loadGoldens(t)["mlp_ops"]
	runGolden(t, c, func(in, _ map[string]*nd.NDArray) *nd.NDArray {
		a := nd.Softrelu(nd.FullyConnected(in["x"], in["w1"], in["b1"]))
		u := nd.Add(nd.Mul(a, in["s"]), in["c"])
		p := nd.Softmax(nd.FullyConnected(u, in["w2"], in["b2"]), 1)
		q := nd.Log(nd.AddScalar(p, 0.1))
		loss := nd.Neg(nd.Mean(nd.Pick(q, in["labels"], 1)))
		loss = nd.Add(loss, nd.MulScalar(nd.Sum(nd.Square(in["w1"])), 0.01))
		loss = nd.Add(loss, nd.Mean(nd.Abs(in["w2"])))
		loss = nd.Add(loss, nd.MulScalar(nd.Sum(nd.Sqrt(nd.Exp(in["b1"]))), 0.1))
		return nd.Add(loss, nd.Max(in["b2"]))
	})
}

func TestGoldenBatchedMatMul(t *testing.T) {
	c := loadGoldens(t)["batched_matmul"]
	runGolden(t, c, func(in, out map[string]*nd.NDArray) *nd.NDArray {
		y := nd.MatMul(in["a"], in["b"])
		out["y"] = y
		return nd.Sum(nd.Mul(y, in["r"]))
	})
}

// loadGoldenFile reads the cases of one golden JSON file, in file order.
func loadGoldenFile(t *testing.T, path string) []goldenCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

package onnx_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// relErr is max|got−want| / max|want|.
func relErr(got, want []float32) float64 {
	var d, s float64
	for i := range want {
		d = max(d, math.Abs(float64(got[i]-want[i])))
		s = max(s, math.Abs(float64(want[i])))
	}
	return d / s
}

// TestTorchGradients: torch.onnx's exports of testdata/make_onnx.py's
// Layers (reflection and replication padding, InstanceNorm2d, PReLU,
// Hardswish, Hardsigmoid, LogSoftmax, cumsum) and Recurrent (a two-layer
// bidirectional LSTM, a batch-first GRU, an RNN) and Indexing (slice
// assignment, gather, scatter: ScatterND, GatherElements,
// ScatterElements) give torch's output, and
// the gradients of the output's sum with respect to imported weights equal
// torch's: the imported ops are differentiable, so the models fine-tune.
func TestTorchGradients(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params []string
	}{
		{"layers", []string{"act.weight", "norm.weight", "conv1.weight"}},
		{"recurrent", []string{"lstm.weight_ih_l0", "lstm.weight_hh_l0_reverse"}},
		{"indexing", []string{"fc.weight"}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkTorchGradients(t, tc.name, tc.params) })
	}
}

func checkTorchGradients(t *testing.T, name string, names []string) {
	m, err := onnx.Load(filepath.Join("testdata", name+".onnx"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(filepath.Join("testdata", name+"_io.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	vals := func(name string) []float32 {
		v, err := f.Tensors[name].Float32s()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	x := nd.FromSlice(ctx.CPU(0), vals("input"), f.Tensors["input"].Shape...)
	var y *nd.NDArray
	err = nd.Catch(func() {
		autograd.Record(func() {
			y = m.Forward(x)
			autograd.Backward(nd.Sum(y))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(y.Float32s(), vals("output")); e > 1e-5 {
		t.Errorf("output: relative error %.3g", e)
	}
	params := gluon.CollectParams(m)
	for _, name := range names {
		var p *gluon.Parameter
		for _, q := range params.List() {
			if strings.HasSuffix(q.Name(), name) {
				p = q
			}
		}
		if p == nil {
			t.Fatalf("no parameter %s among %v", name, params.Names())
		}
		if e := relErr(p.Grad(ctx.CPU(0)).Float32s(), vals("grad."+name)); e > 1e-4 {
			t.Errorf("gradient of %s: relative error %.3g", name, e)
		}
	}
}

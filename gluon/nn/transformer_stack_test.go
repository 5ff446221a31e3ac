package nn_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestTransformerStacks: PyTorch's parameter names, hybridized calls
// equal to eager ones bit for bit (with masks), and misuse errors. The
// values are checked against PyTorch in TestAttentionGoldens.
func TestTransformerStacks(t *testing.T) {
	m := nn.NewTransformer(8, 2, 2, 1, nn.TransformerOpts{FeedForward: 16, Layout: "NTC"})
	names := gluon.CollectParams(m).Names()
	for _, want := range []string{"encoder.layers.0.self_attn.in_proj_weight", "encoder.layers.1.linear2.bias",
		"encoder.norm.gamma", "decoder.layers.0.multihead_attn.out_proj.weight", "decoder.norm.beta"} {
		if !slices.Contains(names, want) {
			t.Errorf("no parameter %s in %v", want, names)
		}
	}
	if err := gluon.Initialize(m, initializer.Xavier{}, cpu0); err != nil {
		t.Fatal(err)
	}
	src, tgt := ndtest.Rand(cpu0, 1, -1, 1, 2, 6, 8).AsType(nd.Float32), ndtest.Rand(cpu0, 2, -1, 1, 2, 4, 8).AsType(nd.Float32)
	pad := nd.FromSlice(cpu0, []bool{false, false, false, false, false, true, false, false, false, false, true, true}, 2, 6)
	causal := nn.CausalMask(tgt, 4, 4)
	in := []*nd.NDArray{src, tgt, nil, causal, nil, pad, nil, pad}
	var want []float64
	autograd.PredictMode(func() { want = gluon.Call(m, in...)[0].Float64s() })
	h := gluon.Hybridize(m, gluon.HybridOpts{})
	for range 2 {
		var got []float64
		autograd.PredictMode(func() { got = gluon.Call(h, in...)[0].Float64s() })
		if !slices.Equal(got, want) {
			t.Fatal("hybridized transformer differs from eager")
		}
	}
	// Checkpointed layers give the same gradients.
	grads := func() []float64 {
		p := gluon.CollectParams(m).Get("decoder.layers.0.linear1.weight")
		p.ZeroGrad()
		var l *nd.NDArray
		autograd.Record(func() { l = nd.Sum(gluon.Call(m, in...)[0]) })
		autograd.Backward(l)
		return p.Grad(cpu0).Float64s()
	}
	plain := grads()
	m.Encoder.Checkpoint, m.Decoder.Checkpoint = true, true
	if !slices.Equal(grads(), plain) {
		t.Error("checkpointed layers' gradients differ")
	}
	for name, f := range map[string]func(){
		"no layers":      func() { nn.NewTransformerEncoder(0, 8, 2, nn.TransformerOpts{}, false) },
		"no memory":      func() { nn.NewTransformerDecoder(1, 8, 2, nn.TransformerOpts{}, false).ForwardMulti(tgt) },
		"no tgt":         func() { m.ForwardMulti(src) },
		"too many masks": func() { m.ForwardMulti(src, tgt, nil, nil, nil, nil, nil, nil, nil) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

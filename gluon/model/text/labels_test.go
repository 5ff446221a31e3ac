package text_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// TestLossLabelRange: a label outside [0, V) that is not −100 (−1, V,
// −101, a huge one) is an ErrArgument naming the loss, the label's
// position and its value, for LMLoss and BERT's classifier and masked-LM
// losses, as torch's cross_entropy raises IndexError; it is never
// trained as a clipped class. LMLoss never predicts labels[:, 0], so a
// bad one there passes (as in torch).
func TestLossLabelRange(t *testing.T) {
	dev := ctx.CPU(0)
	cfg := text.BertConfig{VocabSize: 20, HiddenSize: 8, NumHiddenLayers: 1, NumAttentionHeads: 2, NumLabels: 3}
	cls, mlm := text.NewBertForSequenceClassification(cfg), text.NewBertForMaskedLM(cfg)
	lm := func(labels ...int64) func() *nd.NDArray {
		return func() *nd.NDArray {
			return text.LMLoss(nd.Zeros(dev, nd.Float32, 2, 3, 7), nd.FromSlice(dev, labels, 2, 3))
		}
	}
	for _, tc := range []struct {
		name string
		loss func() *nd.NDArray
		want string // "" for no error
	}{
		{"LMLoss -1", lm(0, 1, 2, 3, -100, -1), "text.LMLoss: invalid argument: label -1 at [1 2] outside [0, 7)"},
		{"LMLoss V", lm(0, 7, 2, 3, 4, 5), "text.LMLoss: invalid argument: label 7 at [0 1] outside [0, 7)"},
		{"LMLoss -101", lm(0, 1, -101, 3, 4, 5), "text.LMLoss: invalid argument: label -101 at [0 2] outside [0, 7)"},
		{"LMLoss huge", lm(0, 1, 2, 3, 1<<40, 5), "text.LMLoss: invalid argument: label 1099511627776 at [1 1] outside [0, 7)"},
		{"LMLoss first position", lm(-5, 6, -100, 99, 0, 3), ""},
		{"classifier 3 of 3", func() *nd.NDArray {
			return cls.Loss(nd.Zeros(dev, nd.Float32, 2, 3), nd.FromSlice(dev, []int64{2, 3}, 2))
		}, "text.BertForSequenceClassification.Loss: invalid argument: label 3 at [1] outside [0, 3)"},
		{"classifier -100", func() *nd.NDArray {
			return cls.Loss(nd.Zeros(dev, nd.Float32, 2, 3), nd.FromSlice(dev, []int64{-100, 0}, 2))
		}, ""},
		{"masked LM int32 -2", func() *nd.NDArray {
			return mlm.Loss(nd.Zeros(dev, nd.Float32, 1, 2, 20), nd.FromSlice(dev, []int32{-100, -2}, 1, 2))
		}, "text.BertForMaskedLM.Loss: invalid argument: label -2 at [0 1] outside [0, 20)"},
		{"masked LM 20", func() *nd.NDArray {
			return mlm.Loss(nd.Zeros(dev, nd.Float32, 1, 2, 20), nd.FromSlice(dev, []int64{20, 19}, 1, 2))
		}, "text.BertForMaskedLM.Loss: invalid argument: label 20 at [0 0] outside [0, 20)"},
	} {
		var v float64
		err := nd.Catch(func() { v = tc.loss().Float64s()[0] })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: loss %v, error %v; want an argument error containing %q", tc.name, v, err, tc.want)
		}
	}
}

// lmLossBlock computes a GPT-2's LMLoss of (ids, labels), so that the
// loss is traced too when the block is hybridized.
type lmLossBlock struct {
	gluon.BlockMeta
	m *text.GPT2
}

func (b *lmLossBlock) ForwardMulti(in ...*nd.NDArray) []*nd.NDArray {
	return []*nd.NDArray{text.LMLoss(b.m.Forward(in[0]), in[1])}
}

// TestLossLabelRangeHybrid: inside a gluon.Hybridize trace, which cannot
// read the labels on the host, a bad label makes LMLoss and the gradients
// NaN, on the first call (the trace) and on a replay; good labels give
// the eager loss and gradients bit for bit.
func TestLossLabelRangeHybrid(t *testing.T) {
	dev := ctx.CPU(0)
	m := loadTiny(t, tinyConfig())
	net := &lmLossBlock{BlockMeta: gluon.NewBlockMeta("lmloss"), m: m}
	net.AddChild(m)
	wte := gluon.CollectParams(m).Get("transformer.wte.weight")
	ids := nd.FromSlice(dev, []int64{11, 42, 7, 3, 90, 5, 1, 2}, 2, 4)
	good := nd.FromSlice(dev, []int64{11, 42, -100, 3, 90, 5, 1, 2}, 2, 4)
	bad := nd.FromSlice(dev, []int64{11, 42, 7, 3, 90, -1, 1, 2}, 2, 4)
	run := func(c gluon.Component, labels *nd.NDArray) (float64, []float64) {
		var l float64
		autograd.Record(func() {
			y := gluon.Call(c, ids, labels)[0]
			autograd.Backward(y)
			l = y.Float64s()[0]
		})
		return l, wte.Grad(dev).Float64s()
	}
	wantLoss, wantGrad := run(net, good)
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	for i, labels := range []*nd.NDArray{good, bad, good, bad} {
		l, g := run(h, labels)
		if labels == good {
			if l != wantLoss || !equalBits(g, wantGrad) {
				t.Errorf("call %d, good labels: loss %v (eager %v), gradients equal %v", i, l, wantLoss, equalBits(g, wantGrad))
			}
			continue
		}
		if !math.IsNaN(l) || !hasNaN(g) {
			t.Errorf("call %d, label -1: loss %v, a NaN gradient %v; want NaN for both", i, l, hasNaN(g))
		}
	}
	if st := h.Stats(); st.Traces == 0 || st.Replays == 0 {
		t.Errorf("stats %+v: the loss was not traced and replayed", st)
	}
	// A bad label on the very first call, the one that traces.
	h2 := gluon.Hybridize(net, gluon.HybridOpts{})
	if l, g := run(h2, bad); !math.IsNaN(l) || !hasNaN(g) {
		t.Errorf("traced with label -1: loss %v, a NaN gradient %v", l, hasNaN(g))
	}
}

func equalBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func hasNaN(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) {
			return true
		}
	}
	return false
}

package text_test

import (
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// bertTrainRun initialises a tiny BERT classifier (seeded) on devs and
// runs steps Adam steps on one batch of 6 padded sequences whose label is
// their first word's class, split over devs with SplitAndLoad (ids, token
// types, masks and labels alike); each context's loss is its share of the
// batch mean. It returns the losses and the parameters at the end.
func bertTrainRun(t *testing.T, cfg text.BertConfig, devs []ctx.Context, steps int) ([]float64, map[string][]float32) {
	t.Helper()
	nd.Seed(5)
	m := text.NewBertForSequenceClassification(cfg)
	params := gluon.CollectParams(m)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	const n, seq = 6, 8
	ids, types, mask, labels := make([]int64, n*seq), make([]int64, n*seq), make([]int64, n*seq), make([]int64, n)
	for r := range n {
		labels[r] = int64(r % cfg.NumLabels)
		for c := range seq {
			i := r*seq + c
			switch {
			case c == 0:
				ids[i] = 2 // [CLS]
			case c >= seq-r%3: // padding
				continue
			default:
				ids[i] = int64(3 + (r*5+c*3)%(cfg.VocabSize-3))
				if c == 1 {
					ids[i] = int64(10 + r%cfg.NumLabels) // the label's word
				}
			}
			mask[i] = 1
			if c > seq/2 {
				types[i] = 1
			}
		}
	}
	batch := []*nd.NDArray{nd.FromSlice(ctx.CPU(0), ids, n, seq), nd.FromSlice(ctx.CPU(0), types, n, seq),
		nd.FromSlice(ctx.CPU(0), mask, n, seq), nd.FromSlice(ctx.CPU(0), labels, n)}
	return adamSteps(t, params, devs, steps, batch, func(p []*nd.NDArray) *nd.NDArray {
		return m.Loss(m.Logits(p[0], p[1], p[2]), p[3])
	})
}

// TestBertTraining: Adam steps on one batch lower the classifier's loss,
// on one context and data-parallel on cpu(0) and cpu(1), with the
// dropouts on; without dropout the two-context run ends with the
// one-context run's parameters (float32 rounding apart, which Adam's
// first steps magnify).
func TestBertTraining(t *testing.T) {
	one := []ctx.Context{ctx.CPU(0)}
	two := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	cfg := text.BertConfig{VocabSize: 40, HiddenSize: 32, NumHiddenLayers: 2, NumAttentionHeads: 4,
		MaxPositionEmbeddings: 16, NumLabels: 3, HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1}
	for _, tc := range []struct {
		name string
		devs []ctx.Context
	}{{"cpu0", one}, {"cpu0+cpu1", two}} {
		t.Run(tc.name, func(t *testing.T) {
			losses, _ := bertTrainRun(t, cfg, tc.devs, 30)
			first, last := losses[0], losses[len(losses)-1]
			t.Logf("loss %.4f → %.4f", first, last)
			if !(last < 0.5*first) {
				t.Errorf("the loss went from %.4f to %.4f: %.4f", first, last, losses)
			}
		})
	}
	t.Run("one context ≡ two", func(t *testing.T) {
		cfg := cfg
		cfg.HiddenDropoutProb, cfg.AttentionProbsDropoutProb = 0, 0
		l1, p1 := bertTrainRun(t, cfg, one, 3)
		l2, p2 := bertTrainRun(t, cfg, two, 3)
		if r := numcmp.RelL2(l2, l1); r > 1e-5 {
			t.Errorf("losses %v on one context, %v on two", l1, l2)
		}
		for name, w := range p1 {
			if strings.HasSuffix(name, ".key.bias") {
				// Its gradient is zero but for rounding (a constant added to
				// every score of a query): Adam's steps on it are noise.
				continue
			}
			if r := numcmp.RelL2(p2[name], w); r > 5e-5 {
				t.Errorf("%s: relative L2 difference %.3g between one context and two", name, r)
			}
		}
	})
}

// TestBertMLMTraining: Adam steps lower the masked LM's loss on a batch
// whose masked positions are predictable from their neighbours.
func TestBertMLMTraining(t *testing.T) {
	nd.Seed(3)
	dev := ctx.CPU(0)
	cfg := text.BertConfig{VocabSize: 30, HiddenSize: 32, NumHiddenLayers: 1, NumAttentionHeads: 4, MaxPositionEmbeddings: 16}
	m := text.NewBertForMaskedLM(cfg)
	params := gluon.CollectParams(m)
	if err := params.Initialize(nil, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewAdam(5e-3), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	const maskID = 4
	ids := [][]int64{{2, 10, 11, maskID, 13, 3}, {2, 20, maskID, 22, 23, 3}, {2, maskID, 16, 17, 18, 3}}
	labels := [][]int64{{-100, -100, -100, 12, -100, -100}, {-100, -100, 21, -100, -100, -100}, {-100, 15, -100, -100, -100, -100}}
	x, y := idsArray(dev, ids), idsArray(dev, labels)
	var losses []float64
	for range 25 {
		autograd.Record(func() {
			l := m.Loss(m.Forward(x), y)
			autograd.Backward(l)
			losses = append(losses, l.Float64s()[0])
		})
		if err := tr.Step(1); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("loss %.4f → %.4f", losses[0], losses[len(losses)-1])
	if !(losses[len(losses)-1] < 0.3*losses[0]) {
		t.Errorf("losses %.4f", losses)
	}
}

// TestBertHybridize: the hybridized classifier (gluon.Hybridize, a
// MultiBlock with an optional input left out) computes the eager model's
// logits and gradients.
func TestBertHybridize(t *testing.T) {
	dev := ctx.CPU(0)
	m := tinyClassifier(t)
	h := gluon.Hybridize(m, gluon.HybridOpts{})
	ids, types, mask := bertBatch(dev, 3, 9)
	for _, in := range [][]*nd.NDArray{{ids, types, mask}, {ids, nil, mask}, {ids}} {
		for range 2 { // the trace, then its replay
			var eager, hybrid []float32
			autograd.PredictMode(func() {
				eager, hybrid = gluon.Call(m, in...)[0].Float32s(), h.ForwardMulti(in...)[0].Float32s()
			})
			if r := numcmp.RelL2(hybrid, eager); r > 1e-6 {
				t.Errorf("%d inputs: hybridized logits: relative L2 difference %.3g", len(in), r)
			}
		}
	}
	params := gluon.CollectParams(m)
	labels := nd.FromSlice(dev, []int64{0, 2, 1}, 3)
	grads := func(net gluon.Component) []float32 {
		params.ZeroGrad()
		autograd.Record(func() { autograd.Backward(m.Loss(gluon.Call(net, ids, types, mask)[0], labels)) })
		return params.Get("bert.encoder.layer.0.attention.self.key.weight").Grad(dev).Float32s()
	}
	want := grads(m)
	for range 2 {
		if r := numcmp.RelL2(grads(h), want); r > 1e-5 {
			t.Errorf("hybridized gradient: relative L2 difference %.3g", r)
		}
	}
	if s := h.Stats(); s.Traces == 0 || s.Replays == 0 {
		t.Errorf("stats %+v: want traces and replays", s)
	}
}

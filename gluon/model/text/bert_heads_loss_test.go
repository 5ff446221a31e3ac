package text_test

import (
	"errors"
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// TestBertHeadsLosses: the heads' losses are transformers' on small
// hand-checked cases: the token classifier's cross-entropy skips −100;
// question answering clamps the positions to [0, T] and ignores T, each
// of the start and end losses averaged over its own positions; the
// pre-training loss is the masked-LM loss plus the next-sentence loss;
// the multiple-choice loss is the cross-entropy over the choices. None
// left gives NaN.
func TestBertHeadsLosses(t *testing.T) {
	dev := ctx.CPU(0)
	cfg := tinyBert()
	// logp returns the log-softmax of x's rows [n, k] as a function.
	logp := func(x *nd.NDArray) func(row, class int) float64 {
		k := x.Shape()[len(x.Shape())-1]
		lp := nd.LogSoftmax(x, -1).Float64s()
		return func(row, class int) float64 { return lp[row*k+class] }
	}
	tok := text.NewBertForTokenClassification(cfg)
	tl := nd.RandomNormal(dev, nd.Float64, 0, 1, 2, 3, 3)
	qa := text.NewBertForQuestionAnswering(cfg)
	start, end := nd.RandomNormal(dev, nd.Float64, 0, 2, 2, 5), nd.RandomNormal(dev, nd.Float64, 0, 2, 2, 5)
	pre := text.NewBertForPreTraining(cfg)
	pred, rel := nd.RandomNormal(dev, nd.Float64, 0, 1, 1, 2, 112), nd.RandomNormal(dev, nd.Float64, 0, 1, 1, 2)
	nsp := text.NewBertForNextSentencePrediction(cfg)
	mc := text.NewBertForMultipleChoice(cfg)
	ml := nd.RandomNormal(dev, nd.Float64, 0, 1, 2, 4)
	lt, ls, le, lp, lr, lm := logp(tl), logp(start), logp(end), logp(pred), logp(rel), logp(ml)
	i64 := func(v []int64, shape ...int) *nd.NDArray { return nd.FromSlice(dev, v, shape...) }
	for _, tc := range []struct {
		name string
		got  func() *nd.NDArray
		want float64 // NaN: NaN
	}{
		{"token classification", func() *nd.NDArray { return tok.Loss(tl, i64([]int64{2, -100, 0, -100, 1, -100}, 2, 3)) },
			-(lt(0, 2) + lt(2, 0) + lt(4, 1)) / 3},
		{"token classification, all ignored", func() *nd.NDArray { return tok.Loss(tl, i64([]int64{-100, -100, -100, -100, -100, -100}, 2, 3)) },
			math.NaN()},
		{"question answering", func() *nd.NDArray { return qa.Loss(start, end, i64([]int64{1, 4}, 2), i64([]int64{3, 0}, 2)) },
			-(ls(0, 1)+ls(1, 4))/4 - (le(0, 3)+le(1, 0))/4},
		{"question answering, clamped", func() *nd.NDArray { return qa.Loss(start, end, i64([]int64{-7, 5}, 2), i64([]int64{9, 2}, 2)) },
			(-ls(0, 0) - le(1, 2)) / 2}, // −7 → 0; 5 and 9 → T = 5, ignored
		{"question answering, start all ignored", func() *nd.NDArray { return qa.Loss(start, end, i64([]int64{5, 6}, 2), i64([]int64{1, 2}, 2)) },
			math.NaN()},
		{"pre-training", func() *nd.NDArray { return pre.Loss(pred, rel, i64([]int64{-100, 7}, 1, 2), i64([]int64{1}, 1)) },
			-lp(1, 7) - lr(0, 1)},
		{"next sentence", func() *nd.NDArray { return nsp.Loss(rel, i64([]int64{0}, 1)) }, -lr(0, 0)},
		{"multiple choice", func() *nd.NDArray { return mc.Loss(ml, i64([]int64{3, -100}, 2)) }, -lm(0, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.got().Float64s()[0]
			if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("loss %.15g, want %.15g", got, tc.want)
			}
		})
	}
}

// TestBertHeadsErrors: inputs and labels that do not fit panic with the
// kind of error they are, naming the model's operation.
func TestBertHeadsErrors(t *testing.T) {
	dev := ctx.CPU(0)
	cfg := tinyBert()
	tok := text.NewBertForTokenClassification(cfg)
	qa := text.NewBertForQuestionAnswering(cfg)
	pre := text.NewBertForPreTraining(cfg)
	nsp := text.NewBertForNextSentencePrediction(cfg)
	mc := text.NewBertForMultipleChoice(cfg)
	f64 := func(shape ...int) *nd.NDArray { return nd.Zeros(dev, nd.Float64, shape...) }
	i64 := func(shape ...int) *nd.NDArray { return nd.Zeros(dev, nd.Int64, shape...) }
	for _, tc := range []struct {
		name string
		run  func()
		kind nd.ErrorKind
		op   string
	}{
		{"token labels shape", func() { tok.Loss(f64(2, 3, 3), i64(2, 4)) }, nd.ErrShape, "BertForTokenClassification.Loss"},
		{"token logits width", func() { tok.Loss(f64(2, 3, 2), i64(2, 3)) }, nd.ErrShape, "BertForTokenClassification.Loss"},
		{"token float labels", func() { tok.Loss(f64(2, 3, 3), f64(2, 3)) }, nd.ErrShape, "BertForTokenClassification.Loss"},
		{"token label range", func() { tok.Loss(f64(1, 2, 3), nd.FromSlice(dev, []int64{0, 3}, 1, 2)) }, nd.ErrArgument, "BertForTokenClassification.Loss"},
		{"token float ids", func() { tok.Forward(f64(1, 4)) }, nd.ErrShape, "BertForTokenClassification.Logits"},
		{"qa positions shape", func() { qa.Loss(f64(2, 5), f64(2, 5), i64(3), i64(2)) }, nd.ErrShape, "BertForQuestionAnswering.Loss"},
		{"qa logits shapes", func() { qa.Loss(f64(2, 5), f64(2, 4), i64(2), i64(2)) }, nd.ErrShape, "BertForQuestionAnswering.Loss"},
		{"qa float positions", func() { qa.Loss(f64(2, 5), f64(2, 5), f64(2), i64(2)) }, nd.ErrShape, "BertForQuestionAnswering.Loss"},
		{"qa mask shape", func() { qa.Logits(i64(2, 4), nil, i64(2, 3)) }, nd.ErrShape, "BertForQuestionAnswering.Logits"},
		{"pre-training vocabulary", func() { pre.Loss(f64(1, 2, 111), f64(1, 2), i64(1, 2), i64(1)) }, nd.ErrShape, "BertForPreTraining.Loss"},
		{"pre-training batch", func() { pre.Loss(f64(1, 2, 112), f64(2, 2), i64(1, 2), i64(2)) }, nd.ErrShape, "BertForPreTraining.Loss"},
		{"pre-training label range", func() {
			pre.Loss(f64(1, 2, 112), f64(1, 2), i64(1, 2), nd.FromSlice(dev, []int64{2}, 1))
		}, nd.ErrArgument, "BertForPreTraining.Loss"},
		{"next sentence classes", func() { nsp.Loss(f64(2, 3), i64(2)) }, nd.ErrShape, "BertForNextSentencePrediction.Loss"},
		{"next sentence long input", func() { nsp.Forward(i64(1, 17)) }, nd.ErrShape, "BertForNextSentencePrediction.Logits"},
		{"choice ids rank", func() { mc.Forward(i64(2, 4)) }, nd.ErrShape, "BertForMultipleChoice.Logits"},
		{"choice mask shape", func() { mc.Logits(i64(2, 3, 4), nil, i64(2, 2, 4)) }, nd.ErrShape, "BertForMultipleChoice.Logits"},
		{"choice types rank", func() { mc.Logits(i64(2, 3, 4), i64(6, 4), nil) }, nd.ErrShape, "BertForMultipleChoice.Logits"},
		{"choice labels", func() { mc.Loss(f64(2, 3), i64(3)) }, nd.ErrShape, "BertForMultipleChoice.Loss"},
		{"choice label range", func() { mc.Loss(f64(1, 3), nd.FromSlice(dev, []int64{3}, 1)) }, nd.ErrArgument, "BertForMultipleChoice.Loss"},
		{"no inputs", func() { mc.ForwardMulti() }, nd.ErrArgument, "BertForMultipleChoice.ForwardMulti"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := nd.Catch(tc.run)
			var e *nd.Error
			if !errors.As(err, &e) || e.Kind != tc.kind || e.Op != "text."+tc.op {
				t.Errorf("%v, want an error of kind %v from text.%s", err, tc.kind, tc.op)
			}
		})
	}
}

// TestLossAllIgnored: a batch whose every label is ignored gives a NaN
// loss with zero gradients, as PyTorch's nll_loss does, so that one such
// shard cannot turn a data-parallel step's parameters into NaN.
func TestLossAllIgnored(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(1)
	m := text.NewBertForTokenClassification(tinyBert())
	loadBert(t, m, bertFixture, true)
	ids, tt, mask := bertBatch(dev, 2, 5)
	labels := nd.Full(dev, nd.Int64, -100, 2, 5)
	var l *nd.NDArray
	autograd.Record(func() {
		l = m.Loss(m.Logits(ids, tt, mask), labels)
		autograd.Backward(l)
	})
	if !math.IsNaN(l.Float64s()[0]) {
		t.Errorf("loss %v with every label ignored, want NaN", l.Float64s()[0])
	}
	for _, v := range gluon.CollectParams(m).Get("classifier.weight").Grad(dev).Float64s() {
		if v != 0 {
			t.Fatalf("classifier.weight's gradient holds %v; want 0 everywhere, as PyTorch's", v)
		}
	}
}

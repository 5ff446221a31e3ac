package metric_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

func TestPerplexity(t *testing.T) {
	probs := []float64{0.5, 0.25, 0.25, 0.1, 0.8, 0.1, 0.2, 0.2, 0.6}
	labels := []int64{0, 1, 2}
	// exp(−(log 0.5 + log 0.8 + log 0.6)/3)
	want := math.Exp(-(math.Log(0.5) + math.Log(0.8) + math.Log(0.6)) / 3)
	m := metric.NewPerplexity()
	// Two devices, the second holding the last token as a [1, 1, 3] sequence.
	m.Update([]*nd.NDArray{nd.FromSlice(ctx.CPU(0), labels[:2]), nd.FromSlice(ctx.CPU(1), labels[2:], 1, 1)},
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), probs[:6], 2, 3), nd.FromSlice(ctx.CPU(1), probs[6:], 1, 1, 3)})
	if name, got := m.Get(); name != "perplexity" || math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %v, want %v", name, got, want)
	}

	// Logits give the same value as their softmax; an ignored label is skipped.
	logits := make([]float64, len(probs))
	for i, p := range probs {
		logits[i] = math.Log(p) + 3 // rows sum to 1, so softmax(log p + 3) = p
	}
	l := &metric.Perplexity{Logits: true, UseIgnore: true, IgnoreLabel: -1}
	l.Update([]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []int64{0, -1, 1, 2})},
		[]*nd.NDArray{nd.FromSlice(ctx.CPU(0), append(append(logits[:3:3], 9, 9, 9), logits[3:]...), 4, 3)})
	if _, got := l.Get(); math.Abs(got-want) > 1e-12 {
		t.Errorf("logits with an ignored token: %v, want %v", got, want)
	}
	// A zero probability counts as 1e-10, as in MXNet: perplexity 1e10.
	z := metric.NewPerplexity()
	z.Update([]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []int64{1})}, []*nd.NDArray{nd.FromSlice(ctx.CPU(0), []float64{1, 0}, 1, 2)})
	if _, got := z.Get(); math.Abs(got/1e10-1) > 1e-9 {
		t.Errorf("a zero probability: %v, want 1e10", got)
	}
	l.Reset()
	if _, got := l.Get(); !math.IsNaN(got) {
		t.Errorf("after Reset: %v, want NaN", got)
	}
	if err := nd.Catch(func() {
		metric.NewPerplexity().Update([]*nd.NDArray{nd.FromSlice(ctx.CPU(0), []int64{3})}, []*nd.NDArray{nd.FromSlice(ctx.CPU(0), probs[:3], 1, 3)})
	}); err == nil {
		t.Error("a label outside [0, C) was accepted")
	}
}

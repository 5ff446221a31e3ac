package text_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// BenchmarkGenerate measures cached generation (a 32-token prompt, 32
// new tokens) on a GPT-2 of a quarter of GPT-2 small's width and depth.
func BenchmarkGenerate(b *testing.B) {
	nd.Seed(1)
	cfg := text.GPT2Small()
	cfg.NEmbd, cfg.NLayer, cfg.NHead = 192, 3, 3
	m := text.NewGPT2(cfg)
	if err := gluon.CollectParams(m).Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		b.Fatal(err)
	}
	prompt := make([]int64, 32)
	for i := range prompt {
		prompt[i] = int64(i * 997 % cfg.VocabSize)
	}
	const n = 32
	for b.Loop() {
		if _, err := m.Generate(prompt, n, text.GenerateOpts{TopK: 40}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

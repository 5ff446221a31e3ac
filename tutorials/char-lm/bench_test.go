package main

import (
	"os"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/optimizer"
)

// BenchmarkStep times one training step of the tutorial's models at their
// default sizes (batch 12 × 64 bytes over two CPU contexts, vocabulary
// 117), data drawn from a synthetic token stream. CHARLM_BENCH_CONTEXTS
// names other contexts (gpu:0 in a binary built with -tags cuda); the step
// ends with reading the loss, so GPU work is waited for.
func BenchmarkStep(b *testing.B) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	if s := os.Getenv("CHARLM_BENCH_CONTEXTS"); s != "" {
		var err error
		if devs, err = ctx.Parse(s); err != nil {
			b.Fatal(err)
		}
		if err := ctx.Check(devs...); err != nil {
			b.Skip(err)
		}
	}
	for _, model := range []string{"gpt", "lstm"} {
		b.Run(model, func(b *testing.B) {
			o := modelOpts{Vocab: 117, Context: 64, Layers: map[string]int{"gpt": 4, "lstm": 2}[model], Heads: 4, Embed: 128, Hidden: 256}
			net, err := newModel(model, o)
			if err != nil {
				b.Fatal(err)
			}
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
				b.Fatal(err)
			}
			tr, err := gluon.NewTrainer(params, optimizer.NewAdamW(1e-3, 0.1), "device", gluon.TrainerOpts{})
			if err != nil {
				b.Fatal(err)
			}
			m := &lm{net: net, params: params, trainer: tr, devs: devs, lossFn: loss.NewSoftmaxCrossEntropy(), context: 64, clip: 1}
			data := make([]int64, 100_000)
			for i := range data {
				data[i] = int64(i*7919) % 117
			}
			rng := splitmix64(1)
			b.SetBytes(12 * 64) // "bytes" are tokens: MB/s reads as millions of tokens per second
			for b.Loop() {
				x, y := batch(&rng, data, 12, 64)
				if _, _, err := m.step(x, y, 12); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

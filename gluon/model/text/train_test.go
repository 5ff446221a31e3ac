package text_test

import (
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

// trainRun initialises a tiny GPT-2 (seeded) on devs and runs steps Adam
// steps on one batch of 4 sequences, split over devs with SplitAndLoad;
// each context's loss is its share of the batch mean. It returns the
// losses and the parameters at the end.
func trainRun(t *testing.T, cfg text.GPT2Config, devs []ctx.Context, steps int) ([]float64, map[string][]float32) {
	t.Helper()
	nd.Seed(11)
	m := text.NewGPT2(cfg)
	params := gluon.CollectParams(m)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	const n, seq = 4, 12
	ids := make([]int64, n*seq)
	for i := range ids { // four repeating patterns: learnable
		row, col := i/seq, i%seq
		ids[i] = int64((row*7 + col*(row+1)) % cfg.VocabSize)
	}
	batch := nd.FromSlice(ctx.CPU(0), ids, n, seq)
	return adamSteps(t, params, devs, steps, []*nd.NDArray{batch}, func(p []*nd.NDArray) *nd.NDArray {
		return text.LMLoss(m.Forward(p[0]), p[0])
	})
}

// adamSteps runs steps Adam steps (learning rate 3e-3) of params on devs
// over one batch, its arrays split over devs with SplitAndLoad; loss
// gives a context's mean loss from its parts, weighted by its share of
// the batch. It returns the summed loss of each step and the parameters
// at the end.
func adamSteps(t *testing.T, params *gluon.ParamDict, devs []ctx.Context, steps int, batch []*nd.NDArray, loss func(parts []*nd.NDArray) *nd.NDArray) ([]float64, map[string][]float32) {
	t.Helper()
	tr, err := gluon.NewTrainer(params, optimizer.NewAdam(3e-3), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	n := float64(batch[0].Shape()[0])
	var losses []float64
	for range steps {
		split := make([][]*nd.NDArray, len(batch))
		for j, a := range batch {
			if split[j], err = gluon.SplitAndLoad(a, devs, true); err != nil {
				t.Fatal(err)
			}
		}
		shares := make([]float64, len(devs))
		autograd.Record(func() {
			err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				return nd.Catch(func() {
					parts := make([]*nd.NDArray, len(batch))
					for j := range batch {
						parts[j] = split[j][i]
					}
					l := nd.MulScalar(loss(parts), float64(parts[0].Shape()[0])/n)
					autograd.Backward(l)
					shares[i] = l.Float64s()[0]
				})
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(1); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, s := range shares {
			sum += s
		}
		losses = append(losses, sum)
	}
	final := map[string][]float32{}
	for _, name := range params.Names() {
		final[name] = params.Get(name).Data(devs[0]).Float32s()
	}
	return losses, final
}

// TestTraining: Adam steps on one batch lower the loss, on one context
// and data-parallel on cpu(0) and cpu(1), with the dropouts on; without
// dropout the two-context run ends with the one-context run's parameters
// (float32 rounding apart).
func TestTraining(t *testing.T) {
	one := []ctx.Context{ctx.CPU(0)}
	two := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	cfg := text.GPT2Config{VocabSize: 31, NPositions: 16, NEmbd: 32, NLayer: 2, NHead: 4,
		ResidPdrop: 0.1, EmbdPdrop: 0.1, AttnPdrop: 0.1}
	for _, tc := range []struct {
		name string
		devs []ctx.Context
	}{{"cpu0", one}, {"cpu0+cpu1", two}} {
		t.Run(tc.name, func(t *testing.T) {
			losses, _ := trainRun(t, cfg, tc.devs, 12)
			first, last := losses[0], losses[len(losses)-1]
			t.Logf("loss %.4f → %.4f", first, last)
			if !(last < 0.8*first) {
				t.Errorf("the loss went from %.4f to %.4f: %.4f", first, last, losses)
			}
		})
	}
	t.Run("one context ≡ two", func(t *testing.T) {
		cfg := cfg
		cfg.ResidPdrop, cfg.EmbdPdrop, cfg.AttnPdrop = 0, 0, 0
		l1, p1 := trainRun(t, cfg, one, 3)
		l2, p2 := trainRun(t, cfg, two, 3)
		if r := numcmp.RelL2(l2, l1); r > 1e-5 {
			t.Errorf("losses %v on one context, %v on two", l1, l2)
		}
		for name, w := range p1 {
			if r := numcmp.RelL2(p2[name], w); r > 1e-5 {
				t.Errorf("%s: relative L2 difference %.3g between one context and two", name, r)
			}
		}
	})
}

// TestHybridize: the hybridized model (gluon.Hybridize) computes the
// eager model's logits and trains as it does.
func TestHybridize(t *testing.T) {
	m := loadTiny(t, tinyConfig())
	h := gluon.Hybridize(m, gluon.HybridOpts{})
	ids := idsArray(ctx.CPU(0), [][]int64{{1, 2, 3, 4, 5}, {50, 60, 70, 80, 90}})
	for range 2 { // the trace, then its replay
		var eager, hybrid []float32
		autograd.PredictMode(func() { eager, hybrid = m.Forward(ids).Float32s(), h.Forward(ids).Float32s() })
		if r := numcmp.RelL2(hybrid, eager); r > 1e-6 {
			t.Errorf("hybridized logits: relative L2 difference %.3g", r)
		}
	}
	params := gluon.CollectParams(m)
	grads := func(net gluon.Block) []float32 {
		params.ZeroGrad()
		autograd.Record(func() { autograd.Backward(text.LMLoss(net.Forward(ids), ids)) })
		return params.Get("transformer.h.1.mlp.c_fc.weight").Grad(ctx.CPU(0)).Float32s()
	}
	want := grads(m)
	for range 2 {
		if r := numcmp.RelL2(grads(h), want); r > 1e-5 {
			t.Errorf("hybridized gradient: relative L2 difference %.3g", r)
		}
	}
}

package prune_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/nd"
)

// apply runs one of the generator's rounds on h's weight.
func apply(t *testing.T, h *holder, r round) *prune.Pruning {
	t.Helper()
	var scores *nd.NDArray
	if r.Scores != nil {
		scores = r.Scores.nd()
	}
	switch r.Method {
	case "l1":
		return prune.L1Unstructured(h, "weight", r.Amount.amount(), scores)
	case "ln":
		return prune.LnStructured(h, "weight", r.Amount.amount(), r.norm(t), r.Dim, scores)
	case "custom":
		return prune.CustomFromMask(h, "weight", r.Custom.nd())
	case "identity":
		return prune.Identity(h, "weight")
	}
	t.Fatalf("unknown method %q", r.Method)
	return nil
}

// TestGoldenMasks: every case of the generator (L1Unstructured with
// fractions, counts, half-even rounding and importance scores;
// LnStructured with n = 1, 2, 3, ±inf on dims 0, 1, 3 and -1;
// CustomFromMask; Identity; two and three rounds combined as torch's
// PruningContainer combines them) gives torch's mask exactly, and the
// weight the layer reads is weight_orig · mask with weight_orig unchanged.
func TestGoldenMasks(t *testing.T) {
	g := loadGoldens(t)
	if len(g.Cases) != 35 {
		t.Fatalf("%d cases, want the generator's 35", len(g.Cases))
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			h := newHolder(t, c.Weight)
			var p *prune.Pruning
			for i, r := range c.Rounds {
				p = apply(t, h, r)
				equalSlice(t, "mask after round "+string(rune('1'+i)), p.Mask.Data(cpu0).Float64s(), r.Want.Data)
			}
			if got := len(p.Methods()); got != len(c.Rounds) {
				t.Errorf("%d methods recorded (%v), want %d", got, p.Methods(), len(c.Rounds))
			}
			equalSlice(t, "weight_orig", p.Orig.Data(cpu0).Float64s(), c.Weight.Data)
			want := slices.Clone(c.Weight.Data)
			for i, m := range c.Rounds[len(c.Rounds)-1].Want.Data {
				want[i] *= m
			}
			equalSlice(t, "weight", h.W.Data(cpu0).Float64s(), want)
		})
	}
}

// TestGoldenGlobal: GlobalUnstructured with L1 over a Dense's and a
// Conv2D's weights, from scratch (a fraction, a count) and after a first
// L1Unstructured round on the Dense (the fraction then counts the entries
// left), gives torch's masks exactly.
func TestGoldenGlobal(t *testing.T) {
	g := loadGoldens(t)
	if len(g.Global) != 3 {
		t.Fatalf("%d global cases, want the generator's 3", len(g.Global))
	}
	for _, c := range g.Global {
		t.Run(c.Name, func(t *testing.T) {
			dense := nn.NewDense(6, nn.DenseOpts{InUnits: 5})
			conv := nn.NewConv2D(4, 3, nn.Conv2DOpts{InChannels: 3})
			net := nn.NewSequential(dense, conv)
			for _, p := range gluon.CollectParams(net).List() {
				p.SetDType(nd.Float64)
			}
			if err := gluon.Initialize(net, nil, cpu0); err != nil {
				t.Fatal(err)
			}
			dense.Weight.SetData(c.Weights[0].nd())
			conv.Weight.SetData(c.Weights[1].nd())
			if c.First != nil {
				p := prune.L1Unstructured(dense, "weight", c.First.amount(), nil)
				equalSlice(t, "first mask", p.Mask.Data(cpu0).Float64s(), c.FirstMask.Data)
			}
			ps := prune.GlobalUnstructured([]prune.Target{{Block: dense, Name: "weight"}, {Block: conv, Name: "weight"}}, prune.L1, c.Amount.amount())
			for i, p := range ps {
				equalSlice(t, p.Orig.Name()+" mask", p.Mask.Data(cpu0).Float64s(), c.Masks[i].Data)
			}
		})
	}
}

// TestGoldenGradients: the generator's network, pruned as torch pruned
// it (conv0.weight twice, dense0.weight and dense0.bias once), gives
// torch's masks exactly, and its output, loss and the gradients of
// weight_orig, bias_orig and conv0.bias within 1e-12 in float64; the
// pruned entries of every weight_orig get exactly zero gradient.
func TestGoldenGradients(t *testing.T) {
	g := loadGoldens(t).Grad
	net, conv, dense := gradNet(t, nd.Float64)
	params := gluon.CollectParams(net)
	for name, a := range g.Init {
		params.Get(name).SetData(a.nd())
	}
	pruneGradNet(conv, dense)
	params = gluon.CollectParams(net)
	want := []string{"conv0.weight_orig", "conv0.weight_mask", "conv0.bias", "dense0.weight_orig", "dense0.weight_mask", "dense0.bias_orig", "dense0.bias_mask"}
	if got := params.Names(); !slices.Equal(got, want) {
		t.Fatalf("parameters %v, want %v", got, want)
	}
	for name, m := range g.Masks {
		equalSlice(t, name, params.Get(name).Data(cpu0).Float64s(), m.Data)
	}
	x, target := g.Input.nd(), g.Target.nd()
	var y, loss *nd.NDArray
	autograd.Record(func() {
		y = net.Forward(x)
		loss = nd.Sum(nd.Square(nd.Sub(y, target)))
		autograd.Backward(loss)
	})
	worst := closeSlice(t, "output", y.Float64s(), g.Output.Data, 1e-12)
	if d := math.Abs(loss.Scalar()-g.Loss) / math.Max(1, math.Abs(g.Loss)); d > 1e-12 {
		t.Errorf("loss %.17g, torch %.17g", loss.Scalar(), g.Loss)
	}
	for name, w := range g.Grads {
		grad := params.Get(name).Grad(cpu0).Float64s()
		worst = math.Max(worst, closeSlice(t, name+" gradient", grad, w.Data, 1e-12))
		if mask := params.Get(name[:len(name)-len("orig")] + "mask"); mask != nil {
			for i, m := range mask.Data(cpu0).Float64s() {
				if m == 0 && grad[i] != 0 {
					t.Errorf("%s: pruned entry %d has gradient %g", name, i, grad[i])
				}
			}
		}
	}
	t.Logf("largest relative difference from torch %s: %.3g", loadGoldens(t).Torch, worst)
}

package rnn_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestMultiContext splits a batch over cpu(0) and cpu(1) with SplitAndLoad,
// runs the layer on both concurrently and checks that the outputs are the
// single-context outputs' halves and that the replicas' gradients add up
// to the single-context gradient.
func TestMultiContext(t *testing.T) {
	for _, m := range []rnn.Mode{rnn.LSTM, rnn.GRU} {
		t.Run(m.String(), func(t *testing.T) {
			l := rnn.NewLayer(m, 4, rnn.Opts{NumLayers: 2, Bidirectional: true, Layout: "NTC", InputSize: 3})
			randomParams(t, l, cpu0, cpu1)
			x := ndtest.Rand(cpu0, 5, -1, 1, 4, 6, 3) // batch 4, NTC

			var whole *nd.NDArray
			autograd.Record(func() {
				whole = l.Forward(x)
				autograd.Backward(nd.Sum(nd.Square(whole)))
			})
			params := gluon.CollectParams(l)
			single := map[string][]float64{}
			for _, p := range params.List() {
				single[p.Name()] = p.Grad(cpu0).Float64s()
			}
			params.ZeroGrad()

			devs := []ctx.Context{cpu0, cpu1}
			xs, err := gluon.SplitAndLoad(x, devs, false)
			if err != nil {
				t.Fatal(err)
			}
			ys := make([]*nd.NDArray, 2)
			autograd.Record(func() {
				err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
					ys[i] = l.Forward(xs[i])
					autograd.Backward(nd.Sum(nd.Square(ys[i])))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if ys[1].Context() != cpu1 {
				t.Fatalf("second half computed on %v", ys[1].Context())
			}
			same(t, "outputs of both contexts", nd.Concat(0, ys[0], ys[1].CopyTo(cpu0)), whole, 1e-13)
			for _, p := range params.List() {
				g := p.ListGrad()
				sum := nd.Add(g[0], g[1].CopyTo(cpu0))
				same(t, p.Name()+" gradient summed over contexts", sum, nd.FromSlice(cpu0, single[p.Name()], p.Shape()...), 1e-12)
			}
		})
	}
}

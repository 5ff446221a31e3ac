package rnn_test

import (
	"fmt"
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
			same(t, "outputs of both contexts", nd.Concat([]*nd.NDArray{ys[0], ys[1].CopyTo(cpu0)}, 0), whole, 1e-13)
			for _, p := range params.List() {
				g := p.ListGrad()
				sum := nd.Add(g[0], g[1].CopyTo(cpu0))
				same(t, p.Name()+" gradient summed over contexts", sum, nd.FromSlice(cpu0, single[p.Name()], p.Shape()...), 1e-12)
			}
		})
	}
}

// TestMultiContextBeginStates splits an odd batch (3 + 2) and its begin
// states (along their batch axis, 1) over cpu(0) and cpu(1), runs
// ForwardMulti on both, and checks the outputs, the final states and the
// gradients of the input, the begin states and every parameter against one
// pass over the whole batch on cpu(0). The loss reads every output, so the
// final states' gradients flow back too.
func TestMultiContextBeginStates(t *testing.T) {
	const N, T, in, hid = 5, 4, 3, 4
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) {
			l := rnn.NewLayer(m, hid, rnn.Opts{NumLayers: 2, Bidirectional: true, Layout: "NTC", InputSize: in})
			randomParams(t, l, cpu0, cpu1)
			params := gluon.CollectParams(l)
			ns := 1 // h0, and c0 for an LSTM
			if m == rnn.LSTM {
				ns = 2
			}
			loss := func(outs []*nd.NDArray) *nd.NDArray { return nd.Sum(nd.Square(flat(outs))) }

			// The whole batch on cpu(0).
			whole := []*nd.NDArray{ndtest.Rand(cpu0, 5, -1, 1, N, T, in)}
			for i := range ns {
				whole = append(whole, ndtest.Rand(cpu0, uint64(6+i), -1, 1, 4, N, hid))
			}
			for _, a := range whole {
				a.AttachGrad(nd.GradWrite)
			}
			var want []*nd.NDArray
			autograd.Record(func() {
				want = gluon.Call(l, whole...)
				autograd.Backward(loss(want))
			})
			single := map[string]*nd.NDArray{}
			for _, p := range params.List() {
				single[p.Name()] = p.Grad(cpu0).Copy()
			}
			params.ZeroGrad()

			// The batch split over two contexts.
			devs := []ctx.Context{cpu0, cpu1}
			xs, err := gluon.SplitAndLoad(whole[0].Copy(), devs, false)
			if err != nil {
				t.Fatal(err)
			}
			bounds, err := gluon.SplitBounds(N, len(devs), false)
			if err != nil {
				t.Fatal(err)
			}
			parts := make([][]*nd.NDArray, len(devs)) // [device][x, h0, c0]
			for d, b := range bounds {
				parts[d] = []*nd.NDArray{xs[d]}
				for _, s := range whole[1:] {
					parts[d] = append(parts[d], nd.SliceAxis(s, b[0], b[1], 1).CopyTo(devs[d]))
				}
				for _, a := range parts[d] {
					if a.Context() != devs[d] {
						t.Fatalf("part %d on %v", d, a.Context())
					}
					a.AttachGrad(nd.GradWrite)
				}
			}
			outs := make([][]*nd.NDArray, len(devs))
			autograd.Record(func() {
				err = gluon.ForEachDevice(devs, func(d int, _ ctx.Context) error {
					outs[d] = gluon.Call(l, parts[d]...)
					autograd.Backward(loss(outs[d]))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			// Outputs: the sequence splits on axis 0 (NTC), the states on 1.
			for i := range want {
				axis := min(i, 1)
				got := nd.Concat([]*nd.NDArray{outs[0][i], outs[1][i].CopyTo(cpu0)}, axis)
				same(t, fmt.Sprintf("output %d", i), got, want[i], 1e-13)
			}
			for i, a := range whole {
				axis := min(i, 1)
				got := nd.Concat([]*nd.NDArray{parts[0][i].Grad(), parts[1][i].Grad().CopyTo(cpu0)}, axis)
				same(t, fmt.Sprintf("gradient of input %d", i), got, a.Grad(), 1e-12)
			}
			for _, p := range params.List() {
				g := p.ListGrad()
				if g[1].Context() != cpu1 {
					t.Fatalf("%s: second replica's gradient on %v", p.Name(), g[1].Context())
				}
				same(t, p.Name()+" gradient summed over contexts", nd.Add(g[0], g[1].CopyTo(cpu0)), single[p.Name()], 1e-12)
			}
		})
	}
}

package gluon_test

import (
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/nd"
)

// runBlock calls c three times on inputs (made by in) while recording in
// training mode, backpropagates a fixed weighting of every output and
// returns the outputs and the parameters' gradients of each call.
func runBlock(t *testing.T, c gluon.Component, in func() []*nd.NDArray, hybrid bool) [][]float32 {
	t.Helper()
	if hybrid {
		c = gluon.Hybridize(c, gluon.HybridOpts{})
	}
	params := gluon.CollectParams(c)
	nd.Seed(7)
	var got [][]float32
	for it := range 3 {
		var outs []*nd.NDArray
		var loss *nd.NDArray
		autograd.Record(func() {
			outs = gluon.Call(c, in()...)
			for i, o := range outs {
				w := nd.RandomUniform(o.Context(), nd.Float32, -1, 1, o.Shape()...)
				l := nd.Sum(nd.Mul(o, w))
				if i == 0 {
					loss = l
				} else {
					loss = nd.Add(loss, l)
				}
			}
		})
		autograd.Backward(loss)
		for _, o := range outs {
			got = append(got, o.Float32s())
		}
		for _, p := range params.List() {
			got = append(got, p.Grad(ctx.CPU(0)).Float32s())
		}
		_ = it
	}
	var pred []*nd.NDArray
	autograd.PredictMode(func() { pred = gluon.Call(c, in()...) })
	for _, o := range pred {
		got = append(got, o.Float32s())
	}
	if h, ok := c.(*gluon.HybridBlock); ok {
		if st := h.Stats(); st.Replays < 2 {
			t.Fatalf("stats %+v: the calls did not replay", st)
		}
	}
	return got
}

// TestHybridizeModels compares the recurrent layers and a causal
// pre-norm transformer block (the char-lm GPT's, with dropout and GELU)
// hybridized against eager: outputs and gradients, bit for bit.
func TestHybridizeModels(t *testing.T) {
	dev := ctx.CPU(0)
	cases := []struct {
		name  string
		block func() gluon.Component
		in    func() []*nd.NDArray
	}{
		{"lstm-2layer-bidirectional", func() gluon.Component {
			return rnn.NewLSTM(6, rnn.Opts{NumLayers: 2, Bidirectional: true, Layout: "NTC", InputSize: 4})
		}, func() []*nd.NDArray {
			nd.Seed(3)
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, 3, 5, 4)}
		}},
		{"gru-with-state", func() gluon.Component {
			return rnn.NewGRU(5, rnn.Opts{InputSize: 4})
		}, func() []*nd.NDArray {
			nd.Seed(4)
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, 6, 2, 4), nd.RandomNormal(dev, nd.Float32, 0, 1, 1, 2, 5)}
		}},
		{"gpt-block", func() gluon.Component {
			return nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 32, Dropout: 0.1,
				Activation: "gelu", NormFirst: true, Layout: "NTC", Causal: true})
		}, func() []*nd.NDArray {
			nd.Seed(5)
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 7, 8)}
		}},
		{"upsampling-decoder", func() gluon.Component {
			return nn.NewSequential(
				nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, Act: "relu", InChannels: 2}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{2, 2}}),
				nn.NewUpsample(nd.InterpolateOpts{Size: [2]int{5, 7}, Mode: nd.InterpBilinear, Antialias: true}),
				nn.NewConv2D(2, 1, nn.Conv2DOpts{InChannels: 4}),
			)
		}, func() []*nd.NDArray {
			nd.Seed(6)
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 2, 4, 3)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(hybrid bool) [][]float32 {
				b := c.block()
				nd.Seed(1)
				if err := gluon.CollectParams(b).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
					t.Fatal(err)
				}
				return runBlock(t, b, c.in, hybrid)
			}
			want, got := run(false), run(true)
			if len(got) != len(want) {
				t.Fatalf("%d arrays, want %d", len(got), len(want))
			}
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("array %d [%d] = %v hybridized, %v eager", i, j, got[i][j], want[i][j])
					}
				}
			}
		})
	}
}

// TestHybridizeSessions serves a hybridized network with dropout from its
// own session's predict mode while another goroutine trains the same
// (hybridized) network in the default session: the server's replays run
// in its session (no dropout, its arrays), and equal the eager network's.
func TestHybridizeSessions(t *testing.T) {
	dev := ctx.CPU(0)
	build := func() gluon.Block {
		net := nn.NewSequential()
		net.Add(nn.NewDense(16, nn.DenseOpts{InUnits: 8, Act: "relu"}), nn.NewDropout(0.5), nn.NewDense(4, nn.DenseOpts{InUnits: 16}))
		nd.Seed(1)
		if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
			t.Fatal(err)
		}
		return net
	}
	eager, inner := build(), build()
	h := gluon.Hybridize(inner, gluon.HybridOpts{})
	input := make([]float32, 3*8)
	for i := range input {
		input[i] = float32(i%7) - 3
	}
	want := eager.Forward(nd.FromSlice(dev, input, 3, 8)).Float32s() // the default session predicts
	done := make(chan struct{})
	go func() { // a learner in the default session, forward and backward only (parameters stay)
		defer close(done)
		x := nd.FromSlice(dev, input, 3, 8)
		for range 100 {
			autograd.Record(func() { autograd.Backward(nd.Sum(h.Forward(x))) })
		}
	}()
	s := nd.NewSession("server")
	for range 200 {
		s.PredictMode(func() {
			y := h.Forward(nd.FromSlice(dev, input, 3, 8))
			if y.Session() != s {
				t.Errorf("a replay's output belongs to %v, want %v", y.Session(), s)
			}
			got := y.Float32s()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("served prediction [%d] = %v, eager %v", i, got[i], want[i])
				}
			}
		})
	}
	<-done
}

// TestHybridizeEagerOnly: a network holding a SyncBatchNorm (which meets
// the other contexts while it runs) runs eagerly when hybridized, on two
// contexts at once, and says why.
func TestHybridizeEagerOnly(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := nn.NewSequential()
	net.Add(nn.NewDense(4, nn.DenseOpts{InUnits: 3}), nn.NewSyncBatchNorm(nn.BatchNormOpts{InChannels: 4}))
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	nd.Seed(1)
	x := nd.RandomNormal(devs[0], nd.Float32, 0, 1, 8, 3)
	xs, err := gluon.SplitAndLoad(x, devs, false)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		autograd.Record(func() {
			err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				autograd.Backward(nd.Sum(h.Forward(xs[i])))
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if st := h.Stats(); st.Traces != 0 || st.Eager != 6 {
		t.Errorf("stats %+v: want 6 eager calls", st)
	}
	if r := h.EagerReason(); !strings.Contains(r, "SyncBatchNorm") {
		t.Errorf("EagerReason %q", r)
	}
}

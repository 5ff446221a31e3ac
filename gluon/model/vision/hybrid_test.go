package vision_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/nd"
)

// randomZoo are models of the zoo with their random parts on: dropout
// and stochastic depth (the zoo has neither).
var randomZoo = []struct {
	name  string
	build func() vision.Headed
}{
	{"efficientnet_b0-random", func() vision.Headed {
		return vision.EfficientNetB0(vision.Options{Classes: 10, Width: 8, StochasticDepth: 0.5})
	}},
	{"convnext_tiny-random", func() vision.Headed {
		return vision.ConvNeXtTiny(vision.Options{Classes: 10, Width: 4, StochasticDepth: 0.5})
	}},
	{"densenet121-random", func() vision.Headed { return vision.DenseNet121(vision.Options{Classes: 10, Width: 6, Dropout: 0.2}) }},
	{"mobilenet_v3_small-random", func() vision.Headed { return vision.MobileNetV3Small(vision.Options{Classes: 10, Width: 8}) }},
	{"swin_t-random", func() vision.Headed {
		return vision.NewSwin(vision.SwinOptions{Options: vision.Options{Classes: 10, Width: 8, StochasticDepth: 0.5, Dropout: 0.2},
			WindowSize: 4, Heads: [4]int{1, 2, 4, 8}})
	}},
	{"googlenet-random", func() vision.Headed {
		return vision.NewGoogLeNet(vision.InceptionOptions{Options: vision.Options{Classes: 10, Width: 8}, AuxLogits: new(true)})
	}},
}

// TestHybridizeZoo runs every model of the zoo (small configurations),
// and some with dropout and stochastic depth, eagerly and hybridized from
// the same seed: two recorded training passes (outputs and every
// parameter's gradient) and a predict-mode pass must agree bit for bit.
func TestHybridizeZoo(t *testing.T) {
	dev := ctx.CPU(0)
	for _, m := range append(slices.Clone(zoo), randomZoo...) {
		t.Run(m.name, func(t *testing.T) {
			run := func(hybrid bool) [][]float32 {
				net := gluon.Component(m.build())
				params := gluon.CollectParams(net)
				nd.Seed(1)
				if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
					t.Fatal(err)
				}
				if hybrid {
					net = gluon.Hybridize(net, gluon.HybridOpts{})
				}
				nd.Seed(2)
				x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, inputSize(m.name), inputSize(m.name))
				var got [][]float32
				for range 3 { // the first call infers deferred shapes eagerly
					var y *nd.NDArray
					autograd.Record(func() {
						y = gluon.Call(net, x)[0]
						autograd.Backward(nd.Sum(nd.Square(y)))
					})
					got = append(got, y.Float32s())
					for _, p := range params.List() {
						if g := p.Grad(dev); g != nil {
							got = append(got, g.Float32s())
						}
					}
				}
				autograd.PredictMode(func() { got = append(got, gluon.Call(net, x)[0].Float32s()) })
				if h, ok := net.(*gluon.HybridBlock); ok && h.Stats().Replays < 2 {
					t.Fatalf("stats %+v: no replays", h.Stats())
				}
				return got
			}
			want, got := run(false), run(true)
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

// TestHybridizeZooFoldBatchNorm runs every model of the zoo in predict
// mode eagerly and hybridized with FoldBatchNorm, after a few training
// passes have moved the running statistics: the batch normalisations of
// the early layers fold (those of the late ones, whose convolutions have
// more filter values than outputs at this size, do not), and the outputs
// agree within the rounding the folding documents.
func TestHybridizeZooFoldBatchNorm(t *testing.T) {
	dev := ctx.CPU(0)
	for _, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			net := gluon.Component(m.build())
			params := gluon.CollectParams(net)
			nd.Seed(1)
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			nd.Seed(2)
			x := nd.RandomNormal(dev, nd.Float32, 0, 1, 4, 3, inputSize(m.name), inputSize(m.name))
			for range 2 {
				autograd.Record(func() { gluon.Call(net, nd.AddScalar(x, 0.5)) })
			}
			bns, moved := 0, false
			for _, p := range params.List() {
				if strings.HasSuffix(p.Name(), "running_mean") {
					bns++
					moved = moved || slices.ContainsFunc(p.Data(dev).Float32s(), func(v float32) bool { return v != 0 })
				}
			}
			if bns > 0 && !moved {
				t.Fatal("the training passes left the running means at 0")
			}
			var want, got []float32
			autograd.PredictMode(func() { want = gluon.Call(net, x)[0].Float32s() })
			h := gluon.Hybridize(net, gluon.HybridOpts{FoldBatchNorm: true})
			for range 2 {
				autograd.PredictMode(func() { got = gluon.Call(h, x)[0].Float32s() })
			}
			if st := h.Stats(); st.Replays != 1 || st.Folded > bns || (bns > 0) != (st.Folded > 0) {
				t.Fatalf("stats %+v, want 1 replay and 1 to %d folded", st, bns)
			}
			scale := 0.0
			for _, v := range want {
				scale = math.Max(scale, math.Abs(float64(v)))
			}
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*scale {
					t.Fatalf("[%d] = %v folded, %v eager (scale %g)", i, got[i], want[i], scale)
				}
			}
		})
	}
}

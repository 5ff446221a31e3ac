package amp_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// TestLayersUnderAutocast: every kind of layer runs forward and backward
// under autocast in float16 and bfloat16, with float32 parameters that get
// float32 gradients, and its output and gradients agree with float32's
// within the half dtype's precision (relative L2 error over the whole
// output or gradient set).
func TestLayersUnderAutocast(t *testing.T) {
	dev := ctx.CPU(0)
	cases := []struct {
		name  string
		block func() gluon.Block
		input func() *nd.NDArray
	}{
		{"Dense", func() gluon.Block { return nn.NewDense(8, nn.DenseOpts{Act: "tanh"}) },
			func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 4, 6) }},
		{"Conv2D+BatchNorm+MaxPool", func() gluon.Block {
			return nn.NewSequential(nn.NewConv2D(6, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}}),
				nn.NewBatchNorm(nn.BatchNormOpts{}), nn.NewActivation("relu"), nn.NewMaxPool2D(2, nn.PoolOpts{}))
		}, func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, 8, 8) }},
		{"Conv2D+SyncBatchNorm", func() gluon.Block {
			return nn.NewSequential(nn.NewConv2D(6, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}}), nn.NewSyncBatchNorm(nn.BatchNormOpts{}))
		}, func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 4, 3, 8, 8) }},
		{"LayerNorm+GELU", func() gluon.Block {
			return nn.NewSequential(nn.NewDense(16, nn.DenseOpts{}), nn.NewLayerNorm(-1, nn.NormOpts{}), nn.NewGELU(false))
		}, func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 4, 12) }},
		{"LSTM", func() gluon.Block { return rnn.NewLSTM(8, rnn.Opts{NumLayers: 1}) },
			func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 5, 2, 4) }},
		{"GRU", func() gluon.Block { return rnn.NewGRU(8, rnn.Opts{NumLayers: 2}) },
			func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 5, 2, 4) }},
		{"MultiHeadAttention", func() gluon.Block { return nn.NewMultiHeadAttention(16, 4, nn.AttentionOpts{Causal: true}) },
			func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 6, 2, 16) }},
		{"TransformerEncoderLayer", func() gluon.Block {
			return nn.NewTransformerEncoderLayer(16, 4, nn.TransformerOpts{FeedForward: 32, NormFirst: true, Activation: "gelu"})
		}, func() *nd.NDArray { return nd.RandomNormal(dev, nd.Float32, 0, 1, 6, 2, 16) }},
		{"Embedding+Dense", func() gluon.Block {
			return nn.NewSequential(nn.NewEmbedding(20, 8), nn.NewDense(4, nn.DenseOpts{NoFlatten: true}))
		}, func() *nd.NDArray { return nd.FromSlice(dev, []int64{1, 5, 19, 0, 7, 7}, 2, 3) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(31)
			net := c.block()
			if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
				t.Fatal(err)
			}
			x := c.input()
			autograd.Pause(func() { net.Forward(x) }) // deferred shapes
			params := gluon.CollectParams(net).List()
			run := func(dt nd.DType) (out []float64, grads [][]float64) {
				for _, p := range params {
					p.Data(dev).AttachGrad(p.GradReq())
				}
				var y *nd.NDArray
				autograd.Record(func() {
					f := func() { y = net.Forward(x) }
					if dt.IsHalf() {
						nd.Autocast(dt, f)
						if d := y.DType(); d != nd.Float32 && d != dt {
							t.Errorf("%v: output dtype %v", dt, d)
						}
					} else {
						f()
					}
					y = nd.Sum(nd.Square(y.AsType(nd.Float32)))
				})
				autograd.Backward(y)
				// The forward pass in training mode moved BatchNorm's
				// running statistics; compare the loss and the gradients.
				out = y.Float64s()
				for _, p := range params {
					g := p.Data(dev).Grad()
					if g == nil {
						continue
					}
					if g.DType() != nd.Float32 {
						t.Errorf("%v: %s's gradient is %v, want float32", dt, p.Name(), g.DType())
					}
					grads = append(grads, g.Float64s())
				}
				return out, grads
			}
			l32, g32 := run(nd.Float32)
			for _, tc := range []struct {
				dt  nd.DType
				tol float64
			}{{nd.Float16, 3e-3}, {nd.BFloat16, 2e-2}} {
				l, g := run(tc.dt)
				if e := math.Abs(l[0]-l32[0]) / math.Abs(l32[0]); e > tc.tol {
					t.Errorf("%v: loss %v, float32 %v", tc.dt, l[0], l32[0])
				}
				var flat, flat32 []float64
				for i := range g {
					flat, flat32 = append(flat, g[i]...), append(flat32, g32[i]...)
				}
				t.Logf("%v: loss error %.2g, gradient error %.2g", tc.dt, math.Abs(l[0]-l32[0])/math.Abs(l32[0]), numcmp.RelL2(flat, flat32))
				if e := numcmp.RelL2(flat, flat32); e > tc.tol || math.IsNaN(e) || e == 0 {
					t.Errorf("%v: gradients off by %.3g relative (tolerance %g)", tc.dt, e, tc.tol)
				}
			}
		})
	}
}

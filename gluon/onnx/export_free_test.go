package onnx_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportRoundTripFreeAxes: sequence models exported with a free sequence axis
// run, loaded back, at other lengths than the example's and give the
// network's output (make onnx-check runs them in ONNX Runtime at another
// length too); a network whose form fixes the length is refused.
func TestExportRoundTripFreeAxes(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		name        string
		net         func() gluon.Block
		shape       []int
		batch, free int
	}{
		{"free-transformer-ntc", func() gluon.Block {
			return nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC"})
		}, []int{2, 5, 8}, 0, 1},
		{"free-causal", func() gluon.Block {
			return nn.NewSequential(
				nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC", Causal: true, NormFirst: true}),
				nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC", Causal: true}),
			)
		}, []int{2, 5, 8}, 0, 1},
		{"free-recurrent-tnc", func() gluon.Block {
			return nn.NewSequential(rnn.NewLSTM(6, rnn.Opts{Bidirectional: true}), rnn.NewGRU(4, rnn.Opts{}))
		}, []int{5, 2, 3}, 1, 0},
		{"free-conv1d", func() gluon.Block {
			return nn.NewSequential(nn.NewConv1D(4, 3, nn.Conv1DOpts{Pad: 1}), nn.NewPReLU(4), nn.NewInstanceNorm(nn.NormOpts{}))
		}, []int{2, 3, 9}, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(3)
			net := c.net()
			if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			autograd.PredictMode(func() { net.Forward(nd.Zeros(dev, nd.Float32, c.shape...)) })
			dir := os.Getenv(onnxtest.ExportDirEnv)
			if dir == "" {
				dir = t.TempDir()
			}
			path := filepath.Join(dir, c.name+".onnx")
			if err := onnx.Save(path, net, c.shape, onnx.ExportOpts{BatchAxis: c.batch, FreeAxes: []int{c.free}}); err != nil {
				t.Fatal(err)
			}
			m, err := onnx.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, length := range []int{c.shape[c.free] - 2, c.shape[c.free] + 3} {
				shape := slices.Clone(c.shape)
				shape[c.free] = length
				x := nd.RandomNormal(dev, nd.Float32, 0, 1, shape...)
				var want, got *nd.NDArray
				autograd.PredictMode(func() {
					want = net.Forward(x)
					got = m.Forward(x)
				})
				if rel := numcmp.RelL2(got.Float32s(), want.Float32s()); rel > 1e-5 || rel != rel {
					t.Errorf("length %d: relative L2 difference %.3g", length, rel)
				}
				if os.Getenv(onnxtest.ExportDirEnv) != "" && length > c.shape[c.free] {
					if err := onnxtest.WriteIO(filepath.Join(dir, c.name+".io.json"), x, want); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
	t.Run("a form that fixes the length", func(t *testing.T) {
		net := nn.NewSequential(nn.NewConv1D(2, 3, nn.Conv1DOpts{}), nn.NewFlatten(), nn.NewDense(3, nn.DenseOpts{}))
		if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
			t.Fatal(err)
		}
		autograd.PredictMode(func() { net.Forward(nd.Zeros(dev, nd.Float32, 2, 3, 8)) })
		_, err := onnx.Export(net, []int{2, 3, 8}, onnx.ExportOpts{FreeAxes: []int{2}})
		if err == nil || !strings.Contains(err.Error(), "second size") && !strings.Contains(err.Error(), "example forward pass") {
			t.Fatalf("got %v", err)
		}
	})
}

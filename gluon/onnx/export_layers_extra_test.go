package onnx_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// TestExportLayersExtra exports networks of the layers added after
// PyTorch's (RMSNorm, GLU, the softmax family, RReLU, the channel and
// alpha dropouts, Unflatten, ChannelShuffle, EmbeddingBag on 2-D bags),
// loads each back and compares with the network in predict mode, at the
// example's batch and a larger one. With GOLUON_ONNX_EXPORT_DIR set the
// files and their inputs and outputs stay there for ONNX Runtime
// (tools/onnx_ort_check.js).
func TestExportLayersExtra(t *testing.T) {
	dev := ctx.CPU(0)
	ids := func(n, l int, seed uint64) *nd.NDArray {
		nd.Seed(seed)
		return nd.RandomInt(dev, nd.Int64, 0, 10, n, l)
	}
	for _, c := range []struct {
		name   string
		net    func() gluon.Block
		shape  []int
		opts   onnx.ExportOpts
		inputs func() []*nd.NDArray
	}{
		{"extra-norm-glu-softmax", func() gluon.Block {
			return nn.NewSequential(nn.NewRMSNorm([]int{6}, nn.RMSNormOpts{}), nn.NewDropout1D(0.5), nn.NewGLU(-1),
				nn.NewSoftmax(1), nn.NewLogSoftmax(-1), nn.NewSoftmin(0))
		}, []int{3, 4, 6}, onnx.ExportOpts{}, nil},
		{"extra-shuffle-unflatten", func() gluon.Block {
			return nn.NewSequential(nn.NewConv2D(6, 1, nn.Conv2DOpts{}), nn.NewChannelShuffle(3), nn.NewSoftmax2D(),
				nn.NewDropout2D(0.5), nn.NewAlphaDropout(0.3), nn.NewFeatureAlphaDropout(0.2), nn.NewRReLU(0.1, 0.3),
				nn.NewFlatten(), nn.NewUnflatten(1, 3, -1), nn.NewRMSNorm([]int{12}, nn.RMSNormOpts{Epsilon: 1e-5, NoScale: true}),
				nn.NewUnflatten(-1, 2, 2, 3), nn.NewGLU(2))
		}, []int{2, 6, 2, 3}, onnx.ExportOpts{}, nil},
		{"extra-rmsnorm-two-axes-volume", func() gluon.Block {
			return nn.NewSequential(nn.NewRMSNorm([]int{2, 3}, nn.RMSNormOpts{}), nn.NewDropout3D(0.4), nn.NewChannelShuffle(2))
		}, []int{2, 4, 1, 2, 3}, onnx.ExportOpts{}, nil},
		{"extra-embeddingbag-max-padding", func() gluon.Block {
			return nn.NewSequential(nn.NewEmbeddingBag(10, 4, "max").WithPadding(0), nn.NewDense(3, nn.DenseOpts{}))
		}, []int{3, 4}, onnx.ExportOpts{InputDType: nd.Int64}, func() []*nd.NDArray { return []*nd.NDArray{ids(3, 4, 1), ids(5, 4, 2)} }},
		{"extra-embeddingbag-mean-padding", func() gluon.Block { return nn.NewEmbeddingBag(10, 4, "mean").WithPadding(3) },
			[]int{3, 4}, onnx.ExportOpts{InputDType: nd.Int64}, func() []*nd.NDArray { return []*nd.NDArray{ids(3, 4, 3), ids(6, 4, 4)} }},
		{"extra-embeddingbag-sum", func() gluon.Block { return nn.NewEmbeddingBag(10, 4, "sum") },
			[]int{3, 5}, onnx.ExportOpts{InputDType: nd.Int64}, func() []*nd.NDArray { return []*nd.NDArray{ids(3, 5, 5), ids(1, 5, 6)} }},
		{"extra-embeddingbag-mean", func() gluon.Block { return nn.NewEmbeddingBag(10, 4, "mean") },
			[]int{3, 5}, onnx.ExportOpts{InputDType: nd.Int64}, func() []*nd.NDArray { return []*nd.NDArray{ids(3, 5, 7)} }},
		{"extra-embeddingbag-max", func() gluon.Block { return nn.NewEmbeddingBag(10, 4, "max") },
			[]int{3, 5}, onnx.ExportOpts{InputDType: nd.Int64}, func() []*nd.NDArray { return []*nd.NDArray{ids(3, 5, 8)} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(5)
			net := c.net()
			if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			var inputs []*nd.NDArray
			if c.inputs != nil {
				inputs = c.inputs()
			} else {
				big := append([]int{c.shape[0] + 3}, c.shape[1:]...)
				inputs = []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, c.shape...), nd.RandomNormal(dev, nd.Float32, 0, 1, big...)}
			}
			autograd.PredictMode(func() { net.Forward(inputs[0]) }) // infer deferred shapes
			perturbZeros(gluon.CollectParams(net))
			onnxtest.RoundTrip(t, c.name, net, c.shape, c.opts, inputs...)
		})
	}
}

// TestExportLayersExtraMulti exports the two-input distance layers and an
// EmbeddingBag with per-sample weights through ExportMulti, and compares
// the loaded models with the layers at the example's batch and another.
func TestExportLayersExtraMulti(t *testing.T) {
	dev := ctx.CPU(0)
	rnd := func(seed uint64, shape ...int) *nd.NDArray {
		nd.Seed(seed)
		return nd.RandomNormal(dev, nd.Float32, 0, 1, shape...)
	}
	bagIDs := func(n int) *nd.NDArray {
		nd.Seed(uint64(n))
		return nd.RandomInt(dev, nd.Int64, 0, 8, n, 4)
	}
	for _, c := range []struct {
		name   string
		net    func() gluon.Component
		inputs []onnx.ExportInput
		run    func(n int) []*nd.NDArray
	}{
		{"extra-pdist-p2", func() gluon.Component { return nn.NewPairwiseDistance(2, 1e-6, false) },
			[]onnx.ExportInput{{Name: "x1", Shape: []int{3, 5}}, {Name: "x2", Shape: []int{3, 5}}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{rnd(1, n, 5), rnd(2, n, 5)} }},
		{"extra-pdist-p1-keepdim", func() gluon.Component { return nn.NewPairwiseDistance(1, 1e-6, true) },
			[]onnx.ExportInput{{Name: "x1", Shape: []int{3, 5}}, {Name: "x2", Shape: []int{3, 5}}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{rnd(3, n, 5), rnd(4, n, 5)} }},
		{"extra-pdist-pinf", func() gluon.Component { return nn.NewPairwiseDistance(math.Inf(1), 0, false) },
			[]onnx.ExportInput{{Name: "x1", Shape: []int{3, 5}}, {Name: "x2", Shape: []int{3, 5}}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{rnd(5, n, 5), rnd(6, n, 5)} }},
		{"extra-pdist-p3", func() gluon.Component { return nn.NewPairwiseDistance(3, 1e-6, false) },
			[]onnx.ExportInput{{Name: "x1", Shape: []int{3, 2, 5}}, {Name: "x2", Shape: []int{3, 2, 5}}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{rnd(7, n, 2, 5), rnd(8, n, 2, 5)} }},
		{"extra-cosine", func() gluon.Component { return nn.NewCosineSimilarity(1, 1e-8) },
			[]onnx.ExportInput{{Name: "x1", Shape: []int{3, 4, 2}}, {Name: "x2", Shape: []int{3, 4, 2}}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{rnd(9, n, 4, 2), rnd(10, n, 4, 2)} }},
		{"extra-cosine-broadcast", func() gluon.Component { return nn.NewCosineSimilarity(-1, 1e-8) },
			[]onnx.ExportInput{{Name: "x1", Shape: []int{3, 5}}, {Name: "x2", Shape: []int{1, 5}, NoBatch: true}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{rnd(11, n, 5), rnd(12, 1, 5)} }},
		{"extra-embeddingbag-psw", func() gluon.Component { return nn.NewEmbeddingBag(8, 3, "sum").WithPadding(2) },
			[]onnx.ExportInput{{Name: "ids", Example: bagIDs(3)}, {Omitted: true}, {Name: "psw", Shape: []int{3, 4}}},
			func(n int) []*nd.NDArray { return []*nd.NDArray{bagIDs(n), rnd(13, n, 4)} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(11)
			net := c.net()
			if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			dir := os.Getenv(onnxtest.ExportDirEnv)
			if dir == "" {
				dir = t.TempDir()
			}
			path := filepath.Join(dir, c.name+".onnx")
			if err := onnx.SaveMulti(path, net, c.inputs, onnx.ExportOpts{}); err != nil {
				t.Fatal(err)
			}
			m, err := onnx.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{3, 5} {
				xs := c.run(n)
				full := make([]*nd.NDArray, len(c.inputs))
				k := 0
				for i, in := range c.inputs {
					if !in.Omitted {
						full[i] = xs[k]
						k++
					}
				}
				var want, got []*nd.NDArray
				autograd.PredictMode(func() {
					want = gluon.Call(net, full...)
					got = m.ForwardMulti(xs...)
				})
				if rel := numcmp.RelL2(got[0].Float32s(), want[0].Float32s()); !(rel < 1e-5) {
					t.Errorf("batch %d: relative difference %.3g", n, rel)
				}
				if n == 5 && os.Getenv(onnxtest.ExportDirEnv) != "" {
					var names []string
					for _, in := range c.inputs {
						if !in.Omitted {
							names = append(names, in.Name)
						}
					}
					if err := onnxtest.WriteIOMulti(filepath.Join(dir, c.name+".io.json"), names, xs, []string{"output0"}, want[:1]); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// TestExportLayersExtraErrors: an EmbeddingBag given offsets has no ONNX
// form, and says to give 2-D bags.
func TestExportLayersExtraErrors(t *testing.T) {
	dev := ctx.CPU(0)
	bag := nn.NewEmbeddingBag(8, 3, "mean")
	if err := gluon.Initialize(bag, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	_, err := onnx.ExportMulti(bag, []onnx.ExportInput{
		{Name: "ids", Example: nd.FromSlice(dev, []int64{1, 2, 3, 4}, 4), NoBatch: true},
		{Name: "offsets", Example: nd.FromSlice(dev, []int64{0, 2}, 2)},
	}, onnx.ExportOpts{})
	if err == nil || !strings.Contains(err.Error(), "2-D") {
		t.Errorf("offsets: %v, want an error asking for 2-D bags", err)
	}
}

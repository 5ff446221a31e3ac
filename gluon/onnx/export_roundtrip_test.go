package onnx_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// exportNet is a network the export round trip covers, with an input
// shape; fixed keeps the first dimension (a sequence's length in TNC
// layout, which a causal mask fixes).
type exportNet struct {
	name  string
	net   func() gluon.Block
	shape []int
	fixed bool
	axis  int // the batch axis (1 for TNC sequences)
}

// exportNets are the networks the export round trip covers.
func exportNets() []exportNet {
	return []exportNet{
		{"lenet", func() gluon.Block { return modelzoo.LeNet() }, []int{3, 1, 28, 28}, false, 0},
		{"keras-cifar-cnn", func() gluon.Block { return modelzoo.KerasCIFARCNN() }, []int{2, 3, 32, 32}, false, 0},
		{"mlp", func() gluon.Block { return modelzoo.MLP(10, 32, 16) }, []int{4, 20}, false, 0},
		{"inception-like", func() gluon.Block {
			// Concurrent branches (MiniGoogLeNet's module), BatchNorm
			// without scale, average pooling counting and excluding pads.
			branch := func(k int) gluon.Block {
				return nn.NewSequential(nn.NewConv2D(4, k, nn.Conv2DOpts{Pad: [2]int{k / 2, k / 2}}),
					nn.NewBatchNorm(nn.BatchNormOpts{NoScale: true}), nn.NewActivation("relu"))
			}
			return nn.NewSequential(
				nn.NewConcurrent(branch(1), branch(3)),
				nn.NewAvgPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}),
				nn.NewConv2D(6, 3, nn.Conv2DOpts{Groups: 2, Stride: [2]int{2, 2}, Dilate: [2]int{1, 1}, Act: "tanh"}),
				nn.NewAvgPool2D(2, nn.PoolOpts{Pad: [2]int{1, 1}, ExcludePad: true, CeilMode: true}),
				nn.NewActivation("gelu"),
				nn.NewGlobalMaxPool2D(),
				nn.NewDropout(0.5),
				nn.NewFlatten(),
				nn.NewDense(5, nn.DenseOpts{Act: "sigmoid"}),
			)
		}, []int{2, 3, 12, 12}, false, 0},
		{"ceil-pools", func() gluon.Block {
			// PyTorch's ceil mode on a 5×8 map: a window that would start in
			// the bottom padding is dropped (5 rows → 2), a partial one at
			// the right is kept (8 columns → 5); ONNX's own formula before
			// opset 19 keeps both. Then pools where every axis drops one.
			return nn.NewSequential(
				nn.NewConv2D(4, 1, nn.Conv2DOpts{}),
				nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{3, 2}, Pad: [2]int{1, 1}, CeilMode: true}),
				nn.NewConv2D(4, 1, nn.Conv2DOpts{}),
				nn.NewAvgPool2D(2, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}),
				nn.NewAvgPool2D(2, nn.PoolOpts{Stride: [2]int{1, 1}, ExcludePad: true, CeilMode: true}),
			)
		}, []int{2, 3, 5, 8}, false, 0},
		{"ceil-pools-partial", func() gluon.Block {
			// Partial windows averaged counting the padding (ONNX divides
			// them by the whole kernel), and a max pool whose one axis
			// drops a window with too little padding to shrink.
			return nn.NewSequential(
				nn.NewAvgPool2D(2, nn.PoolOpts{Stride: [2]int{2, 2}, CeilMode: true}), // 5×7 → 3×4
				nn.NewConv2D(4, 1, nn.Conv2DOpts{}),
				nn.NewAvgPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}), // 3×4 → 2×3
				nn.NewMaxPool2D(2, nn.PoolOpts{Stride: [2]int{3, 2}, CeilMode: true}),                    // 2×3 → 1×2
			)
		}, []int{2, 3, 5, 7}, false, 0},
		{"ceil-max-crop", func() gluon.Block {
			return nn.NewMaxPool2D(2, nn.PoolOpts{Stride: [2]int{3, 2}, CeilMode: true}) // 6×5 → 2×3: rows drop a window, columns keep one
		}, []int{1, 2, 6, 5}, false, 0},
		{"norm-axes", func() gluon.Block {
			// Normalisations of other axes than ONNX's (moved there and
			// back), a LayerNorm with neither scale nor shift, and an
			// adaptive pooling whose output divides the input.
			last, minus3 := -1, -3
			return nn.NewSequential(
				nn.NewBatchNorm(nn.BatchNormOpts{Axis: &last}),
				nn.NewBatchNorm(nn.BatchNormOpts{Axis: &minus3}),
				nn.NewLayerNorm(2, nn.NormOpts{}),
				nn.NewLayerNorm(-1, nn.NormOpts{NoScale: true, NoCenter: true}),
				nn.NewAdaptiveAvgPool2D(2, 3),
				nn.NewAdaptiveAvgPool2D(3, 2), // windows that overlap
				nn.NewAdaptiveAvgPool2D(5, 4), // larger than the input
			)
		}, []int{2, 3, 4, 6}, false, 0},
		{"adaptive-max", func() gluon.Block {
			return nn.NewSequential(
				nn.NewAdaptiveMaxPool2D(7, 6), // the input's size
				nn.NewAdaptiveMaxPool2D(3, 4), // windows that overlap
				nn.NewAdaptiveMaxPool2D(5, 2),
				nn.NewAdaptiveMaxPool2D(1, 1),
			)
		}, []int{2, 3, 7, 6}, false, 0},
		{"adaptive-max-even", func() gluon.Block { return nn.NewAdaptiveMaxPool2D(2, 3) }, []int{1, 2, 4, 6}, false, 0},
		{"activations-more", func() gluon.Block {
			return nn.NewSequential(nn.NewDense(6, nn.DenseOpts{InUnits: 5, Act: "relu6"}), nn.NewActivation("hardtanh"),
				nn.NewActivation("logsigmoid"), nn.NewActivation("tanhshrink"), nn.NewActivation("celu"))
		}, []int{3, 5}, false, 0},
		{"volumes", func() gluon.Block {
			// 3-D convolutions and pooling on [N, C, D, H, W] clips.
			return nn.NewSequential(
				nn.NewConv3D(4, [3]int{3, 3, 2}, nn.Conv3DOpts{Pad: [3]int{1, 1, 0}, Act: "relu"}),
				nn.NewMaxPool3D([3]int{2, 2, 2}, nn.Pool3DOpts{}),
				nn.NewConv3D(4, [3]int{2, 2, 2}, nn.Conv3DOpts{Stride: [3]int{1, 2, 1}, Dilate: [3]int{2, 1, 1}, Groups: 2}),
				nn.NewAvgPool3D([3]int{1, 2, 2}, nn.Pool3DOpts{Stride: [3]int{1, 1, 2}, Pad: [3]int{0, 1, 1}, ExcludePad: true}),
				nn.NewConv3DTranspose(3, [3]int{2, 3, 2}, nn.Conv3DTransposeOpts{Stride: [3]int{2, 1, 2}, Pad: [3]int{1, 1, 0}, OutputPad: [3]int{1, 0, 1}, Act: "tanh"}),
				nn.NewMaxPool3D([3]int{2, 2, 2}, nn.Pool3DOpts{Stride: [3]int{3, 2, 2}, CeilMode: true}),
				nn.NewAvgPool3D([3]int{2, 3, 2}, nn.Pool3DOpts{Stride: [3]int{2, 2, 2}, Pad: [3]int{1, 1, 0}, CeilMode: true}),
				nn.NewGlobalAvgPool3D(),
				nn.NewFlatten(),
				nn.NewDense(3, nn.DenseOpts{}),
			)
		}, []int{2, 2, 6, 7, 8}, false, 0},
		{"conv1d-norms", func() gluon.Block {
			// Sequences with channels: 1-D convolutions, PReLU, instance
			// and group normalisation.
			return nn.NewSequential(
				nn.NewConv1D(4, 3, nn.Conv1DOpts{Stride: 2, Pad: 1, Act: "relu"}),
				nn.NewPReLU(4),
				nn.NewInstanceNorm(nn.NormOpts{}),
				nn.NewConv1D(6, 3, nn.Conv1DOpts{Dilate: 2, Groups: 2}),
				nn.NewGroupNorm(3, nn.NormOpts{Epsilon: 1e-3}),
				nn.NewFlatten(),
				nn.NewDense(5, nn.DenseOpts{}),
				nn.NewPReLU(5),
			)
		}, []int{2, 3, 16}, false, 0},
		{"transposed-decoder", func() gluon.Block {
			// A decoder: transposed convolutions with output padding and
			// groups, normalisations without scale or shift.
			return nn.NewSequential(
				nn.NewConv2DTranspose(6, 3, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, OutputPad: [2]int{1, 1}, Groups: 2, Act: "tanh"}),
				nn.NewInstanceNorm(nn.NormOpts{NoScale: true}),
				nn.NewGroupNorm(3, nn.NormOpts{NoCenter: true}),
				nn.NewPReLU(6),
				nn.NewConv2DTranspose(2, 2, nn.Conv2DTransposeOpts{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}, Dilate: [2]int{2, 1}}),
			)
		}, []int{2, 4, 5, 5}, false, 0},
		{"upsampling", func() gluon.Block {
			// A decoder's resizes: nearest ×2, bilinear to a size, bilinear
			// with aligned corners by a scale that does not divide evenly.
			return nn.NewSequential(
				nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{2, 2}}),
				nn.NewConv2D(3, 1, nn.Conv2DOpts{}),
				nn.NewUpsample(nd.InterpolateOpts{Size: [2]int{7, 9}, Mode: nd.InterpBilinear}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{1.5, 0.5}, Mode: nd.InterpBilinear, AlignCorners: true}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{2, 3}, Mode: nd.InterpBilinear}),
			)
		}, []int{2, 3, 5, 5}, false, 0},
		{"upsampling-odd-scales", func() gluon.Block {
			// Scales whose float32 form gives another size (10 × 0.7 is 6.9999995).
			return nn.NewSequential(
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{0.7, 1.3}, Mode: nd.InterpBilinear}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{1.3, 0.7}}),
			)
		}, []int{2, 2, 10, 10}, false, 0},
		{"upsampling-taps", func() gluon.Block {
			// Resizes written as gathers: an axis that keeps its size
			// (bilinear copies it, nearest of several channels does not),
			// a scale that rounds the size down, antialiased shrinking.
			return nn.NewSequential(
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{1.1, 1.7}, Mode: nd.InterpBilinear}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{1.1, 1.7}}),
				nn.NewUpsample(nd.InterpolateOpts{Size: [2]int{4, 9}, Mode: nd.InterpBilinear, Antialias: true}),
				nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{1.01, 1.01}, Mode: nd.InterpBilinear}),
			)
		}, []int{2, 2, 7, 9}, false, 0},
		{"upsampling-one-channel", func() gluon.Block {
			// Nearest on one channel copies an axis that keeps its size.
			return nn.NewUpsample(nd.InterpolateOpts{Scale: [2]float64{1.1, 1.7}})
		}, []int{2, 1, 5, 5}, false, 0},
		{"resnet18", func() gluon.Block { return vision.ResNet18(vision.Options{Classes: 10, Width: 8}) }, []int{2, 3, 32, 32}, false, 0},
		{"resnet50", func() gluon.Block { return vision.ResNet50(vision.Options{Classes: 10, Width: 4}) }, []int{2, 3, 32, 32}, false, 0},
		{"mobilenetv2", func() gluon.Block {
			return vision.NewMobileNetV2(vision.Options{Classes: 10, Width: 16})
		}, []int{2, 3, 32, 32}, false, 0},
		{"vgg11-bn", func() gluon.Block {
			return vision.VGG11(true, vision.Options{Classes: 10, Width: 4, Hidden: 32})
		}, []int{1, 3, 224, 224}, false, 0},
		{"vit", func() gluon.Block {
			return vision.NewViT(vision.ViTOptions{Options: vision.Options{Classes: 10}, ImageSize: 32, PatchSize: 8, Layers: 2, Heads: 2, HiddenDim: 16, MLPDim: 32})
		}, []int{2, 3, 32, 32}, false, 0},
		{"transformer-causal", func() gluon.Block {
			// GPT-style blocks on [T, N, E] sequences: pre-norm, causal,
			// GELU; then a post-norm layer in NTC with ReLU.
			return nn.NewSequential(
				nn.NewDense(16, nn.DenseOpts{NoFlatten: true}),
				nn.NewTransformerEncoderLayer(16, 4, nn.TransformerOpts{FeedForward: 32, NormFirst: true, Activation: "gelu", Causal: true, Dropout: 0.1}),
				nn.NewLayerNorm(-1, nn.NormOpts{}),
				nn.NewGELU(true),
				nn.NewDense(8, nn.DenseOpts{NoFlatten: true}),
			)
		}, []int{6, 2, 12}, true, 0},
		{"recurrent-tnc", func() gluon.Block {
			// Stacked and bidirectional LSTM, then a GRU and a ReLU RNN, on
			// [T, N, C] sequences.
			return nn.NewSequential(
				rnn.NewLSTM(6, rnn.Opts{NumLayers: 2, Bidirectional: true, Dropout: 0.2}),
				rnn.NewGRU(5, rnn.Opts{}),
				rnn.NewLayer(rnn.RNNReLU, 4, rnn.Opts{Bidirectional: true}),
			)
		}, []int{7, 3, 4}, false, 1},
		{"recurrent-ntc", func() gluon.Block {
			// Batch-first: a bidirectional GRU and a tanh RNN.
			return nn.NewSequential(
				rnn.NewGRU(5, rnn.Opts{Bidirectional: true, Layout: "NTC"}),
				rnn.NewRNN(3, rnn.Opts{Layout: "NTC", NumLayers: 2}),
			)
		}, []int{3, 6, 4}, false, 0},
		{"transformer-tnc", func() gluon.Block {
			// The layers' default layout: batch axis 1, free.
			return nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16})
		}, []int{5, 2, 8}, false, 1},
		{"seq-pools-activations", func() gluon.Block {
			return nn.NewSequential(
				nn.NewConv1D(4, 3, nn.Conv1DOpts{Pad: 1}),
				nn.NewMaxPool1D(2, nn.Pool1DOpts{CeilMode: true}),
				nn.NewActivation("hardswish"),
				nn.NewAvgPool1D(3, nn.Pool1DOpts{Stride: 1, Pad: 1, ExcludePad: true}),
				nn.NewAvgPool1D(2, nn.Pool1DOpts{Pad: 1, CeilMode: true}),
				nn.NewGlobalAvgPool1D(),
				nn.NewFlatten(),
				nn.NewDense(8, nn.DenseOpts{Act: "selu"}),
				nn.NewMish(),
				nn.NewIdentity(),
				nn.NewSoftsign(),
				nn.NewHardSigmoid(),
				nn.NewDense(3, nn.DenseOpts{}),
			)
		}, []int{2, 3, 9}, false, 0},
		{"ceil-big-window-max", func() gluon.Block {
			// Ceil mode with a window larger than the padded input (one
			// clipped window, as PyTorch).
			return nn.NewSequential(nn.NewMaxPool1D(6, nn.Pool1DOpts{CeilMode: true}))
		}, []int{2, 3, 2}, false, 0},
		{"ceil-big-window-avg", func() gluon.Block {
			return nn.NewSequential(nn.NewAvgPool1D(5, nn.Pool1DOpts{Stride: 5, Pad: 1, CeilMode: true}))
		}, []int{2, 3, 2}, false, 0},
		{"pads-pixelshuffle", func() gluon.Block {
			return nn.NewSequential(
				nn.NewConv2D(8, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}}),
				nn.NewReflectionPad2D([4]int{1, 2, 0, 1}),
				nn.NewReplicationPad2D([4]int{0, 1, 2, 0}),
				nn.NewConstantPad2D([4]int{1, 0, 1, 1}, 0.5),
				nn.NewPixelShuffle2D(2),
				nn.NewConv2D(2, 1, nn.Conv2DOpts{}),
			)
		}, []int{2, 3, 5, 6}, false, 0},
		{"transformer-ntc", func() gluon.Block {
			return nn.NewSequential(
				nn.NewTransformerEncoderLayer(12, 3, nn.TransformerOpts{FeedForward: 24, Layout: "NTC"}),
				nn.NewLeakyReLU(0.1),
				nn.NewELU(0.5),
				nn.NewSiLU(),
			)
		}, []int{2, 5, 12}, false, 0},
	}
}

// perturbZeros gives weights that start at zero (a ViT's head, its class
// token) random values, so that the comparisons see every part of the
// network (a zero head makes every output zero).
func perturbZeros(params *gluon.ParamDict) {
	for _, p := range params.List() {
		if !p.Initialized() || p.Statistic {
			continue
		}
		w := p.ListData()[0]
		if slices.ContainsFunc(w.Float64s(), func(v float64) bool { return v != 0 }) {
			continue
		}
		p.SetData(nd.RandomNormal(w.Context(), w.DType(), 0, 0.1, w.Shape()...))
	}
}

// TestExportRoundTrip exports each network, loads the file with Load and
// compares the outputs with the network's own in predict mode (1e-5
// relative), with a batch size other than the example's too (the batch
// dimension is free). With GOLUON_ONNX_EXPORT_DIR set the files stay
// there (make onnx-check runs ONNX's own checker on them).
func TestExportRoundTrip(t *testing.T) {
	dev := ctx.CPU(0)
	for _, tc := range exportNets() {
		t.Run(tc.name, func(t *testing.T) {
			nd.Seed(5)
			net := tc.net()
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			// Train-mode passes give the running statistics other values
			// than their initial ones.
			autograd.Record(func() {
				for range 3 {
					net.Forward(nd.RandomNormal(dev, nd.Float32, 0.5, 2, tc.shape...))
				}
			})
			perturbZeros(params)
			batches := []int{tc.shape[tc.axis], tc.shape[tc.axis] + 3}
			if tc.fixed {
				batches = batches[:1]
			}
			var inputs []*nd.NDArray
			for _, batch := range batches {
				shape := slices.Clone(tc.shape)
				shape[tc.axis] = batch
				inputs = append(inputs, nd.RandomNormal(dev, nd.Float32, 0, 1, shape...))
			}
			onnxtest.RoundTrip(t, tc.name, net, tc.shape, onnx.ExportOpts{FixedBatch: tc.fixed, BatchAxis: tc.axis}, inputs...)
		})
	}
}

// TestExportErrors: a block without an ONNX form is named; a failing
// example pass and an unwritable path are errors, the latter leaving no
// file.
func TestExportErrors(t *testing.T) {
	dev := ctx.CPU(0)
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{}), &noForm{gluon.NewBlockMeta("mystery")})
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	_, err := onnx.Export(net, []int{2, 4}, onnx.ExportOpts{})
	if err == nil || !strings.Contains(err.Error(), "mystery") || !strings.Contains(err.Error(), "gluon.ONNXExporter") {
		t.Errorf("unexportable block: %v", err)
	}
	// A type that embeds an exportable block but computes something else
	// gets the embedded form: Export's check against Forward refuses it.
	doubled := &doubledSeq{nn.NewSequential(nn.NewDense(3, nn.DenseOpts{}))}
	if err := gluon.CollectParams(doubled).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := onnx.Export(doubled, []int{2, 4}, onnx.ExportOpts{}); err == nil || !strings.Contains(err.Error(), "does not match its Forward") {
		t.Errorf("a form that does not match Forward: %v", err)
	}
	lenet := modelzoo.LeNet()
	_ = gluon.CollectParams(lenet).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false)
	if _, err := onnx.Export(lenet, []int{2, 3, 5}, onnx.ExportOpts{}); err == nil {
		t.Error("an input shape the network rejects exported")
	}
	path := filepath.Join(t.TempDir(), "missing", "lenet.onnx")
	if err := onnx.Save(path, lenet, []int{1, 1, 28, 28}, onnx.ExportOpts{}); err == nil {
		t.Error("saving into a missing directory succeeded")
	} else if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a failed save left %s", path)
	}
}

// noForm is a block with no ONNX form.
type noForm struct{ gluon.BlockMeta }

func (*noForm) Forward(x *nd.NDArray) *nd.NDArray { return x }

// doubledSeq embeds a Sequential (and so its ExportONNX) but doubles its
// output.
type doubledSeq struct{ *nn.Sequential }

func (d *doubledSeq) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.MulScalar(d.Sequential.Forward(x), 2)
}

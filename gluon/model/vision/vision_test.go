package vision_test

import (
	"math"
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
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// zoo is every model of the package in the small configuration of
// testdata/make_fixtures.py (no dropout, no stochastic depth).
var zoo = []struct {
	name  string
	build func() vision.Headed
}{
	{"resnet18", func() vision.Headed { return vision.ResNet18(vision.Options{Classes: 10, Width: 8}) }},
	{"resnet34", func() vision.Headed { return vision.ResNet34(vision.Options{Classes: 10, Width: 4}) }},
	{"resnet50", func() vision.Headed { return vision.ResNet50(vision.Options{Classes: 10, Width: 4}) }},
	{"mobilenetv2", func() vision.Headed {
		return vision.NewMobileNetV2(vision.Options{Classes: 10, Width: 16, Dropout: -1})
	}},
	{"vgg11", func() vision.Headed {
		return vision.VGG11(false, vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
	{"vgg11_bn", func() vision.Headed {
		return vision.VGG11(true, vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
	{"vgg16", func() vision.Headed {
		return vision.VGG16(false, vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
	{"vgg16_bn", func() vision.Headed {
		return vision.VGG16(true, vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
	{"vit", func() vision.Headed {
		return vision.NewViT(vision.ViTOptions{Options: vision.Options{Classes: 10}, ImageSize: 32, PatchSize: 8, Layers: 2, Heads: 2, HiddenDim: 16, MLPDim: 32})
	}},
	{"resnet101", func() vision.Headed { return vision.ResNet101(vision.Options{Classes: 10, Width: 2}) }},
	{"resnet152", func() vision.Headed { return vision.ResNet152(vision.Options{Classes: 10, Width: 2}) }},
	{"resnext50_32x4d", func() vision.Headed {
		return vision.ResNeXt50_32x4d(vision.Options{Classes: 10, Width: 4, Groups: 4, WidthPerGroup: 16})
	}},
	{"resnext101_32x8d", func() vision.Headed {
		return vision.ResNeXt101_32x8d(vision.Options{Classes: 10, Width: 2, Groups: 4, WidthPerGroup: 32})
	}},
	{"wide_resnet50_2", func() vision.Headed { return vision.WideResNet50_2(vision.Options{Classes: 10, Width: 2}) }},
	{"wide_resnet101_2", func() vision.Headed { return vision.WideResNet101_2(vision.Options{Classes: 10, Width: 1}) }},
	{"mobilenet_v3_large", func() vision.Headed {
		return vision.MobileNetV3Large(vision.Options{Classes: 10, Width: 8, Dropout: -1})
	}},
	{"mobilenet_v3_small", func() vision.Headed {
		return vision.MobileNetV3Small(vision.Options{Classes: 10, Width: 8, Dropout: -1})
	}},
	{"densenet121", func() vision.Headed { return vision.DenseNet121(vision.Options{Classes: 10, Width: 6}) }},
	{"efficientnet_b0", func() vision.Headed {
		return vision.EfficientNetB0(vision.Options{Classes: 10, Width: 8, Dropout: -1, StochasticDepth: -1})
	}},
	{"convnext_tiny", func() vision.Headed {
		return vision.ConvNeXtTiny(vision.Options{Classes: 10, Width: 4, StochasticDepth: -1})
	}},
	{"alexnet", func() vision.Headed {
		return vision.NewAlexNet(vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
	{"squeezenet1_0", func() vision.Headed { return vision.SqueezeNet1_0(vision.Options{Classes: 10, Width: 16, Dropout: -1}) }},
	{"squeezenet1_1", func() vision.Headed { return vision.SqueezeNet1_1(vision.Options{Classes: 10, Width: 16, Dropout: -1}) }},
	{"swin_t", func() vision.Headed {
		return vision.NewSwin(vision.SwinOptions{Options: vision.Options{Classes: 10, Width: 8, StochasticDepth: -1},
			WindowSize: 4, Heads: [4]int{1, 2, 4, 8}})
	}},
	{"regnet_y_400mf", func() vision.Headed {
		return vision.NewRegNet(vision.RegNetParams{Depth: 6, W0: 8, WA: 8, WM: 2, GroupWidth: 8, SERatio: 0.25},
			vision.Options{Classes: 10, Width: 8})
	}},
	{"regnet_x_400mf", func() vision.Headed {
		return vision.NewRegNet(vision.RegNetParams{Depth: 7, W0: 8, WA: 8, WM: 2, GroupWidth: 4}, vision.Options{Classes: 10, Width: 8})
	}},
	{"shufflenet_v2_x1_0", func() vision.Headed {
		return vision.NewShuffleNetV2([3]int{4, 8, 4}, [5]int{8, 16, 32, 64, 128}, vision.Options{Classes: 10})
	}},
	{"mnasnet1_0", func() vision.Headed { return vision.MNASNet1_0(vision.Options{Classes: 10, Width: 8, Dropout: -1}) }},
	{"googlenet", func() vision.Headed {
		return vision.NewGoogLeNet(vision.InceptionOptions{Options: vision.Options{Classes: 10, Width: 8, Dropout: -1}, AuxLogits: new(true)})
	}},
	{"inception_v3", func() vision.Headed {
		return vision.NewInceptionV3(vision.InceptionOptions{Options: vision.Options{Classes: 10, Width: 4, Dropout: -1}})
	}},
	{"efficientnet_v2_s", func() vision.Headed {
		return vision.EfficientNetV2S(vision.Options{Classes: 10, Width: 4, Dropout: -1, StochasticDepth: -1})
	}},
	{"vgg13_bn", func() vision.Headed {
		return vision.VGG13(true, vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
	{"vgg19", func() vision.Headed {
		return vision.VGG19(false, vision.Options{Classes: 10, Width: 4, Hidden: 32, Dropout: -1})
	}},
}

// inputSize is the side of the random images a test feeds the zoo's
// model name: 32, AlexNet's smallest, 63, Inception v3's, 75, or 48 for
// Swin (whose windows of 4 then shift and pad).
func inputSize(name string) int {
	switch name {
	case "alexnet":
		return 63
	case "inception_v3":
		return 75
	case "swin_t":
		return 48
	}
	return 32
}

// replaceHead calls net's ReplaceHead (a Model's, or SqueezeNet's).
func replaceHead(t *testing.T, net vision.Headed, classes int) {
	t.Helper()
	switch n := net.(type) {
	case vision.Model:
		n.ReplaceHead(classes)
	case *vision.SqueezeNet:
		n.ReplaceHead(classes)
	default:
		t.Fatalf("%T has no ReplaceHead", net)
	}
}

func readIO(t *testing.T, name string) (in []float32, inShape []int, eval, train []float32) {
	in, inShape, eval, train, _ = readIO64(t, name)
	return
}

// readIO64 is readIO with the float64 training-mode output.
func readIO64(t *testing.T, name string) (in []float32, inShape []int, eval, train []float32, train64 []float64) {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join("testdata", name+"_io.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(k string) []float32 {
		v, err := f.Tensors[k].Float32s()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	t64, err := f.Tensors["train64"].Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return get("input"), f.Tensors["input"].Shape, get("eval"), get("train"), t64
}

// relErr64 is relErr against a float64 reference.
func relErr64(a []float32, b []float64) float64 {
	var d, m float64
	for i := range b {
		d = max(d, math.Abs(float64(a[i])-b[i]))
		m = max(m, math.Abs(b[i]))
	}
	return d / m
}

// relErr is max|a−b| / max|b|.
func relErr(a, b []float32) float64 {
	var d, m float64
	for i := range b {
		d = max(d, math.Abs(float64(a[i]-b[i])))
		m = max(m, math.Abs(float64(b[i])))
	}
	return d / m
}

// TestMatchesTorchvision: every model, with torchvision's state dict
// loaded, gives torchvision's outputs within 1e-4 relative in predict mode;
// its parameter names and shapes are the state dict's keys and shapes
// (but the buffers it computes: BatchNorm's counters, Swin's position
// indices). In
// training mode BatchNorm normalises with the statistics of this small
// batch, which amplifies float32 rounding (torch's own float32 output is
// up to 4e-5 from its float64 one here): Goluon's float32 output must be
// within 1e-4 of torch's float64 one, or within 10 times torch's own
// float32 error where that is larger.
func TestMatchesTorchvision(t *testing.T) {
	dev := ctx.CPU(0)
	for _, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			net := m.build()
			params := gluon.CollectParams(net)
			path := filepath.Join("testdata", m.name+".safetensors")
			f, err := safetensors.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range f.Names() {
				if !strings.HasSuffix(k, ".num_batches_tracked") && !strings.HasSuffix(k, ".relative_position_index") {
					keys = append(keys, k)
				}
			}
			names := params.Names()
			slices.Sort(names)
			slices.Sort(keys)
			if !slices.Equal(names, keys) {
				t.Fatalf("parameter names differ from the state dict's:\n goluon %v\n torch  %v", names, keys)
			}
			for _, k := range keys {
				if p := params.Get(k); !slices.Equal(p.Shape(), f.Tensors[k].Shape) {
					t.Errorf("%s: shape %v, torch %v", k, p.Shape(), f.Tensors[k].Shape)
				}
			}
			if err := vision.LoadStateDict(params, path, []ctx.Context{dev}); err != nil {
				t.Fatal(err)
			}
			in, shape, eval, train, train64 := readIO64(t, m.name)
			x := nd.FromSlice(dev, in, shape...)
			var gotEval, gotTrain []float32
			autograd.PredictMode(func() { gotEval = net.Forward(x).Float32s() })
			autograd.TrainMode(func() { gotTrain = net.Forward(x).Float32s() })
			eEval := relErr(gotEval, eval)
			if eEval > 1e-4 {
				t.Errorf("predict mode: relative error %.3g", eEval)
			}
			torchErr := relErr64(train, train64)
			eTrain := relErr64(gotTrain, train64)
			if eTrain > max(1e-4, 10*torchErr) {
				t.Errorf("training mode: relative error %.3g against torch's float64 output (torch's float32: %.3g)", eTrain, torchErr)
			}
			t.Logf("relative error: predict mode %.3g, training mode %.3g (torch's float32: %.3g)", eEval, eTrain, torchErr)
		})
	}
}

// fullZoo is every model at torchvision's default size, in the order of
// make_fixtures.py, with torchvision 0.14's parameter count (the
// parameters' elements, buffers not counted: sum(p.numel() for p in
// m.parameters())).
var fullZoo = []struct {
	name   string
	params int
	build  func() vision.Headed
}{
	{"resnet18", 11689512, func() vision.Headed { return vision.ResNet18(vision.Options{}) }},
	{"resnet34", 21797672, func() vision.Headed { return vision.ResNet34(vision.Options{}) }},
	{"resnet50", 25557032, func() vision.Headed { return vision.ResNet50(vision.Options{}) }},
	{"mobilenetv2", 3504872, func() vision.Headed { return vision.NewMobileNetV2(vision.Options{Dropout: -1}) }},
	{"vgg11", 132863336, func() vision.Headed { return vision.VGG11(false, vision.Options{Dropout: -1}) }},
	{"vgg11_bn", 132868840, func() vision.Headed { return vision.VGG11(true, vision.Options{Dropout: -1}) }},
	{"vgg16", 138357544, func() vision.Headed { return vision.VGG16(false, vision.Options{Dropout: -1}) }},
	{"vgg16_bn", 138365992, func() vision.Headed { return vision.VGG16(true, vision.Options{Dropout: -1}) }},
	{"vit_b_16", 86567656, func() vision.Headed { return vision.ViTB16(vision.Options{}) }},
	{"resnet101", 44549160, func() vision.Headed { return vision.ResNet101(vision.Options{}) }},
	{"resnet152", 60192808, func() vision.Headed { return vision.ResNet152(vision.Options{}) }},
	{"resnext50_32x4d", 25028904, func() vision.Headed { return vision.ResNeXt50_32x4d(vision.Options{}) }},
	{"resnext101_32x8d", 88791336, func() vision.Headed { return vision.ResNeXt101_32x8d(vision.Options{}) }},
	{"resnext101_64x4d", 83455272, func() vision.Headed { return vision.ResNeXt101_64x4d(vision.Options{}) }},
	{"wide_resnet50_2", 68883240, func() vision.Headed { return vision.WideResNet50_2(vision.Options{}) }},
	{"wide_resnet101_2", 126886696, func() vision.Headed { return vision.WideResNet101_2(vision.Options{}) }},
	{"mobilenet_v3_large", 5483032, func() vision.Headed { return vision.MobileNetV3Large(vision.Options{Dropout: -1}) }},
	{"mobilenet_v3_small", 2542856, func() vision.Headed { return vision.MobileNetV3Small(vision.Options{Dropout: -1}) }},
	{"densenet121", 7978856, func() vision.Headed { return vision.DenseNet121(vision.Options{}) }},
	{"densenet161", 28681000, func() vision.Headed { return vision.DenseNet161(vision.Options{}) }},
	{"densenet169", 14149480, func() vision.Headed { return vision.DenseNet169(vision.Options{}) }},
	{"densenet201", 20013928, func() vision.Headed { return vision.DenseNet201(vision.Options{}) }},
	{"efficientnet_b0", 5288548, func() vision.Headed { return vision.EfficientNetB0(vision.Options{}) }},
	{"efficientnet_b1", 7794184, func() vision.Headed { return vision.EfficientNetB1(vision.Options{}) }},
	{"efficientnet_b2", 9109994, func() vision.Headed { return vision.EfficientNetB2(vision.Options{}) }},
	{"efficientnet_b3", 12233232, func() vision.Headed { return vision.EfficientNetB3(vision.Options{}) }},
	{"efficientnet_b4", 19341616, func() vision.Headed { return vision.EfficientNetB4(vision.Options{}) }},
	{"efficientnet_b5", 30389784, func() vision.Headed { return vision.EfficientNetB5(vision.Options{}) }},
	{"efficientnet_b6", 43040704, func() vision.Headed { return vision.EfficientNetB6(vision.Options{}) }},
	{"efficientnet_b7", 66347960, func() vision.Headed { return vision.EfficientNetB7(vision.Options{}) }},
	{"convnext_tiny", 28589128, func() vision.Headed { return vision.ConvNeXtTiny(vision.Options{}) }},
	{"convnext_small", 50223688, func() vision.Headed { return vision.ConvNeXtSmall(vision.Options{}) }},
	{"convnext_base", 88591464, func() vision.Headed { return vision.ConvNeXtBase(vision.Options{}) }},
	{"convnext_large", 197767336, func() vision.Headed { return vision.ConvNeXtLarge(vision.Options{}) }},
	{"alexnet", 61100840, func() vision.Headed { return vision.NewAlexNet(vision.Options{Dropout: -1}) }},
	{"squeezenet1_0", 1248424, func() vision.Headed { return vision.SqueezeNet1_0(vision.Options{Dropout: -1}) }},
	{"squeezenet1_1", 1235496, func() vision.Headed { return vision.SqueezeNet1_1(vision.Options{Dropout: -1}) }},
	{"swin_t", 28288354, func() vision.Headed { return vision.SwinT(vision.Options{}) }},
	{"swin_s", 49606258, func() vision.Headed { return vision.SwinS(vision.Options{}) }},
	{"swin_b", 87768224, func() vision.Headed { return vision.SwinB(vision.Options{}) }},
	{"regnet_y_400mf", 4344144, func() vision.Headed { return vision.RegNetY400MF(vision.Options{}) }},
	{"regnet_y_800mf", 6432512, func() vision.Headed { return vision.RegNetY800MF(vision.Options{}) }},
	{"regnet_y_1_6gf", 11202430, func() vision.Headed { return vision.RegNetY1_6GF(vision.Options{}) }},
	{"regnet_y_3_2gf", 19436338, func() vision.Headed { return vision.RegNetY3_2GF(vision.Options{}) }},
	{"regnet_y_8gf", 39381472, func() vision.Headed { return vision.RegNetY8GF(vision.Options{}) }},
	{"regnet_y_16gf", 83590140, func() vision.Headed { return vision.RegNetY16GF(vision.Options{}) }},
	{"regnet_y_32gf", 145046770, func() vision.Headed { return vision.RegNetY32GF(vision.Options{}) }},
	{"regnet_y_128gf", 644812894, func() vision.Headed { return vision.RegNetY128GF(vision.Options{}) }},
	{"regnet_x_400mf", 5495976, func() vision.Headed { return vision.RegNetX400MF(vision.Options{}) }},
	{"regnet_x_800mf", 7259656, func() vision.Headed { return vision.RegNetX800MF(vision.Options{}) }},
	{"regnet_x_1_6gf", 9190136, func() vision.Headed { return vision.RegNetX1_6GF(vision.Options{}) }},
	{"regnet_x_3_2gf", 15296552, func() vision.Headed { return vision.RegNetX3_2GF(vision.Options{}) }},
	{"regnet_x_8gf", 39572648, func() vision.Headed { return vision.RegNetX8GF(vision.Options{}) }},
	{"regnet_x_16gf", 54278536, func() vision.Headed { return vision.RegNetX16GF(vision.Options{}) }},
	{"regnet_x_32gf", 107811560, func() vision.Headed { return vision.RegNetX32GF(vision.Options{}) }},
	{"shufflenet_v2_x0_5", 1366792, func() vision.Headed { return vision.ShuffleNetV2X0_5(vision.Options{}) }},
	{"shufflenet_v2_x1_0", 2278604, func() vision.Headed { return vision.ShuffleNetV2X1_0(vision.Options{}) }},
	{"shufflenet_v2_x1_5", 3503624, func() vision.Headed { return vision.ShuffleNetV2X1_5(vision.Options{}) }},
	{"shufflenet_v2_x2_0", 7393996, func() vision.Headed { return vision.ShuffleNetV2X2_0(vision.Options{}) }},
	{"mnasnet0_5", 2218512, func() vision.Headed { return vision.MNASNet0_5(vision.Options{Dropout: -1}) }},
	{"mnasnet0_75", 3170208, func() vision.Headed { return vision.MNASNet0_75(vision.Options{Dropout: -1}) }},
	{"mnasnet1_0", 4383312, func() vision.Headed { return vision.MNASNet1_0(vision.Options{Dropout: -1}) }},
	{"mnasnet1_3", 6282256, func() vision.Headed { return vision.MNASNet1_3(vision.Options{Dropout: -1}) }},
	{"googlenet", 6624904, func() vision.Headed {
		return vision.NewGoogLeNet(vision.InceptionOptions{Options: vision.Options{Dropout: -1}})
	}},
	{"inception_v3", 27161264, func() vision.Headed {
		return vision.NewInceptionV3(vision.InceptionOptions{Options: vision.Options{Dropout: -1}})
	}},
	{"efficientnet_v2_s", 21458488, func() vision.Headed { return vision.EfficientNetV2S(vision.Options{}) }},
	{"efficientnet_v2_m", 54139356, func() vision.Headed { return vision.EfficientNetV2M(vision.Options{}) }},
	{"efficientnet_v2_l", 118515272, func() vision.Headed { return vision.EfficientNetV2L(vision.Options{}) }},
	{"vgg13", 133047848, func() vision.Headed { return vision.VGG13(false, vision.Options{Dropout: -1}) }},
	{"vgg13_bn", 133053736, func() vision.Headed { return vision.VGG13(true, vision.Options{Dropout: -1}) }},
	{"vgg19", 143667240, func() vision.Headed { return vision.VGG19(false, vision.Options{Dropout: -1}) }},
	{"vgg19_bn", 143678248, func() vision.Headed { return vision.VGG19(true, vision.Options{Dropout: -1}) }},
	{"vit_b_32", 88224232, func() vision.Headed { return vision.ViTB32(vision.Options{}) }},
	{"vit_l_16", 304326632, func() vision.Headed { return vision.ViTL16(vision.Options{}) }},
	{"vit_l_32", 306535400, func() vision.Headed { return vision.ViTL32(vision.Options{}) }},
	{"vit_h_14", 632045800, func() vision.Headed { return vision.ViTH14(vision.Options{}) }},
}

// TestFullSizeParameterCounts: every model at its default size has
// torchvision's number of parameters (running statistics not counted),
// the ones torchvision's weights list as num_params. Nothing is
// allocated: the shapes are known without a forward pass.
func TestFullSizeParameterCounts(t *testing.T) {
	for _, m := range fullZoo {
		n := 0
		for _, p := range gluon.CollectParams(m.build()).List() {
			if p.Statistic {
				continue
			}
			size := 1
			for _, d := range p.Shape() {
				size *= d
			}
			n += size
		}
		if n != m.params {
			t.Errorf("%s: %d parameters, torchvision %d", m.name, n, m.params)
		}
	}
}

// TestMatchesTorchvisionFull compares the full-size models with the
// fixtures that `make zoo-full` generates into GOLUON_ZOO_FULL (skipped
// without it; GOLUON_ZOO_FULL_MODELS, a space-separated list, limits it
// to those models).
func TestMatchesTorchvisionFull(t *testing.T) {
	dir := os.Getenv("GOLUON_ZOO_FULL")
	if dir == "" {
		t.Skip("set GOLUON_ZOO_FULL to the fixtures of make_fixtures.py DIR full (make zoo-full)")
	}
	only := strings.Fields(os.Getenv("GOLUON_ZOO_FULL_MODELS"))
	dev := ctx.CPU(0)
	for _, m := range fullZoo {
		if len(only) > 0 && !slices.Contains(only, m.name) {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, m.name+"_io.safetensors")); os.IsNotExist(err) {
				t.Skip("no fixture (make_fixtures.py leaves the largest models to their parameter counts)")
			}
			net := m.build()
			params := gluon.CollectParams(net)
			if err := vision.LoadStateDict(params, filepath.Join(dir, m.name+".safetensors"), []ctx.Context{dev}); err != nil {
				t.Fatal(err)
			}
			f, err := safetensors.ReadFile(filepath.Join(dir, m.name+"_io.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			in, _ := f.Tensors["input"].Float32s()
			want, _ := f.Tensors["eval"].Float32s()
			var got []float32
			autograd.PredictMode(func() { got = net.Forward(nd.FromSlice(dev, in, f.Tensors["input"].Shape...)).Float32s() })
			e := relErr(got, want)
			t.Logf("%s: relative error %.3g", m.name, e)
			if e > 1e-4 {
				t.Errorf("relative error %.3g", e)
			}
		})
	}
}

// TestStateDictRoundTrip: SaveStateDict writes PyTorch's keys, counters
// included, and LoadStateDict reads them back into a fresh model that
// then computes the same outputs; a file with a wrong shape or an unknown
// tensor changes nothing.
func TestStateDictRoundTrip(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	a := vision.ResNet18(vision.Options{Classes: 10, Width: 8})
	pa := gluon.CollectParams(a)
	if err := vision.LoadStateDict(pa, filepath.Join("testdata", "resnet18.safetensors"), dev); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r18.safetensors")
	if err := vision.SaveStateDict(pa, path); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Tensors["layer2.0.downsample.1.num_batches_tracked"]; !ok {
		t.Error("no num_batches_tracked counter for layer2.0.downsample.1")
	}
	if _, ok := f.Tensors["bn1.weight"]; !ok {
		t.Error("BatchNorm's scale is not saved as PyTorch's bn1.weight")
	}
	b := vision.ResNet18(vision.Options{Classes: 10, Width: 8})
	pb := gluon.CollectParams(b)
	if err := vision.LoadStateDict(pb, path, dev); err != nil {
		t.Fatal(err)
	}
	in, shape, _, _ := readIO(t, "resnet18")
	x := nd.FromSlice(dev[0], in, shape...)
	var ya, yb []float32
	autograd.PredictMode(func() { ya, yb = a.Forward(x).Float32s(), b.Forward(x).Float32s() })
	if !slices.Equal(ya, yb) {
		t.Error("the reloaded model computes other outputs")
	}
	// A 34-layer file does not fit an 18-layer model: an error, nothing changed.
	before := pb.Get("fc.weight").Data(dev[0]).Float32s()
	if err := vision.LoadStateDict(pb, filepath.Join("testdata", "resnet34.safetensors"), dev); err == nil {
		t.Error("loading ResNet-34's state dict into ResNet-18 succeeded")
	}
	if !slices.Equal(before, pb.Get("fc.weight").Data(dev[0]).Float32s()) {
		t.Error("a failed load changed the parameters")
	}
}

// TestNewHeadAndFreezing: ReplaceHead gives an initialised classifier of
// the new class count; FreezeAllButHead leaves gradients to it alone, and
// Unfreeze to everything but the running statistics.
func TestNewHeadAndFreezing(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	for _, m := range zoo {
		t.Run(m.name, func(t *testing.T) {
			net := m.build()
			if err := vision.LoadStateDict(gluon.CollectParams(net), filepath.Join("testdata", m.name+".safetensors"), dev); err != nil {
				t.Fatal(err)
			}
			replaceHead(t, net, 3)
			params := gluon.CollectParams(net)
			vision.FreezeAllButHead(net)
			var trainable []string
			for _, p := range params.List() {
				if p.GradReq() != nd.GradNull {
					trainable = append(trainable, p.Name())
				}
			}
			head := net.Head()
			if !slices.Equal(trainable, []string{head + ".weight", head + ".bias"}) {
				t.Fatalf("trainable after freezing: %v", trainable)
			}
			vision.Unfreeze(net)
			for _, p := range params.List() {
				stat := strings.HasSuffix(p.Name(), ".running_mean") || strings.HasSuffix(p.Name(), ".running_var")
				if (p.GradReq() == nd.GradNull) != stat {
					t.Errorf("after Unfreeze %s has GradReq %v", p.Name(), p.GradReq())
				}
			}
			vision.FreezeAllButHead(net)
			in, shape, _, _ := readIO(t, m.name)
			x := nd.FromSlice(dev[0], in, shape...)
			var y *nd.NDArray
			autograd.PredictMode(func() { y = net.Forward(x) })
			if !slices.Equal(y.Shape(), []int{2, 3}) {
				t.Fatalf("output shape %v, want [2 3]", y.Shape())
			}
		})
	}
}

// TestInitialize: a freshly initialised model has BatchNorm scales of one
// and shifts of zero (as torchvision), whatever the initializer passed,
// although they carry PyTorch's names weight and bias.
func TestInitialize(t *testing.T) {
	net := vision.ResNet18(vision.Options{Classes: 10, Width: 8})
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float32{"bn1.weight": 1, "bn1.bias": 0, "layer1.0.bn2.weight": 1, "bn1.running_var": 1, "bn1.running_mean": 0} {
		for _, v := range params.Get(name).Data(ctx.CPU(0)).Float32s() {
			if v != want {
				t.Fatalf("%s holds %v, want %v", name, v, want)
			}
		}
	}
}

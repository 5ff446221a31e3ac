package vision_test

import (
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// TestTrainingSteps trains small models with BatchNorm (EfficientNet,
// DenseNet, MobileNetV3, ResNeXt) or LayerNorm and layer scales
// (ConvNeXt), the first two families with stochastic depth on (its
// default rate, and a high one), for 10 SGD steps on one batch:
// every weight gets a finite gradient, not all zero, the running
// statistics move, and the training-mode loss falls.
func TestTrainingSteps(t *testing.T) {
	dev := ctx.CPU(0)
	nets := []struct {
		name  string
		build func() vision.Model
	}{
		{"efficientnet_b0", func() vision.Model { return vision.EfficientNetB0(vision.Options{Classes: 4, Width: 8}) }},
		{"efficientnet_b0-sd0.5", func() vision.Model {
			return vision.EfficientNetB0(vision.Options{Classes: 4, Width: 8, StochasticDepth: 0.5})
		}},
		{"convnext_tiny", func() vision.Model {
			return vision.ConvNeXtTiny(vision.Options{Classes: 4, Width: 4, StochasticDepth: 0.3})
		}},
		{"densenet121", func() vision.Model { return vision.DenseNet121(vision.Options{Classes: 4, Width: 6, Dropout: 0.1}) }},
		{"mobilenet_v3_small", func() vision.Model { return vision.MobileNetV3Small(vision.Options{Classes: 4, Width: 8}) }},
		{"resnext50_32x4d", func() vision.Model {
			return vision.ResNeXt50_32x4d(vision.Options{Classes: 4, Width: 4, Groups: 4, WidthPerGroup: 16})
		}},
	}
	for _, m := range nets {
		t.Run(m.name, func(t *testing.T) {
			nd.Seed(3)
			net := m.build()
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "local", gluon.TrainerOpts{})
			if err != nil {
				t.Fatal(err)
			}
			const batch = 8
			x := nd.RandomNormal(dev, nd.Float32, 0, 1, batch, 3, 32, 32)
			labels := nd.FromSlice(dev, []float32{0, 1, 2, 3, 0, 1, 2, 3}, batch)
			var losses []float64
			for step := range 10 {
				autograd.Record(func() {
					l := nd.Mean(nd.SoftmaxCrossEntropy(net.Forward(x), labels, 1))
					autograd.Backward(l)
					losses = append(losses, l.Float64s()[0])
				})
				if step == 0 {
					checkGradients(t, params, dev)
				}
				if err := tr.Step(1); err != nil {
					t.Fatal(err)
				}
			}
			first, last := losses[0], losses[len(losses)-1]
			t.Logf("training-mode loss %.4f at the first step, %.4f at the tenth", first, last)
			if !(last < first) {
				t.Errorf("the loss went from %.4f to %.4f: %.4f", first, last, losses)
			}
		})
	}
}

// checkGradients: every weight's gradient is finite and not all zero, and
// the running means have left 0.
func checkGradients(t *testing.T, params *gluon.ParamDict, dev ctx.Context) {
	t.Helper()
	for _, p := range params.List() {
		if p.Statistic {
			if strings.HasSuffix(p.Name(), "running_mean") && allZero(p.Data(dev).Float64s()) {
				t.Errorf("%s: still 0 after a training pass", p.Name())
			}
			continue
		}
		g := p.Grad(dev).Float64s()
		for _, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: gradient %v", p.Name(), v)
			}
		}
		if allZero(g) {
			t.Errorf("%s: no gradient", p.Name())
		}
	}
}

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// TestStochasticDepthTraining: in training mode, the stochastic depth of
// EfficientNet (V1 and V2), ConvNeXt and Swin drops residual branches per
// sample, so that
// the outputs of a batch of one image repeated differ between samples and
// from pass to pass, while predict mode is deterministic and without it
// (StochasticDepth −1) training mode is too.
func TestStochasticDepthTraining(t *testing.T) {
	dev := ctx.CPU(0)
	for _, build := range []func(sd float64) vision.Model{
		func(sd float64) vision.Model {
			return vision.EfficientNetB0(vision.Options{Classes: 4, Width: 8, Dropout: -1, StochasticDepth: sd})
		},
		func(sd float64) vision.Model {
			return vision.ConvNeXtTiny(vision.Options{Classes: 4, Width: 4, StochasticDepth: sd})
		},
		func(sd float64) vision.Model {
			return vision.NewSwin(vision.SwinOptions{Options: vision.Options{Classes: 4, Width: 8, StochasticDepth: sd},
				WindowSize: 4, Heads: [4]int{1, 2, 4, 8}})
		},
		func(sd float64) vision.Model {
			return vision.EfficientNetV2S(vision.Options{Classes: 4, Width: 4, Dropout: -1, StochasticDepth: sd})
		},
	} {
		for _, sd := range []float64{0.5, -1} {
			nd.Seed(4)
			net := build(sd)
			if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			// One image, 8 times: without stochastic depth the samples'
			// outputs are equal (BatchNorm sees the same values).
			x := nd.Tile(nd.RandomNormal(dev, nd.Float32, 0, 1, 1, 3, 32, 32), 8, 1, 1, 1)
			var a, b, p1, p2 []float32
			autograd.Record(func() { a = net.Forward(x).Float32s() })
			autograd.Record(func() { b = net.Forward(x).Float32s() })
			autograd.PredictMode(func() { p1 = net.Forward(x).Float32s() })
			autograd.PredictMode(func() { p2 = net.Forward(x).Float32s() })
			name := net.Meta().Kind()
			if !equal(p1, p2) || !equal(p1[:4], p1[4:8]) {
				t.Errorf("%s, stochastic depth %g: predict mode is not deterministic", name, sd)
			}
			samplesDiffer := !equal(a[:4], a[4:8]) || !equal(a[:4], a[8:12]) || !equal(a[:4], a[12:16])
			if sd > 0 && (equal(a, b) || !samplesDiffer) {
				t.Errorf("%s, stochastic depth %g: training passes drop no branch per sample", name, sd)
			}
			if sd < 0 && (!equal(a, b) || samplesDiffer) {
				t.Errorf("%s without stochastic depth: training passes differ", name)
			}
		}
	}
}

func equal(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

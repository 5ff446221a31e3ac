package vision

import (
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestStochasticDepthRows: in training mode each sample (row) is zeroed
// whole or kept whole and scaled by 1/(1−p), about a fraction p zeroed,
// and the gradient is the same mask; in predict mode, with p 0, and with
// p 1 in predict mode the input passes; p 1 in training mode zeroes it.
func TestStochasticDepthRows(t *testing.T) {
	dev := ctx.CPU(0)
	const n, p = 2000, 0.3
	x := nd.Ones(dev, nd.Float32, n, 2, 3, 3)
	x.AttachGrad(nd.GradWrite)
	var y *nd.NDArray
	nd.Seed(7)
	autograd.Record(func() {
		y = stochasticDepth(x, p)
		autograd.Backward(nd.Sum(y))
	})
	v, g := y.Float32s(), x.Grad().Float32s()
	dropped := 0
	for i := range n {
		row := v[i*18 : (i+1)*18]
		want := float32(0)
		if row[0] != 0 {
			want = float32(1 / (1 - p))
		} else {
			dropped++
		}
		for j, r := range row {
			if r != want || g[i*18+j] != want {
				t.Fatalf("sample %d: values %v, gradient %v, want all %v", i, row, g[i*18:(i+1)*18], want)
			}
		}
	}
	if f := float64(dropped) / n; math.Abs(f-p) > 0.05 {
		t.Errorf("%.3f of the samples dropped, want about %g", f, p)
	}
	autograd.PredictMode(func() { y = stochasticDepth(x, p) })
	if y != x {
		t.Error("predict mode changed the input")
	}
	autograd.TrainMode(func() {
		if stochasticDepth(x, 0) != x {
			t.Error("p 0 changed the input")
		}
		for _, v := range stochasticDepth(x, 1).Float32s() {
			if v != 0 {
				t.Fatal("p 1 kept a sample")
			}
		}
	})
}

// TestStochasticDepthSchedules: the blocks' drop probabilities grow with
// their index as torchvision's: EfficientNet's (V1 and V2) p·i/n over its
// n blocks, ConvNeXt's and Swin's p·i/(n−1) (the last block's is p).
func TestStochasticDepthSchedules(t *testing.T) {
	var eff []float64
	for _, stage := range EfficientNetB0(Options{}).Features.Children()[1:8] {
		for _, b := range stage.Meta().Children() {
			eff = append(eff, b.(*mbConv).drop)
		}
	}
	if len(eff) != 16 {
		t.Fatalf("EfficientNet-B0 has %d blocks, want 16", len(eff))
	}
	for i, d := range eff {
		if want := 0.2 * float64(i) / 16; d != want {
			t.Errorf("EfficientNet-B0 block %d: drop probability %g, want %g", i, d, want)
		}
	}
	var cn []float64
	for _, stage := range ConvNeXtTiny(Options{}).Features.Children() {
		for _, b := range stage.Meta().Children() {
			if c, ok := b.(*cnBlock); ok {
				cn = append(cn, c.drop)
			}
		}
	}
	if len(cn) != 18 {
		t.Fatalf("ConvNeXt-Tiny has %d blocks, want 18", len(cn))
	}
	for i, d := range cn {
		if want := 0.1 * float64(i) / 17; d != want {
			t.Errorf("ConvNeXt-Tiny block %d: drop probability %g, want %g", i, d, want)
		}
	}
	var sw []float64
	for _, stage := range SwinT(Options{}).Features.Children() {
		for _, b := range stage.Meta().Children() {
			if s, ok := b.(*swinBlock); ok {
				sw = append(sw, s.drop)
			}
		}
	}
	if len(sw) != 12 {
		t.Fatalf("Swin-T has %d blocks, want 12", len(sw))
	}
	for i, d := range sw {
		if want := 0.2 * float64(i) / 11; d != want {
			t.Errorf("Swin-T block %d: drop probability %g, want %g", i, d, want)
		}
	}
	var v2 []float64
	for _, stage := range EfficientNetV2S(Options{}).Features.Children()[1:7] {
		for _, b := range stage.Meta().Children() {
			switch b := b.(type) {
			case *fusedMBConv:
				v2 = append(v2, b.drop)
			case *mbConv:
				v2 = append(v2, b.drop)
			}
		}
	}
	if len(v2) != 40 {
		t.Fatalf("EfficientNetV2-S has %d blocks, want 40", len(v2))
	}
	for i, d := range v2 {
		if want := 0.2 * float64(i) / 40; d != want {
			t.Errorf("EfficientNetV2-S block %d: drop probability %g, want %g", i, d, want)
		}
	}
	for _, b := range EfficientNetB7(Options{StochasticDepth: -1}).Features.Children()[4].Meta().Children() {
		if d := b.(*mbConv).drop; d != 0 {
			t.Fatalf("StochasticDepth −1: drop probability %g", d)
		}
	}
}

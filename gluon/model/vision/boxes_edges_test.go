package vision_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/nd"
)

var TieBoxes = []float64{0, 0, 1, 1, 5, 5, 6, 6, 10, 10, 11, 11, 0, 0, 1, 1.05, 20, 20, 21, 21, 30, 30, 31, 31}

// TestBoxEdgesNMSTies: equal scores; torchvision 0.14 keeps [0 1 2 4 5].
func TestBoxEdgesNMSTies(t *testing.T) {
	dev := ctx.CPU(0)
	for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
		b := nd.FromSlice(dev, TieBoxes, 6, 4).AsType(dt)
		s := nd.Full(dev, dt, 0.5, 6)
		if got, want := vision.NMS(b, s, 0.5).Int64s(), []int64{0, 1, 2, 4, 5}; !slices.Equal(got, want) {
			t.Errorf("%v: %v, torchvision %v", dt, got, want)
		}
	}
}

// TestBoxEdgesNMSNaNScore: torch.sort(descending) puts NaN first, so
// torchvision keeps the NaN-scored box first and it suppresses box 0
// (identical to it): [4 1 2 5].
func TestBoxEdgesNMSNaNScore(t *testing.T) {
	dev := ctx.CPU(0)
	bx := slices.Clone(TieBoxes)
	copy(bx[16:20], bx[0:4])
	b := nd.FromSlice(dev, bx, 6, 4)
	s := nd.FromSlice(dev, []float64{0.5, 0.9, 0.5, 0.9, math.NaN(), 0.5}, 6)
	if got, want := vision.NMS(b, s, 0.5).Int64s(), []int64{4, 1, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("NaN score: %v, torchvision %v", got, want)
	}
}

// TestBoxEdgesNMSZeroAreaEmpty: zero-area boxes are never suppressed (IoU NaN),
// as torchvision; empty inputs give empty outputs.
func TestBoxEdgesNMSZeroAreaEmpty(t *testing.T) {
	dev := ctx.CPU(0)
	b := nd.FromSlice(dev, []float64{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 2, 2}, 3, 4)
	if got, want := vision.NMS(b, nd.FromSlice(dev, []float64{0.9, 0.8, 0.7}, 3), 0).Int64s(), []int64{0, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("zero area: %v, torchvision %v", got, want)
	}
	e := nd.Zeros(dev, nd.Float32, 0, 4)
	err := nd.Catch(func() {
		if k := vision.NMS(e, nd.Zeros(dev, nd.Float32, 0), 0.5); k.Size() != 0 {
			t.Errorf("empty NMS: %v", k.Shape())
		}
		if k := vision.BatchedNMS(e, nd.Zeros(dev, nd.Float32, 0), nd.Zeros(dev, nd.Int64, 0), 0.5); k.Size() != 0 {
			t.Errorf("empty BatchedNMS: %v", k.Shape())
		}
		if y := vision.BoxIoU(e, nd.Zeros(dev, nd.Float32, 2, 4)); !slices.Equal(y.Shape(), []int{0, 2}) {
			t.Errorf("empty IoU: %v", y.Shape())
		}
	})
	if err != nil {
		t.Errorf("empty: %v", err)
	}
}

// TestBoxEdgesBatchedNMSNegative: boxes of different classes never
// suppress each other, also with negative coordinates (torchvision's
// offset (max+1)·class is ≤ 0 there and merges the classes for fewer than
// 1000 boxes; its per-class path, used above that, keeps both, as here).
func TestBoxEdgesBatchedNMSNegative(t *testing.T) {
	dev := ctx.CPU(0)
	for _, top := range []float64{-2, -1} {
		b := nd.FromSlice(dev, []float64{-100, -100, top, top, -100, -100, top, top}, 2, 4)
		got := vision.BatchedNMS(b, nd.FromSlice(dev, []float64{0.9, 0.8}, 2), nd.FromSlice(dev, []int64{0, 1}, 2), 0.5).Int64s()
		if !slices.Equal(got, []int64{0, 1}) {
			t.Errorf("largest coordinate %v: kept %v; two boxes of different classes, the doc promises [0 1]", top, got)
		}
	}
}

// TestBoxEdgesBoxIoUGradEdges: touching, identical, disjoint boxes; torchvision 0.14's gradients.
func TestBoxEdgesBoxIoUGradEdges(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float64{0, 0, 2, 2, 0, 0, 2, 2, 0, 0, 1, 1}, 3, 4)
	c := nd.FromSlice(dev, []float64{2, 0, 4, 2, 0, 0, 2, 2, 5, 5, 6, 6, 0, 1, 3, 4}, 4, 4)
	a.AttachGrad(nd.GradWrite)
	c.AttachGrad(nd.GradWrite)
	var y *nd.NDArray
	autograd.Record(func() {
		y = vision.BoxIoU(a, c)
		w := nd.Reshape(nd.Linspace(dev, nd.Float64, 1, 12, 12), 3, 4)
		autograd.Backward(nd.Sum(nd.Mul(y, w)))
	})
	wy := []float64{0, 1, 0, 0.18181818181818182, 0, 1, 0, 0.18181818181818182, 0, 0.25, 0, 0}
	wa := []float64{-0.0826446280991735, 0.1322314049586777, 0.5475206611570247, 0.7272727272727273, -0.165289256198347, 0.2644628099173554, 1.8450413223140494, 1.4545454545454541, -0.9375, -0.9375, 2.5, 3.7}
	wc := []float64{-1.5, 0, 0, 0, -0.3125, -0.3125, -1.25, -1.25, 0, 0, 0, 0, -0.04958677685950419, -3.183471074380166, -0.5950413223140496, -0.5950413223140496}
	for _, x := range []struct {
		what      string
		got, want []float64
	}{{"iou", y.Float64s(), wy}, {"grad a", a.Grad().Float64s(), wa}, {"grad b", c.Grad().Float64s(), wc}} {
		for k := range x.want {
			if math.Abs(x.got[k]-x.want[k]) > 1e-9 {
				t.Errorf("%s: %v\n torchvision %v", x.what, x.got, x.want)
				break
			}
		}
	}
}

// TestBoxEdgesBatchedNMSHuge: float32 boxes near 1e8, classes 0 1 0;
// torchvision keeps [0 1 2] (in float32 and float64).
func TestBoxEdgesBatchedNMSHuge(t *testing.T) {
	dev := ctx.CPU(0)
	b := nd.FromSlice(dev, []float32{1e8, 1e8, 1e8 + 10, 1e8 + 10, 1e8, 1e8, 1e8 + 10, 1e8 + 10, 1e8 + 5, 1e8, 1e8 + 15, 1e8 + 10}, 3, 4)
	got := vision.BatchedNMS(b, nd.FromSlice(dev, []float32{0.9, 0.8, 0.7}, 3), nd.FromSlice(dev, []int64{0, 1, 0}, 3), 0.2).Int64s()
	if !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("kept %v, torchvision [0 1 2]", got)
	}
}

package vision_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/nd"
)

type boxTensor struct {
	Shape []int
	Data  []float64
}

// TestBoxGoldens compares the box operations with torchvision.ops
// (testdata/make_goldens_boxes.py): box_area, box_iou and its gradients,
// box_convert, nms and batched_nms.
func TestBoxGoldens(t *testing.T) {
	raw, err := os.ReadFile("testdata/goldens_boxes.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Op, From, To          string
			Thr, Scale            float64
			Out                   []int
			Sr                    int
			Aligned               bool
			A, B, Scores, Idxs, Y boxTensor
			GA, GB                boxTensor
		}
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	arr := func(x boxTensor) *nd.NDArray { return nd.FromSlice(dev, x.Data, x.Shape...) }
	for i, c := range g.Cases {
		a := arr(c.A)
		var y *nd.NDArray
		switch c.Op {
		case "iou":
			b := arr(c.B)
			a.AttachGrad(nd.GradWrite)
			b.AttachGrad(nd.GradWrite)
			autograd.Record(func() {
				y = vision.BoxIoU(a, b)
				n := y.Size()
				head := nd.Reshape(nd.Linspace(dev, nd.Float64, -1, 1, n), y.Shape()...)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			boxNear(t, i, "gradient a", a.Grad().Float64s(), c.GA.Data)
			boxNear(t, i, "gradient b", b.Grad().Float64s(), c.GB.Data)
		case "roi_align":
			a.AttachGrad(nd.GradWrite)
			autograd.Record(func() {
				y = vision.RoIAlign(a, arr(c.B), vision.RoIAlignOpts{OutH: c.Out[0], OutW: c.Out[1], SpatialScale: c.Scale,
					SamplingRatio: c.Sr, Aligned: c.Aligned})
				n := y.Size()
				head := nd.Reshape(nd.Linspace(dev, nd.Float64, -1, 1, n), y.Shape()...)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			boxNear(t, i, "gradient", a.Grad().Float64s(), c.GA.Data)
		case "area":
			y = vision.BoxArea(a)
		case "convert":
			y = vision.BoxConvert(a, c.From, c.To)
		case "nms":
			y = vision.NMS(a, arr(c.Scores), c.Thr)
		case "batched_nms":
			y = vision.BatchedNMS(a, arr(c.Scores), arr(c.Idxs).AsType(nd.Int64), c.Thr)
		default:
			t.Fatalf("unknown op %q", c.Op)
		}
		if !slices.Equal(y.Shape(), c.Y.Shape) {
			t.Fatalf("case %d (%s): shape %v, torchvision %v", i, c.Op, y.Shape(), c.Y.Shape)
		}
		boxNear(t, i, c.Op, y.Float64s(), c.Y.Data)
	}
}

func boxNear(t *testing.T, i int, what string, got, want []float64) {
	t.Helper()
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-12*math.Max(1, math.Abs(want[k])) {
			t.Fatalf("case %d %s element %d: %v, torchvision %v", i, what, k, got[k], want[k])
		}
	}
}

// TestBoxErrors: boxes of another shape, scores of another length and
// float class indices are *nd.Error values.
func TestBoxErrors(t *testing.T) {
	dev := ctx.CPU(0)
	b := nd.Zeros(dev, nd.Float32, 3, 4)
	for name, f := range map[string]func(){
		"shape":   func() { vision.BoxArea(nd.Zeros(dev, nd.Float32, 3, 5)) },
		"scores":  func() { vision.NMS(b, nd.Zeros(dev, nd.Float32, 2), 0.5) },
		"classes": func() { vision.BatchedNMS(b, nd.Zeros(dev, nd.Float32, 3), nd.Zeros(dev, nd.Float32, 3), 0.5) },
		"format":  func() { vision.BoxConvert(b, "xyxy", "polar") },
		"rois": func() {
			vision.RoIAlign(nd.Zeros(dev, nd.Float32, 1, 2, 4, 4), b, vision.RoIAlignOpts{OutH: 2, OutW: 2})
		},
		"batch": func() {
			vision.RoIAlign(nd.Zeros(dev, nd.Float32, 1, 2, 4, 4), nd.FromSlice(dev, []float32{1, 0, 0, 2, 2}, 1, 5), vision.RoIAlignOpts{OutH: 2, OutW: 2})
		},
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

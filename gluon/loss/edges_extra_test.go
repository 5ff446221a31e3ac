package loss_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// logSoftmaxRows returns log_softmax of x [T, C] read back, row-major.
func logSoftmaxRows(x *nd.NDArray) []float64 { return nd.LogSoftmax(x, -1).Float64s() }

// TestCTCEdges covers targets without alignments, empty targets and
// lengths, padding rules and layouts.
func TestCTCEdges(t *testing.T) {
	dev := ctx.CPU(0)
	t.Run("infeasible target: inf loss, NaN gradient over its steps", func(t *testing.T) {
		// "aa" needs three steps (a blank between the repeats); two given.
		pred := ndtest.Rand(dev, 1, -1, 1, 1, 4, 3)
		pred.AttachGrad(nd.GradWrite)
		lab := nd.FromSlice(dev, []float64{1, 1}, 1, 2)
		var l *nd.NDArray
		autograd.Record(func() {
			l = loss.CTC{Blank: 0}.Forward(pred, lab, nd.FromSlice(dev, []float64{2}, 1), nil)
		})
		if v := l.Float64s()[0]; !math.IsInf(v, 1) {
			t.Fatalf("loss %v, want +Inf", v)
		}
		autograd.Backward(l)
		g := pred.Grad().Float64s()
		for i, v := range g {
			if step := i / 3; step < 2 != math.IsNaN(v) || step >= 2 && v != 0 {
				t.Fatalf("grad[%d] = %v (step %d): want NaN in the 2 steps, 0 after", i, v, step)
			}
		}
		// ZeroInfinity: loss and gradient 0.
		pred.Grad().WriteFrom(make([]float64, 12))
		autograd.Record(func() {
			l = loss.CTC{Blank: 0, ZeroInfinity: true}.Forward(pred, lab, nd.FromSlice(dev, []float64{2}, 1), nil)
		})
		autograd.Backward(l)
		if v := l.Float64s()[0]; v != 0 {
			t.Fatalf("ZeroInfinity loss %v", v)
		}
		for _, v := range pred.Grad().Float64s() {
			if v != 0 {
				t.Fatalf("ZeroInfinity grad %v", pred.Grad().Float64s())
			}
		}
	})
	t.Run("empty target: every step emits the blank", func(t *testing.T) {
		pred := ndtest.Rand(dev, 2, -1, 1, 1, 5, 3)
		lab := nd.FromSlice(dev, []float64{-1, -1}, 1, 2)
		got := loss.NewCTC().Forward(pred, lab, nil, nil).Float64s()[0]
		lp := logSoftmaxRows(nd.Reshape(pred, 5, 3))
		want := 0.0
		for step := range 5 {
			want -= lp[step*3+2] // the blank is the last class
		}
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("loss %v, want %v", got, want)
		}
		// No steps and no target: 0; no steps and a target: +Inf.
		two := nd.FromSlice(dev, []float64{-1, -1, 0, -1}, 2, 2)
		out := loss.NewCTC().Forward(ndtest.Rand(dev, 3, -1, 1, 2, 5, 3), two, nd.FromSlice(dev, []float64{0, 0}, 2), nil).Float64s()
		if out[0] != 0 || !math.IsInf(out[1], 1) {
			t.Fatalf("zero-length losses %v, want [0 +Inf]", out)
		}
	})
	t.Run("padding, lengths, layouts and label dtypes agree", func(t *testing.T) {
		x := ndtest.Rand(dev, 4, -2, 2, 2, 6, 4)
		padded := nd.FromSlice(dev, []float64{0, 1, 1, -1, 2, -1, -1, -1}, 2, 4)
		lens := nd.FromSlice(dev, []float64{3, 1}, 2)
		ref := loss.NewCTC().Forward(x, padded, nil, nil).Float64s()
		for name, got := range map[string][]float64{
			"label lengths": loss.NewCTC().Forward(x, padded, nil, lens).Float64s(),
			"int32 labels":  loss.NewCTC().Forward(x, padded.AsType(nd.Int32), nil, lens.AsType(nd.Int64)).Float64s(),
			"pad with blank": loss.NewCTC().Forward(x,
				nd.FromSlice(dev, []float64{0, 1, 1, 3, 2, 3, 3, 3}, 2, 4), nil, nil).Float64s(),
			"TNC": loss.CTC{Layout: "TNC", Blank: -1}.Forward(nd.SwapAxes(x, 0, 1), padded, nil, nil).Float64s(),
		} {
			for i := range ref {
				if math.Abs(got[i]-ref[i]) > 1e-12 {
					t.Fatalf("%s: %v, want %v", name, got, ref)
				}
			}
		}
	})
	t.Run("bad input is an error naming the loss", func(t *testing.T) {
		x := ndtest.Rand(dev, 5, -1, 1, 2, 6, 4)
		lab := nd.FromSlice(dev, []float64{0, 1, 2, 2}, 2, 2)
		for name, f := range map[string]func(){
			"2-D pred":           func() { loss.NewCTC().Forward(nd.Reshape(x, 12, 4), lab, nil, nil) },
			"layout":             func() { loss.CTC{Layout: "NCT"}.Forward(x, lab, nil, nil) },
			"blank out of range": func() { loss.CTC{Blank: 4}.Forward(x, lab, nil, nil) },
			"labels batch":       func() { loss.NewCTC().Forward(x, nd.Reshape(lab, 4, 1), nil, nil) },
			"label is the blank": func() {
				loss.NewCTC().Forward(x, nd.FromSlice(dev, []float64{0, 3, 1, 2}, 2, 2), nil, nd.FromSlice(dev, []float64{2, 2}, 2))
			},
			"label out of range":  func() { loss.NewCTC().Forward(x, nd.FromSlice(dev, []float64{0, 7, 1, 2}, 2, 2), nil, nil) },
			"fractional label":    func() { loss.NewCTC().Forward(x, nd.FromSlice(dev, []float64{0, 1.5, 1, 2}, 2, 2), nil, nil) },
			"pred length > T":     func() { loss.NewCTC().Forward(x, lab, nd.FromSlice(dev, []float64{7, 6}, 2), nil) },
			"label length > S":    func() { loss.NewCTC().Forward(x, lab, nil, nd.FromSlice(dev, []float64{3, 1}, 2)) },
			"negative length":     func() { loss.NewCTC().Forward(x, lab, nd.FromSlice(dev, []float64{-1, 6}, 2), nil) },
			"lengths shape":       func() { loss.NewCTC().Forward(x, lab, nd.FromSlice(dev, []float64{6, 6, 6}, 3), nil) },
			"integer predictions": func() { loss.NewCTC().Forward(x.AsType(nd.Int32), lab, nil, nil) },
			"label after padding": func() { loss.CTC{Blank: 0}.Forward(x, nd.FromSlice(dev, []float64{1, 0, 2, 1, 2, 3}, 2, 3), nil, nil) },
		} {
			err := nd.Catch(f)
			var e *nd.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), "loss.CTC") {
				t.Errorf("%s: %v, want an *nd.Error from loss.CTC", name, err)
			}
		}
	})
}

// TestWeightedLossEdges covers class and positive weights, and the other
// new losses' misuse.
func TestWeightedLossEdges(t *testing.T) {
	dev := ctx.CPU(0)
	pred := ndtest.Rand(dev, 6, -2, 2, 3, 4)
	idx := nd.FromSlice(dev, []int64{0, 3, 1}, 3)
	t.Run("class weights of uint8 and float labels agree", func(t *testing.T) {
		cw := nd.FromSlice(dev, []float64{1, 2, 0.5, 3}, 4)
		l := loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, ClassWeight: cw}
		plain := loss.NewSoftmaxCrossEntropy().Forward(pred, idx).Float64s()
		w := []float64{1, 3, 2}
		for _, lab := range []*nd.NDArray{idx, idx.AsType(nd.Uint8), idx.AsType(nd.Float64)} {
			got := l.Forward(pred, lab).Float64s()
			for i := range got {
				if math.Abs(got[i]-w[i]*plain[i]) > 1e-12 {
					t.Fatalf("%v labels: %v, want %v times %v", lab.DType(), got, w, plain)
				}
			}
		}
	})
	for name, f := range map[string]func(){
		"class weight shape": func() {
			loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, ClassWeight: nd.Ones(dev, nd.Float64, 3)}.Forward(pred, idx)
		},
		"class weight dtype": func() {
			loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, ClassWeight: nd.Ones(dev, nd.Float32, 4)}.Forward(pred, idx)
		},
		"class weight context": func() {
			loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, ClassWeight: nd.Ones(ctx.CPU(1), nd.Float64, 4)}.Forward(pred, idx)
		},
		"pos weight shape": func() {
			loss.SigmoidBCE{PosWeight: nd.Ones(dev, nd.Float64, 3)}.Forward(pred, nd.ZerosLike(pred))
		},
		"triplet shapes": func() {
			loss.NewTriplet().Forward(pred, pred, nd.Ones(dev, nd.Float64, 3, 5))
		},
		"triplet nil negative": func() { loss.NewTriplet().Forward(pred, pred, nil) },
		"cosine 1-D":           func() { loss.NewCosineEmbedding().Forward(nd.Reshape(pred, 12), nd.Reshape(pred, 12), idx) },
		"cosine label shape":   func() { loss.NewCosineEmbedding().Forward(pred, pred, nd.Ones(dev, nd.Float64, 4)) },
		"poisson epsilon":      func() { loss.PoissonNLL{Epsilon: -1}.Forward(pred, pred) },
		"nil pred, pos weight": func() { loss.SigmoidBCE{PosWeight: nd.Ones(dev, nd.Float64, 4)}.Forward(nil, pred) },
		"nil pred, class weight": func() {
			loss.SoftmaxCrossEntropy{Axis: -1, Sparse: true, ClassWeight: nd.Ones(dev, nd.Float64, 4)}.Forward(nil, idx)
		},
		"half pos weight, float64 pred": func() {
			loss.SigmoidBCE{PosWeight: nd.Ones(dev, nd.Float16, 4)}.Forward(pred, nd.ZerosLike(pred))
		},
	} {
		err := nd.Catch(f)
		var e *nd.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "loss.") {
			t.Errorf("%s: %v, want an *nd.Error from the loss", name, err)
		}
	}
	t.Run("cosine under autocast with half labels", func(t *testing.T) {
		a, b := ndtest.Rand(dev, 7, -1, 1, 2, 3), ndtest.Rand(dev, 8, -1, 1, 2, 3)
		want := loss.NewCosineEmbedding().Forward(a.AsType(nd.Float32), b.AsType(nd.Float32), nd.FromSlice(dev, []float32{1, -1}, 2)).Float64s()
		for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
			var got []float64
			err := nd.Catch(func() {
				nd.DefaultSession().Autocast(dt, func() {
					lab := nd.FromSlice(dev, []float32{1, -1}, 2).AsType(dt)
					got = loss.NewCosineEmbedding().Forward(a.AsType(dt), b.AsType(dt), lab).Float64s()
				})
			})
			if err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > 2e-2 {
					t.Fatalf("%v: %v, float32 %v", dt, got, want)
				}
			}
		}
	})
	t.Run("cosine with integer labels", func(t *testing.T) {
		a, b := ndtest.Rand(dev, 7, -1, 1, 3, 4), ndtest.Rand(dev, 8, -1, 1, 3, 4)
		f := loss.NewCosineEmbedding().Forward(a, b, nd.FromSlice(dev, []float64{1, -1, 1}, 3)).Float64s()
		i := loss.NewCosineEmbedding().Forward(a, b, nd.FromSlice(dev, []int32{1, -1, 1}, 3)).Float64s()
		for k := range f {
			if f[k] != i[k] {
				t.Fatalf("int32 labels %v, float labels %v", i, f)
			}
		}
	})
}

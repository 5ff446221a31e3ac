package nn_test

import (
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// layerGradCase is a layer (or network) whose float64 gradients are
// checked numerically with respect to its input and every learnable
// parameter.
type layerGradCase struct {
	name  string
	block func() gluon.Block
	in    []int
	tol   ndtest.GradTol
	// minParams is the number of learnable parameters the case must
	// check, so that a layer silently losing its parameters fails.
	minParams int
}

func layerGradCases() []layerGradCase {
	pad1 := [2]int{1, 1}
	return []layerGradCase{
		{"Dense/flatten-tanh", func() gluon.Block { return nn.NewDense(4, nn.DenseOpts{Act: "tanh"}) },
			[]int{3, 2, 3}, ndtest.GradTol{}, 2},
		{"Dense/no-flatten-sigmoid", func() gluon.Block {
			return nn.NewDense(3, nn.DenseOpts{Act: "sigmoid", NoFlatten: true})
		}, []int{2, 3, 4}, ndtest.GradTol{}, 2},
		{"Dense/no-bias", func() gluon.Block { return nn.NewDense(2, nn.DenseOpts{NoBias: true}) },
			[]int{3, 5}, ndtest.GradTol{}, 1},
		{"Dense/relu", func() gluon.Block { return nn.NewDense(3, nn.DenseOpts{Act: "relu", InUnits: 4}) },
			[]int{4, 4}, ndtest.GradTol{}, 2},
		{"Conv2D/groups-pad-stride", func() gluon.Block {
			return nn.NewConv2D(4, 3, nn.Conv2DOpts{Groups: 2, Pad: pad1, Stride: [2]int{2, 2}})
		}, []int{2, 4, 5, 5}, ndtest.GradTol{}, 2},
		{"Conv2D/groups-pad", func() gluon.Block {
			return nn.NewConv2D(6, 3, nn.Conv2DOpts{Groups: 3, Pad: pad1, Act: "tanh"})
		}, []int{1, 3, 4, 4}, ndtest.GradTol{}, 2},
		{"Conv2D/kernel-2x3-dilate", func() gluon.Block {
			return nn.NewConv2D(2, 0, nn.Conv2DOpts{Kernel: [2]int{2, 3}, Dilate: [2]int{2, 1}, Pad: pad1})
		}, []int{2, 2, 5, 4}, ndtest.GradTol{}, 2},
		{"Conv2D/no-bias-softrelu", func() gluon.Block {
			return nn.NewConv2D(3, 2, nn.Conv2DOpts{NoBias: true, Act: "softrelu"})
		}, []int{2, 2, 4, 4}, ndtest.GradTol{}, 1},
		{"MaxPool2D/2", func() gluon.Block { return nn.NewMaxPool2D(2, nn.PoolOpts{}) },
			[]int{2, 2, 4, 4}, ndtest.GradTol{}, 0},
		{"MaxPool2D/3-stride2-pad1-ceil", func() gluon.Block {
			return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: pad1, CeilMode: true})
		}, []int{1, 2, 6, 5}, ndtest.GradTol{}, 0},
		{"AvgPool2D/include-pad", func() gluon.Block {
			return nn.NewAvgPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: pad1})
		}, []int{1, 2, 5, 5}, ndtest.GradTol{}, 0},
		{"AvgPool2D/exclude-pad", func() gluon.Block {
			return nn.NewAvgPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: pad1, ExcludePad: true})
		}, []int{1, 2, 4, 4}, ndtest.GradTol{}, 0},
		{"AvgPool2D/ceil", func() gluon.Block { return nn.NewAvgPool2D(2, nn.PoolOpts{CeilMode: true}) },
			[]int{1, 2, 5, 5}, ndtest.GradTol{}, 0},
		{"GlobalMaxPool2D", func() gluon.Block { return nn.NewGlobalMaxPool2D() },
			[]int{2, 3, 3, 4}, ndtest.GradTol{}, 0},
		{"GlobalAvgPool2D", func() gluon.Block { return nn.NewGlobalAvgPool2D() },
			[]int{2, 3, 3, 4}, ndtest.GradTol{}, 0},
		{"Flatten", func() gluon.Block { return nn.NewFlatten() }, []int{2, 3, 2}, ndtest.GradTol{}, 0},
		{"Activation/softrelu", func() gluon.Block { return nn.NewActivation("softrelu") },
			[]int{3, 4}, ndtest.GradTol{}, 0},
		{"Dropout/train", func() gluon.Block { return nn.NewDropout(0.4) },
			[]int{4, 5}, ndtest.GradTol{Train: true}, 0},
		{"Dropout/train-axes", func() gluon.Block { return nn.NewDropout(0.4, 0) },
			[]int{3, 2, 4}, ndtest.GradTol{Train: true}, 0},
		{"Conv1D/pad-stride-tanh", func() gluon.Block {
			return nn.NewConv1D(3, 3, nn.Conv1DOpts{Pad: 1, Stride: 2, Act: "tanh"})
		}, []int{2, 2, 7}, ndtest.GradTol{}, 2},
		{"Conv1D/groups-dilate-no-bias", func() gluon.Block {
			return nn.NewConv1D(4, 2, nn.Conv1DOpts{Groups: 2, Dilate: 2, NoBias: true})
		}, []int{2, 4, 6}, ndtest.GradTol{}, 1},
		{"Conv2DTranspose/stride2-pad1-outpad1", func() gluon.Block {
			return nn.NewConv2DTranspose(2, 3, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}, Pad: pad1, OutputPad: [2]int{1, 1}})
		}, []int{2, 3, 3, 3}, ndtest.GradTol{}, 2},
		{"Conv2DTranspose/groups-sigmoid", func() gluon.Block {
			return nn.NewConv2DTranspose(4, 2, nn.Conv2DTransposeOpts{Groups: 2, Act: "sigmoid"})
		}, []int{1, 4, 3, 2}, ndtest.GradTol{}, 2},
		{"LeakyReLU", func() gluon.Block { return nn.NewLeakyReLU(0.1) }, []int{3, 4}, ndtest.GradTol{}, 0},
		{"PReLU/per-channel", func() gluon.Block { return nn.NewPReLU(3) }, []int{2, 3, 4}, ndtest.GradTol{}, 1},
		{"PReLU/shared", func() gluon.Block { return nn.NewPReLU(1) }, []int{4, 3}, ndtest.GradTol{}, 1},
		{"ELU", func() gluon.Block { return nn.NewELU(1) }, []int{3, 4}, ndtest.GradTol{}, 0},
		{"GELU/erf", func() gluon.Block { return nn.NewGELU(false) }, []int{3, 4}, ndtest.GradTol{}, 0},
		{"GELU/tanh", func() gluon.Block { return nn.NewGELU(true) }, []int{3, 4}, ndtest.GradTol{}, 0},
		{"SiLU", func() gluon.Block { return nn.NewSiLU() }, []int{3, 4}, ndtest.GradTol{}, 0},
		{"Dense/gelu", func() gluon.Block { return nn.NewDense(3, nn.DenseOpts{Act: "gelu"}) }, []int{2, 4}, ndtest.GradTol{}, 2},
		{"LayerNorm/last", func() gluon.Block { return nn.NewLayerNorm(-1, nn.NormOpts{}) }, []int{2, 3, 5}, ndtest.GradTol{}, 2},
		{"LayerNorm/axis-1-no-center", func() gluon.Block { return nn.NewLayerNorm(1, nn.NormOpts{NoCenter: true}) }, []int{2, 3, 4}, ndtest.GradTol{}, 1},
		{"GroupNorm/2", func() gluon.Block { return nn.NewGroupNorm(2, nn.NormOpts{}) }, []int{2, 4, 3}, ndtest.GradTol{}, 2},
		{"InstanceNorm", func() gluon.Block { return nn.NewInstanceNorm(nn.NormOpts{}) }, []int{2, 3, 2, 2}, ndtest.GradTol{}, 2},
		{"BatchNorm/train", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{}) },
			[]int{3, 2, 2, 3}, ndtest.GradTol{Train: true}, 2},
		{"BatchNorm/train-axis-last", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(-1)}) },
			[]int{4, 2, 3}, ndtest.GradTol{Train: true}, 2},
		{"BatchNorm/train-no-scale", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{NoScale: true}) },
			[]int{4, 3}, ndtest.GradTol{Train: true}, 1},
		{"BatchNorm/train-no-center", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{NoCenter: true}) },
			[]int{4, 3}, ndtest.GradTol{Train: true}, 1},
		{"BatchNorm/predict", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{}) },
			[]int{3, 2, 2, 2}, ndtest.GradTol{}, 2},
		{"Sequential", func() gluon.Block {
			return nn.NewSequential(
				nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: pad1}),
				nn.NewBatchNorm(nn.BatchNormOpts{}),
				nn.NewActivation("tanh"),
				nn.NewAvgPool2D(2, nn.PoolOpts{}),
				nn.NewFlatten(),
				nn.NewDense(3, nn.DenseOpts{Act: "sigmoid"}),
			)
		}, []int{2, 2, 4, 4}, ndtest.GradTol{Train: true}, 6},
		{"Sequential/dropout-nested", func() gluon.Block {
			return nn.NewSequential(
				nn.NewSequential(nn.NewDense(5, nn.DenseOpts{Act: "tanh"}), nn.NewDropout(0.3)),
				nn.NewDense(2, nn.DenseOpts{}),
			)
		}, []int{3, 4}, ndtest.GradTol{Train: true}, 4},
		{"Concurrent", func() gluon.Block {
			return nn.NewConcurrent(
				nn.NewConv2D(2, 1, nn.Conv2DOpts{}),
				nn.NewSequential(nn.NewConv2D(2, 3, nn.Conv2DOpts{Pad: pad1, Groups: 2}), nn.NewActivation("tanh")),
				nn.NewAvgPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: pad1}),
			)
		}, []int{2, 2, 3, 3}, ndtest.GradTol{}, 4},
	}
}

// randomizeParams runs b once to infer its parameter shapes and then gives
// every parameter random float64 values (positive ones for gamma and the
// running variance), so that no gradient is checked at a special point.
// It returns the learnable parameters' arrays on cpu(0).
func randomizeParams(t *testing.T, b gluon.Block, x *nd.NDArray) (learn []*nd.NDArray, names []string) {
	t.Helper()
	params := initNet(t, b, initializer.Xavier{}, nd.Float64)
	forward(b, x)
	for i, p := range params.List() {
		seed := uint64(100 + i)
		var v *nd.NDArray
		switch {
		case strings.HasSuffix(p.Name(), "gamma"):
			v = ndtest.Rand(cpu0, seed, 0.5, 1.5, p.Shape()...)
		case strings.HasSuffix(p.Name(), "running_var"):
			v = ndtest.Rand(cpu0, seed, 0.5, 2, p.Shape()...)
		default:
			v = ndtest.Rand(cpu0, seed, -0.8, 0.8, p.Shape()...)
		}
		p.SetData(v)
		if p.DType() != nd.Float64 || p.Data(cpu0).DType() != nd.Float64 {
			t.Fatalf("%s is %v; the check needs float64", p.Name(), p.Data(cpu0).DType())
		}
		if p.GradReq() != nd.GradNull {
			learn = append(learn, p.Data(cpu0))
			names = append(names, p.Name())
		}
	}
	return learn, names
}

func TestLayerGradients(t *testing.T) {
	for _, tc := range layerGradCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.block()
			x := ndtest.Rand(cpu0, 7, -1.5, 1.5, tc.in...)
			learn, names := randomizeParams(t, b, x)
			if len(learn) < tc.minParams {
				t.Fatalf("%d learnable parameters %v, want at least %d", len(learn), names, tc.minParams)
			}
			inputs := append([]*nd.NDArray{x}, learn...)
			ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray {
				// in[1:] are the parameters' own arrays: the layer reads
				// the perturbed values through its parameters.
				return b.Forward(in[0])
			}, inputs, tc.tol)
		})
	}
}

// TestLayerGradientsAreNotVacuous makes sure the parameter arrays handed to
// CheckGrad really receive gradients from a layer's forward pass, so that
// the check above compares something.
func TestLayerGradientsAreNotVacuous(t *testing.T) {
	for _, tc := range layerGradCases() {
		if tc.minParams == 0 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			b := tc.block()
			x := ndtest.Rand(cpu0, 7, -1.5, 1.5, tc.in...)
			learn, names := randomizeParams(t, b, x)
			for _, a := range learn {
				a.AttachGrad(nd.GradWrite)
			}
			var y *nd.NDArray
			run := func() {
				y = b.Forward(x)
				nd.Backward([]*nd.NDArray{nd.Sum(nd.Square(y))}, nil, false)
			}
			if tc.tol.Train {
				forwardRecord(true, run)
			} else {
				forwardRecord(false, run)
			}
			for i, a := range learn {
				g := a.Grad()
				if g == nil {
					t.Fatalf("%s has no gradient", names[i])
				}
				nonzero := false
				for _, v := range g.Float64s() {
					nonzero = nonzero || v != 0
				}
				if !nonzero {
					t.Errorf("%s gradient is all zero", names[i])
				}
			}
		})
	}
}

// recordingTB is a testing.TB that records failures instead of reporting
// them, to test that the gradient check can fail.
type recordingTB struct {
	testing.TB
	failed bool
}

func (r *recordingTB) Errorf(string, ...any) { r.failed = true }
func (r *recordingTB) Error(...any)          { r.failed = true }
func (r *recordingTB) Fatalf(f string, a ...any) {
	r.failed = true
	panic("fatal")
}

// leakyScale is a deliberately wrong block: y = x·w + x·detach(w), whose
// recorded gradient with respect to w misses the second term.
type leakyScale struct {
	gluon.BlockMeta
	w *gluon.Parameter
}

func newLeakyScale(n int) *leakyScale {
	b := &leakyScale{BlockMeta: gluon.NewBlockMeta("leaky")}
	b.w = b.AddParam(gluon.NewParameter("weight", 1, n))
	return b
}

func (b *leakyScale) Forward(x *nd.NDArray) *nd.NDArray {
	w := b.w.Data(x.Context())
	return nd.Add(nd.Mul(x, w), nd.Mul(x, w.Detach()))
}

func TestGradCheckCatchesWrongParameterGradient(t *testing.T) {
	b := newLeakyScale(3)
	x := ndtest.Rand(cpu0, 9, 0.5, 1.5, 2, 3)
	learn, _ := randomizeParams(t, b, x)
	f := func(in []*nd.NDArray) *nd.NDArray { return b.Forward(in[0]) }
	// The input's gradient (2w) is right...
	ndtest.CheckGrad(t, f, []*nd.NDArray{x, learn[0]}, ndtest.GradTol{}, 1)
	// ...the parameter's is not, and checking it must fail.
	rec := &recordingTB{TB: t}
	ndtest.CheckGrad(rec, f, []*nd.NDArray{x, learn[0]}, ndtest.GradTol{})
	if !rec.failed {
		t.Error("CheckGrad accepted a parameter gradient that is off by a factor of 2")
	}
}

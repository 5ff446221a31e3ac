package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// shapeCase is one layer configuration: the input shape, the output shape
// and the parameter shapes (by full name, as CollectParams names them on a
// root block) after the first forward pass.
type shapeCase struct {
	name   string
	block  func() gluon.Block
	in     []int
	out    []int
	params map[string][]int
}

func TestLayerShapes(t *testing.T) {
	cases := []shapeCase{
		// Dense.
		{"Dense/2d", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{}) },
			[]int{3, 7}, []int{3, 5}, map[string][]int{"weight": {5, 7}, "bias": {5}}},
		{"Dense/flatten-3d", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{}) },
			[]int{2, 3, 4}, []int{2, 5}, map[string][]int{"weight": {5, 12}, "bias": {5}}},
		{"Dense/flatten-4d", func() gluon.Block { return nn.NewDense(6, nn.DenseOpts{Act: "relu"}) },
			[]int{2, 3, 4, 5}, []int{2, 6}, map[string][]int{"weight": {6, 60}, "bias": {6}}},
		{"Dense/no-flatten-3d", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{NoFlatten: true}) },
			[]int{2, 3, 4}, []int{2, 3, 5}, map[string][]int{"weight": {5, 4}, "bias": {5}}},
		{"Dense/no-flatten-4d", func() gluon.Block { return nn.NewDense(2, nn.DenseOpts{NoFlatten: true}) },
			[]int{2, 3, 4, 6}, []int{2, 3, 4, 2}, map[string][]int{"weight": {2, 6}, "bias": {2}}},
		{"Dense/no-flatten-2d", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{NoFlatten: true}) },
			[]int{3, 4}, []int{3, 5}, map[string][]int{"weight": {5, 4}, "bias": {5}}},
		{"Dense/no-bias", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{NoBias: true}) },
			[]int{3, 4}, []int{3, 5}, map[string][]int{"weight": {5, 4}}},
		{"Dense/in-units", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{InUnits: 4, Act: "tanh"}) },
			[]int{3, 4}, []int{3, 5}, map[string][]int{"weight": {5, 4}, "bias": {5}}},
		{"Dense/sigmoid", func() gluon.Block { return nn.NewDense(1, nn.DenseOpts{Act: "sigmoid"}) },
			[]int{3, 4}, []int{3, 1}, map[string][]int{"weight": {1, 4}, "bias": {1}}},
		{"Dense/softrelu", func() gluon.Block { return nn.NewDense(2, nn.DenseOpts{Act: "softrelu"}) },
			[]int{3, 4}, []int{3, 2}, map[string][]int{"weight": {2, 4}, "bias": {2}}},

		// Conv2D: out = (H + 2p - d(k-1) - 1)/s + 1.
		{"Conv2D/basic", func() gluon.Block { return nn.NewConv2D(4, 3, nn.Conv2DOpts{}) },
			[]int{2, 3, 10, 10}, []int{2, 4, 8, 8}, map[string][]int{"weight": {4, 3, 3, 3}, "bias": {4}}},
		{"Conv2D/stride2", func() gluon.Block { return nn.NewConv2D(4, 3, nn.Conv2DOpts{Stride: [2]int{2, 2}}) },
			[]int{2, 3, 10, 10}, []int{2, 4, 4, 4}, map[string][]int{"weight": {4, 3, 3, 3}, "bias": {4}}},
		{"Conv2D/pad1", func() gluon.Block { return nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}}) },
			[]int{2, 3, 10, 10}, []int{2, 4, 10, 10}, map[string][]int{"weight": {4, 3, 3, 3}, "bias": {4}}},
		{"Conv2D/stride2-pad1", func() gluon.Block {
			return nn.NewConv2D(4, 3, nn.Conv2DOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}})
		}, []int{1, 3, 9, 9}, []int{1, 4, 5, 5}, map[string][]int{"weight": {4, 3, 3, 3}, "bias": {4}}},
		{"Conv2D/dilate2", func() gluon.Block { return nn.NewConv2D(4, 3, nn.Conv2DOpts{Dilate: [2]int{2, 2}}) },
			[]int{2, 3, 10, 10}, []int{2, 4, 6, 6}, map[string][]int{"weight": {4, 3, 3, 3}, "bias": {4}}},
		{"Conv2D/dilate-pad", func() gluon.Block {
			return nn.NewConv2D(2, 3, nn.Conv2DOpts{Dilate: [2]int{2, 1}, Pad: [2]int{2, 1}})
		}, []int{1, 3, 7, 7}, []int{1, 2, 7, 7}, map[string][]int{"weight": {2, 3, 3, 3}, "bias": {2}}},
		{"Conv2D/groups2", func() gluon.Block { return nn.NewConv2D(6, 3, nn.Conv2DOpts{Groups: 2}) },
			[]int{2, 4, 6, 6}, []int{2, 6, 4, 4}, map[string][]int{"weight": {6, 2, 3, 3}, "bias": {6}}},
		{"Conv2D/depthwise", func() gluon.Block { return nn.NewConv2D(4, 3, nn.Conv2DOpts{Groups: 4, Pad: [2]int{1, 1}}) },
			[]int{1, 4, 5, 5}, []int{1, 4, 5, 5}, map[string][]int{"weight": {4, 1, 3, 3}, "bias": {4}}},
		{"Conv2D/kernel-3x5", func() gluon.Block {
			return nn.NewConv2D(4, 0, nn.Conv2DOpts{Kernel: [2]int{3, 5}, Pad: [2]int{1, 2}})
		}, []int{2, 3, 10, 10}, []int{2, 4, 10, 10}, map[string][]int{"weight": {4, 3, 3, 5}, "bias": {4}}},
		{"Conv2D/kernel-1x3-stride-2x1", func() gluon.Block {
			return nn.NewConv2D(4, 7, nn.Conv2DOpts{Kernel: [2]int{1, 3}, Stride: [2]int{2, 1}})
		}, []int{2, 3, 10, 10}, []int{2, 4, 5, 8}, map[string][]int{"weight": {4, 3, 1, 3}, "bias": {4}}},
		{"Conv2D/no-bias", func() gluon.Block { return nn.NewConv2D(4, 1, nn.Conv2DOpts{NoBias: true}) },
			[]int{2, 3, 5, 5}, []int{2, 4, 5, 5}, map[string][]int{"weight": {4, 3, 1, 1}}},
		{"Conv2D/in-channels", func() gluon.Block {
			return nn.NewConv2D(4, 3, nn.Conv2DOpts{InChannels: 4, Groups: 2, Act: "relu"})
		}, []int{2, 4, 5, 5}, []int{2, 4, 3, 3}, map[string][]int{"weight": {4, 2, 3, 3}, "bias": {4}}},

		// Pooling.
		{"MaxPool2D/2", func() gluon.Block { return nn.NewMaxPool2D(2, nn.PoolOpts{}) },
			[]int{2, 3, 6, 6}, []int{2, 3, 3, 3}, nil},
		{"MaxPool2D/2-odd-floor", func() gluon.Block { return nn.NewMaxPool2D(2, nn.PoolOpts{}) },
			[]int{1, 2, 5, 7}, []int{1, 2, 2, 3}, nil},
		{"MaxPool2D/2-odd-ceil", func() gluon.Block { return nn.NewMaxPool2D(2, nn.PoolOpts{CeilMode: true}) },
			[]int{1, 2, 5, 7}, []int{1, 2, 3, 4}, nil},
		{"MaxPool2D/3-stride2", func() gluon.Block { return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}}) },
			[]int{1, 2, 7, 8}, []int{1, 2, 3, 3}, nil},
		{"MaxPool2D/3-stride2-ceil", func() gluon.Block {
			return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, CeilMode: true})
		}, []int{1, 2, 7, 8}, []int{1, 2, 3, 4}, nil},
		{"MaxPool2D/3-stride2-pad1", func() gluon.Block {
			return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}})
		}, []int{1, 2, 6, 6}, []int{1, 2, 3, 3}, nil},
		{"MaxPool2D/3-stride1-pad1", func() gluon.Block {
			return nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}})
		}, []int{1, 2, 6, 5}, []int{1, 2, 6, 5}, nil},
		{"MaxPool2D/stride-2x1", func() gluon.Block { return nn.NewMaxPool2D(2, nn.PoolOpts{Stride: [2]int{2, 1}}) },
			[]int{1, 1, 6, 6}, []int{1, 1, 3, 5}, nil},
		{"AvgPool2D/2", func() gluon.Block { return nn.NewAvgPool2D(2, nn.PoolOpts{}) },
			[]int{2, 3, 6, 6}, []int{2, 3, 3, 3}, nil},
		{"AvgPool2D/2-ceil", func() gluon.Block { return nn.NewAvgPool2D(2, nn.PoolOpts{CeilMode: true}) },
			[]int{2, 3, 5, 5}, []int{2, 3, 3, 3}, nil},
		{"AvgPool2D/3-pad1-exclude", func() gluon.Block {
			return nn.NewAvgPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}, ExcludePad: true})
		}, []int{2, 3, 4, 4}, []int{2, 3, 4, 4}, nil},
		{"GlobalMaxPool2D", func() gluon.Block { return nn.NewGlobalMaxPool2D() },
			[]int{2, 3, 5, 7}, []int{2, 3, 1, 1}, nil},
		{"GlobalAvgPool2D", func() gluon.Block { return nn.NewGlobalAvgPool2D() },
			[]int{2, 3, 5, 7}, []int{2, 3, 1, 1}, nil},

		// Shape-preserving layers.
		{"Flatten/4d", func() gluon.Block { return nn.NewFlatten() },
			[]int{2, 3, 4, 5}, []int{2, 60}, nil},
		{"Flatten/2d", func() gluon.Block { return nn.NewFlatten() },
			[]int{2, 3}, []int{2, 3}, nil},
		{"Dropout", func() gluon.Block { return nn.NewDropout(0.5) },
			[]int{2, 3, 4}, []int{2, 3, 4}, nil},
		{"Activation/relu", func() gluon.Block { return nn.NewActivation("relu") },
			[]int{2, 3}, []int{2, 3}, nil},
		{"BatchNorm/nchw", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{}) },
			[]int{2, 3, 4, 4}, []int{2, 3, 4, 4},
			map[string][]int{"gamma": {3}, "beta": {3}, "running_mean": {3}, "running_var": {3}}},
		{"BatchNorm/2d", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{}) },
			[]int{5, 4}, []int{5, 4},
			map[string][]int{"gamma": {4}, "beta": {4}, "running_mean": {4}, "running_var": {4}}},
		{"BatchNorm/axis-last", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(-1)}) },
			[]int{2, 3, 4, 5}, []int{2, 3, 4, 5},
			map[string][]int{"gamma": {5}, "beta": {5}, "running_mean": {5}, "running_var": {5}}},
		{"BatchNorm/axis3", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(3)}) },
			[]int{2, 3, 4, 6}, []int{2, 3, 4, 6},
			map[string][]int{"gamma": {6}, "beta": {6}, "running_mean": {6}, "running_var": {6}}},
		{"BatchNorm/axis0", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(0)}) },
			[]int{3, 4, 2}, []int{3, 4, 2},
			map[string][]int{"gamma": {3}, "beta": {3}, "running_mean": {3}, "running_var": {3}}},
		{"BatchNorm/no-center", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{NoCenter: true}) },
			[]int{2, 3, 2, 2}, []int{2, 3, 2, 2},
			map[string][]int{"gamma": {3}, "running_mean": {3}, "running_var": {3}}},
		{"BatchNorm/no-scale", func() gluon.Block { return nn.NewBatchNorm(nn.BatchNormOpts{NoScale: true}) },
			[]int{2, 3, 2, 2}, []int{2, 3, 2, 2},
			map[string][]int{"beta": {3}, "running_mean": {3}, "running_var": {3}}},
		{"BatchNorm/no-center-no-scale", func() gluon.Block {
			return nn.NewBatchNorm(nn.BatchNormOpts{NoCenter: true, NoScale: true, InChannels: 3})
		}, []int{2, 3, 2, 2}, []int{2, 3, 2, 2},
			map[string][]int{"running_mean": {3}, "running_var": {3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, train := range []bool{false, true} {
				b := tc.block()
				params := initNet(t, b, initializer.Xavier{}, nd.Float32)
				x := randX(cpu0, 1, tc.in...)
				var y *nd.NDArray
				if train {
					y = forwardTrain(b, x)
				} else {
					y = forward(b, x)
				}
				if !slices.Equal(y.Shape(), tc.out) {
					t.Fatalf("train=%v: output shape %v, want %v", train, y.Shape(), tc.out)
				}
				if got := shapesOf(params); len(got) != len(tc.params) {
					t.Fatalf("parameters %v, want %v", got, tc.params)
				} else {
					for n, s := range tc.params {
						if !slices.Equal(got[n], s) {
							t.Errorf("parameter %s shape %v, want %v", n, got[n], s)
						}
					}
				}
				for _, p := range params.List() {
					if !p.Initialized() {
						t.Errorf("parameter %s not initialised after the forward pass", p.Name())
					}
				}
			}
		})
	}
}

func TestActivationValues(t *testing.T) {
	x := seq(cpu0, 0.5, -3, 2, 6) // -3 ... 2.5
	cases := []struct {
		name string
		ref  func(*nd.NDArray) *nd.NDArray
		at   func(v float64) float64
	}{
		{"relu", nd.Relu, func(v float64) float64 { return math.Max(v, 0) }},
		{"sigmoid", nd.Sigmoid, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"tanh", nd.Tanh, math.Tanh},
		{"softrelu", nd.Softrelu, func(v float64) float64 { return math.Log1p(math.Exp(v)) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := nn.NewActivation(tc.name)
			if a.Kind() != tc.name {
				t.Errorf("kind %q, want %q", a.Kind(), tc.name)
			}
			y := forward(a, x)
			allClose(t, "vs nd op", y, tc.ref(x), 0, 0)
			want := x.Float64s()
			for i := range want {
				want[i] = tc.at(want[i])
			}
			closeSlice(t, "vs math", y.Float64s(), want, 1e-6)
			if len(gluon.CollectParams(a).Names()) != 0 {
				t.Error("an activation has parameters")
			}
		})
	}
}

func TestUnknownActivationPanics(t *testing.T) {
	cases := map[string]func(){
		"Activation":            func() { nn.NewActivation("swishy") },
		"Activation/upper-case": func() { nn.NewActivation("RELU") },
		"Dense":                 func() { nn.NewDense(3, nn.DenseOpts{Act: "swishy"}) },
		"Conv2D":                func() { nn.NewConv2D(3, 3, nn.Conv2DOpts{Act: "swishy"}) },
		"Activation/forward": func() {
			a := nn.NewActivation("relu")
			a.Name = "swishy" // changed after construction: Forward checks too
			a.Forward(nd.Ones(cpu0, nd.Float32, 2))
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			mustNDPanic(t, nd.ErrArgument, f, "unknown activation")
		})
	}
}

func TestConstructorArgumentPanics(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		want string
	}{
		{"Dense/zero-units", func() { nn.NewDense(0, nn.DenseOpts{}) }, "units 0"},
		{"Conv2D/zero-channels", func() { nn.NewConv2D(0, 3, nn.Conv2DOpts{}) }, "channels 0"},
		{"Conv2D/zero-kernel", func() { nn.NewConv2D(2, 0, nn.Conv2DOpts{}) }, "kernel"},
		{"Conv2D/channels-not-divisible", func() { nn.NewConv2D(5, 3, nn.Conv2DOpts{Groups: 2}) }, "groups 2"},
		{"Conv2D/in-channels-not-divisible", func() { nn.NewConv2D(4, 3, nn.Conv2DOpts{Groups: 2, InChannels: 3}) }, "in_channels 3"},
		{"MaxPool2D/zero-size", func() { nn.NewMaxPool2D(0, nn.PoolOpts{}) }, "pool size"},
		{"AvgPool2D/negative-size", func() { nn.NewAvgPool2D(-1, nn.PoolOpts{}) }, "pool size"},
		{"Dropout/negative", func() { nn.NewDropout(-0.1) }, "rate -0.1"},
		{"Dropout/one", func() { nn.NewDropout(1) }, "rate 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { mustNDPanic(t, nd.ErrArgument, tc.f, tc.want) })
	}
}

func TestForwardShapePanics(t *testing.T) {
	cases := []struct {
		name  string
		block gluon.Block
		in    []int
		kind  nd.ErrorKind
		want  []string
	}{
		{"Conv2D/3d-input", nn.NewConv2D(2, 3, nn.Conv2DOpts{}), []int{3, 5, 5}, nd.ErrShape, []string{"nn.Conv2D", "[3 5 5]"}},
		{"Conv2D/groups", nn.NewConv2D(4, 3, nn.Conv2DOpts{Groups: 2}), []int{1, 3, 5, 5}, nd.ErrShape, []string{"3 input channels", "2 groups"}},
		{"BatchNorm/axis", nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(4)}), []int{2, 3, 4, 4}, nd.ErrShape, []string{"axis 4", "[2 3 4 4]"}},
		{"MaxPool2D/2d-input", nn.NewMaxPool2D(2, nn.PoolOpts{}), []int{4, 4}, nd.ErrShape, []string{"[4 4]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			initNet(t, tc.block, initializer.Xavier{}, nd.Float32)
			x := randX(cpu0, 2, tc.in...)
			mustNDPanic(t, tc.kind, func() { forward(tc.block, x) }, tc.want...)
		})
	}
}

// TestDeferredInference checks that unknown input sizes stay 0 until the
// first forward pass, that the parameters are not created before it, and
// that afterwards they have the inferred shapes.
func TestDeferredInference(t *testing.T) {
	cases := []struct {
		name   string
		block  gluon.Block
		in     []int
		before map[string][]int
		after  map[string][]int
	}{
		{"Dense", nn.NewDense(7, nn.DenseOpts{}), []int{2, 3, 5},
			map[string][]int{"weight": {7, 0}, "bias": {7}},
			map[string][]int{"weight": {7, 15}, "bias": {7}}},
		{"Dense/no-flatten", nn.NewDense(7, nn.DenseOpts{NoFlatten: true}), []int{2, 3, 5},
			map[string][]int{"weight": {7, 0}, "bias": {7}},
			map[string][]int{"weight": {7, 5}, "bias": {7}}},
		{"Conv2D", nn.NewConv2D(4, 3, nn.Conv2DOpts{}), []int{1, 6, 5, 5},
			map[string][]int{"weight": {4, 0, 3, 3}, "bias": {4}},
			map[string][]int{"weight": {4, 6, 3, 3}, "bias": {4}}},
		{"Conv2D/groups3", nn.NewConv2D(3, 1, nn.Conv2DOpts{Groups: 3}), []int{1, 6, 5, 5},
			map[string][]int{"weight": {3, 0, 1, 1}, "bias": {3}},
			map[string][]int{"weight": {3, 2, 1, 1}, "bias": {3}}},
		{"BatchNorm", nn.NewBatchNorm(nn.BatchNormOpts{}), []int{2, 5, 3, 3},
			map[string][]int{"gamma": {0}, "beta": {0}, "running_mean": {0}, "running_var": {0}},
			map[string][]int{"gamma": {5}, "beta": {5}, "running_mean": {5}, "running_var": {5}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			params := initNet(t, tc.block, initializer.Xavier{}, nd.Float32)
			for n, s := range tc.before {
				p := params.Get(n)
				if p == nil {
					t.Fatalf("no parameter %s in %v", n, params.Names())
				}
				if !slices.Equal(p.Shape(), s) {
					t.Errorf("before forward: %s shape %v, want %v", n, p.Shape(), s)
				}
				if slices.Contains(s, 0) && p.Initialized() {
					t.Errorf("before forward: %s with unknown shape is initialised", n)
				}
			}
			mustNDPanic(t, nd.ErrArgument, func() { tc.block.Meta().Params()[0].Data(cpu0) }, "not initialised yet")
			forward(tc.block, randX(cpu0, 3, tc.in...))
			for n, s := range tc.after {
				p := params.Get(n)
				if !slices.Equal(p.Shape(), s) {
					t.Errorf("after forward: %s shape %v, want %v", n, p.Shape(), s)
				}
				if !p.Initialized() {
					t.Errorf("after forward: %s not initialised", n)
				}
				if d := p.Data(cpu0); !slices.Equal(d.Shape(), s) {
					t.Errorf("after forward: %s data shape %v, want %v", n, d.Shape(), s)
				}
			}
		})
	}
}

// TestShapeContradictionPanics checks that an explicit input size that
// does not fit the input, or an input that does not fit the size inferred
// earlier, panics with a shape error naming both shapes.
func TestShapeContradictionPanics(t *testing.T) {
	cases := []struct {
		name  string
		block gluon.Block
		first []int // inferred at a first forward pass (nil: none)
		in    []int
		want  []string
	}{
		{"Dense/explicit", nn.NewDense(4, nn.DenseOpts{InUnits: 3}), nil, []int{2, 5},
			[]string{"weight", "[4 3]", "[4 5]"}},
		{"Dense/explicit-flattened", nn.NewDense(4, nn.DenseOpts{InUnits: 6}), nil, []int{2, 2, 2},
			[]string{"weight", "[4 6]", "[4 4]"}},
		{"Dense/inferred", nn.NewDense(4, nn.DenseOpts{}), []int{2, 5}, []int{2, 6},
			[]string{"weight", "[4 5]", "[4 6]"}},
		{"Conv2D/explicit", nn.NewConv2D(4, 3, nn.Conv2DOpts{InChannels: 2}), nil, []int{1, 3, 5, 5},
			[]string{"weight", "[4 2 3 3]", "[4 3 3 3]"}},
		{"Conv2D/inferred", nn.NewConv2D(4, 3, nn.Conv2DOpts{}), []int{1, 3, 5, 5}, []int{1, 2, 5, 5},
			[]string{"weight", "[4 3 3 3]", "[4 2 3 3]"}},
		{"BatchNorm/explicit", nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 3}), nil, []int{2, 4, 2, 2},
			[]string{"[3]", "[4]"}},
		{"BatchNorm/inferred", nn.NewBatchNorm(nn.BatchNormOpts{}), []int{2, 3}, []int{2, 5},
			[]string{"[3]", "[5]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			initNet(t, tc.block, initializer.Xavier{}, nd.Float32)
			if tc.first != nil {
				forward(tc.block, randX(cpu0, 4, tc.first...))
			}
			x := randX(cpu0, 5, tc.in...)
			mustNDPanic(t, nd.ErrShape, func() { forward(tc.block, x) }, tc.want...)
		})
	}
}

package nn_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

func TestDenseValues(t *testing.T) {
	t.Run("hand", func(t *testing.T) {
		d := nn.NewDense(2, nn.DenseOpts{})
		initNet(t, d, initializer.Xavier{}, nd.Float32)
		d.Weight.SetData(nd.FromSlice(cpu0, []float32{1, 2, 3, 4, 5, 6}, 2, 3))
		d.Bias.SetData(nd.FromSlice(cpu0, []float32{0.5, -1}, 2))
		x := nd.FromSlice(cpu0, []float32{1, 0, -1, 2, 1, 1}, 2, 3)
		// [1,0,-1]·[1,2,3] = -2 (+0.5); ·[4,5,6] = -2 (-1);
		// [2,1,1]·[1,2,3] = 7 (+0.5); ·[4,5,6] = 19 (-1).
		closeSlice(t, "dense", forward(d, x).Float64s(), []float64{-1.5, -3, 7.5, 18}, 1e-6)
	})
	cases := []struct {
		name string
		opts nn.DenseOpts
		in   []int
		ref  func(x, w, b *nd.NDArray) *nd.NDArray
	}{
		{"2d", nn.DenseOpts{}, []int{4, 6},
			func(x, w, b *nd.NDArray) *nd.NDArray { return nd.FullyConnected(x, w, b) }},
		{"flatten-4d", nn.DenseOpts{}, []int{2, 2, 3, 2},
			func(x, w, b *nd.NDArray) *nd.NDArray { return nd.FullyConnected(nd.Flatten(x), w, b) }},
		{"no-flatten-3d", nn.DenseOpts{NoFlatten: true}, []int{2, 3, 4},
			func(x, w, b *nd.NDArray) *nd.NDArray {
				return nd.Reshape(nd.FullyConnected(nd.Reshape(x, 6, 4), w, b), 2, 3, 5)
			}},
		{"no-bias", nn.DenseOpts{NoBias: true}, []int{4, 6},
			func(x, w, _ *nd.NDArray) *nd.NDArray { return nd.FullyConnected(x, w, nil) }},
		{"relu", nn.DenseOpts{Act: "relu"}, []int{4, 6},
			func(x, w, b *nd.NDArray) *nd.NDArray { return nd.Relu(nd.FullyConnected(x, w, b)) }},
		{"tanh-flatten", nn.DenseOpts{Act: "tanh"}, []int{3, 2, 3},
			func(x, w, b *nd.NDArray) *nd.NDArray { return nd.Tanh(nd.FullyConnected(nd.Flatten(x), w, b)) }},
		{"sigmoid", nn.DenseOpts{Act: "sigmoid"}, []int{4, 6},
			func(x, w, b *nd.NDArray) *nd.NDArray { return nd.Sigmoid(nd.FullyConnected(x, w, b)) }},
		{"softrelu-no-flatten", nn.DenseOpts{Act: "softrelu", NoFlatten: true}, []int{2, 2, 3},
			func(x, w, b *nd.NDArray) *nd.NDArray {
				return nd.Softrelu(nd.Reshape(nd.FullyConnected(nd.Reshape(x, 4, 3), w, b), 2, 2, 5))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := nn.NewDense(5, tc.opts)
			initNet(t, d, initializer.Xavier{}, nd.Float32)
			x := randX(cpu0, 6, tc.in...)
			forward(d, x) // infers in_units
			w := randX(cpu0, 7, d.Weight.Shape()...)
			d.Weight.SetData(w)
			var b *nd.NDArray
			if d.Bias != nil {
				b = randX(cpu0, 8, 5)
				d.Bias.SetData(b)
			}
			y := forward(d, x)
			allClose(t, "dense", y, tc.ref(x, w, b), 1e-6, 1e-6)
		})
	}
}

func TestConv2DValues(t *testing.T) {
	t.Run("hand", func(t *testing.T) {
		// One 2x2 kernel of ones over a 3x3 ramp: each output is the sum of
		// a 2x2 window, plus the bias.
		c := nn.NewConv2D(1, 2, nn.Conv2DOpts{})
		initNet(t, c, initializer.Xavier{}, nd.Float32)
		x := seq(cpu0, 1, 1, 1, 1, 3, 3) // 1..9
		forward(c, x)
		c.Weight.SetData(nd.Ones(cpu0, nd.Float32, 1, 1, 2, 2))
		c.Bias.SetData(nd.FromSlice(cpu0, []float32{10}, 1))
		closeSlice(t, "conv", forward(c, x).Float64s(), []float64{22, 26, 34, 38}, 1e-6)
	})
	cases := []struct {
		name   string
		ch, k  int
		opts   nn.Conv2DOpts
		in     []int
		nd     nd.ConvOpts
		relu   bool
		noBias bool
	}{
		{"basic", 3, 3, nn.Conv2DOpts{}, []int{2, 2, 5, 5}, nd.ConvOpts{}, false, false},
		{"stride-pad", 3, 3, nn.Conv2DOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}, []int{2, 2, 6, 6},
			nd.ConvOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}, false, false},
		{"dilate", 2, 3, nn.Conv2DOpts{Dilate: [2]int{2, 2}}, []int{1, 2, 7, 7},
			nd.ConvOpts{Dilate: [2]int{2, 2}}, false, false},
		{"groups", 4, 3, nn.Conv2DOpts{Groups: 2, Pad: [2]int{1, 1}}, []int{2, 4, 5, 5},
			nd.ConvOpts{Groups: 2, Pad: [2]int{1, 1}}, false, false},
		{"kernel-2x3", 2, 0, nn.Conv2DOpts{Kernel: [2]int{2, 3}, Stride: [2]int{1, 2}}, []int{1, 3, 5, 6},
			nd.ConvOpts{Stride: [2]int{1, 2}}, false, false},
		{"relu-no-bias", 3, 3, nn.Conv2DOpts{Act: "relu", NoBias: true}, []int{2, 2, 5, 5},
			nd.ConvOpts{}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := nn.NewConv2D(tc.ch, tc.k, tc.opts)
			initNet(t, c, initializer.Xavier{}, nd.Float32)
			x := randX(cpu0, 9, tc.in...)
			forward(c, x)
			w := randX(cpu0, 10, c.Weight.Shape()...)
			c.Weight.SetData(w)
			var b *nd.NDArray
			if !tc.noBias {
				b = randX(cpu0, 11, tc.ch)
				c.Bias.SetData(b)
			} else if c.Bias != nil {
				t.Fatal("NoBias layer has a bias")
			}
			want := nd.Conv2D(x, w, b, tc.nd)
			if tc.relu {
				want = nd.Relu(want)
			}
			allClose(t, "conv", forward(c, x), want, 1e-5, 1e-5)
		})
	}
}

func TestPoolValues(t *testing.T) {
	x44 := seq(cpu0, 1, 0, 1, 1, 4, 4) // 0..15
	x33 := seq(cpu0, 1, 1, 1, 1, 3, 3) // 1..9
	x55 := seq(cpu0, 1, 0, 1, 1, 5, 5) // 0..24
	cases := []struct {
		name  string
		block gluon.Block
		x     *nd.NDArray
		want  []float64
	}{
		{"max2", nn.NewMaxPool2D(2, nn.PoolOpts{}), x44, []float64{5, 7, 13, 15}},
		{"avg2", nn.NewAvgPool2D(2, nn.PoolOpts{}), x44, []float64{2.5, 4.5, 10.5, 12.5}},
		{"max3-stride1", nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}}), x44, []float64{10, 11, 14, 15}},
		{"max2-floor", nn.NewMaxPool2D(2, nn.PoolOpts{}), x55, []float64{6, 8, 16, 18}},
		{"max2-ceil", nn.NewMaxPool2D(2, nn.PoolOpts{CeilMode: true}), x55,
			[]float64{6, 8, 9, 16, 18, 19, 21, 23, 24}},
		// Window 2, stride 1, pad 1 over 1..9: the corner windows hold one
		// real element. Gluon's default counts the padding (divides by 4).
		{"avg2-pad1-include", nn.NewAvgPool2D(2, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}}), x33,
			[]float64{
				1.0 / 4, 3.0 / 4, 5.0 / 4, 3.0 / 4,
				5.0 / 4, 12.0 / 4, 16.0 / 4, 9.0 / 4,
				11.0 / 4, 24.0 / 4, 28.0 / 4, 15.0 / 4,
				7.0 / 4, 15.0 / 4, 17.0 / 4, 9.0 / 4}},
		{"avg2-pad1-exclude", nn.NewAvgPool2D(2, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}, ExcludePad: true}), x33,
			[]float64{
				1, 1.5, 2.5, 3,
				2.5, 3, 4, 4.5,
				5.5, 6, 7, 7.5,
				7, 7.5, 8.5, 9}},
		{"max2-pad1", nn.NewMaxPool2D(2, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}}), x33,
			[]float64{1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 9, 7, 8, 9, 9}},
		{"global-max", nn.NewGlobalMaxPool2D(), x55, []float64{24}},
		{"global-avg", nn.NewGlobalAvgPool2D(), x55, []float64{12}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			closeSlice(t, tc.name, forward(tc.block, tc.x).Float64s(), tc.want, 1e-6)
		})
	}
	t.Run("global-vs-reductions", func(t *testing.T) {
		x := randX(cpu0, 12, 2, 3, 4, 5)
		allClose(t, "max", forward(nn.NewGlobalMaxPool2D(), x), nd.MaxKeepDims(x, 2, 3), 0, 0)
		allClose(t, "avg", forward(nn.NewGlobalAvgPool2D(), x), nd.MeanKeepDims(x, 2, 3), 1e-6, 1e-5)
	})
	t.Run("vs-nd-pool", func(t *testing.T) {
		x := randX(cpu0, 13, 2, 3, 7, 6)
		o := nn.PoolOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, CeilMode: true}
		allClose(t, "max", forward(nn.NewMaxPool2D(3, o), x), nd.Pool2D(x, nd.PoolOpts{
			Type: nd.PoolMax, Kernel: [2]int{3, 3}, Stride: o.Stride, Pad: o.Pad, CeilMode: true}), 0, 0)
		allClose(t, "avg", forward(nn.NewAvgPool2D(3, o), x), nd.Pool2D(x, nd.PoolOpts{
			Type: nd.PoolAvg, Kernel: [2]int{3, 3}, Stride: o.Stride, Pad: o.Pad, CeilMode: true}), 0, 0)
	})
}

func TestFlattenValues(t *testing.T) {
	x := randX(cpu0, 14, 2, 3, 2, 2)
	y := forward(nn.NewFlatten(), x)
	if !slices.Equal(y.Shape(), []int{2, 12}) {
		t.Fatalf("shape %v", y.Shape())
	}
	closeSlice(t, "flatten keeps row-major order", y.Float64s(), x.Float64s(), 0)
}

func TestDropoutModes(t *testing.T) {
	const n = 4000
	x := nd.Ones(cpu0, nd.Float32, n)
	count := func(y *nd.NDArray) (zeros int, kept []float64) {
		for _, v := range y.Float64s() {
			if v == 0 {
				zeros++
			} else {
				kept = append(kept, v)
			}
		}
		return zeros, kept
	}
	for _, rate := range []float64{0.2, 0.5, 0.8} {
		t.Run(fmt.Sprintf("rate%g", rate), func(t *testing.T) {
			d := nn.NewDropout(rate)
			nd.Seed(15)
			t.Run("train", func(t *testing.T) {
				y := forwardTrain(d, x)
				zeros, kept := count(y)
				if frac := float64(zeros) / n; math.Abs(frac-rate) > 0.04 {
					t.Errorf("dropped fraction %.3f, want about %g", frac, rate)
				}
				for _, v := range kept {
					if math.Abs(v-1/(1-rate)) > 1e-5 {
						t.Fatalf("kept value %g, want 1/(1-%g) = %g", v, rate, 1/(1-rate))
					}
				}
			})
			t.Run("record-predict", func(t *testing.T) {
				var y *nd.NDArray
				autograd.Record(func() { autograd.PredictMode(func() { y = d.Forward(x) }) })
				allClose(t, "identity", y, x, 0, 0)
			})
			t.Run("record-train-false", func(t *testing.T) {
				var y *nd.NDArray
				autograd.RecordMode(false, func() { y = d.Forward(x) })
				allClose(t, "identity", y, x, 0, 0)
			})
			t.Run("no-scope", func(t *testing.T) {
				allClose(t, "identity", d.Forward(x), x, 0, 0)
			})
			t.Run("train-mode-without-recording", func(t *testing.T) {
				var y *nd.NDArray
				autograd.TrainMode(func() { y = d.Forward(x) })
				if zeros, _ := count(y); zeros == 0 {
					t.Error("training mode dropped nothing")
				}
			})
		})
	}
	t.Run("rate0", func(t *testing.T) {
		allClose(t, "identity", forwardTrain(nn.NewDropout(0), x), x, 0, 0)
	})
	t.Run("gradient-follows-mask", func(t *testing.T) {
		d := nn.NewDropout(0.5)
		xx := nd.Ones(cpu0, nd.Float32, 200)
		xx.AttachGrad(nd.GradWrite)
		var y *nd.NDArray
		autograd.Record(func() {
			y = d.Forward(xx)
			autograd.Backward(nd.Sum(y))
		})
		closeSlice(t, "grad equals y (mask·2)", xx.Grad().Float64s(), y.Float64s(), 1e-6)
	})
}

func TestBatchNormValues(t *testing.T) {
	const eps = 1e-5
	// x [4, 2, 1, 1]: channel 0 holds 1, 2, 3, 4 and channel 1 holds
	// 10, 20, 30, 40.
	x := nd.FromSlice(cpu0, []float32{1, 10, 2, 20, 3, 30, 4, 40}, 4, 2, 1, 1)
	gamma := []float64{2, 0.5}
	beta := []float64{1, -1}
	mean := []float64{2.5, 25}
	bvar := []float64{1.25, 125}          // biased batch variance
	uvar := []float64{5.0 / 3, 500.0 / 3} // unbiased, for running_var
	xv := x.Float64s()

	newBN := func(o nn.BatchNormOpts) *nn.BatchNorm {
		b := nn.NewBatchNorm(o)
		initNet(t, b, initializer.Xavier{}, nd.Float32)
		forward(b, x)
		if b.Gamma != nil {
			b.Gamma.SetData(nd.FromSlice(cpu0, gamma, 2))
		}
		if b.Beta != nil {
			b.Beta.SetData(nd.FromSlice(cpu0, beta, 2))
		}
		return b
	}
	expect := func(m, v []float64, scale, shift bool) []float64 {
		out := make([]float64, len(xv))
		for i, val := range xv {
			c := i % 2
			y := (val - m[c]) / math.Sqrt(v[c]+eps)
			if scale {
				y *= gamma[c]
			}
			if shift {
				y += beta[c]
			}
			out[i] = y
		}
		return out
	}

	t.Run("train-uses-batch-stats", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{})
		closeSlice(t, "y", forwardTrain(b, x).Float64s(), expect(mean, bvar, true, true), 1e-4)
		// running = 0.9·running + 0.1·batch, from (0, 1).
		closeSlice(t, "running_mean", b.RunningMean.Data(cpu0).Float64s(), []float64{0.25, 2.5}, 1e-5)
		closeSlice(t, "running_var", b.RunningVar.Data(cpu0).Float64s(),
			[]float64{0.9 + 0.1*uvar[0], 0.9 + 0.1*uvar[1]}, 1e-4)
	})
	t.Run("momentum", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{Momentum: new(0.5)})
		forwardTrain(b, x)
		forwardTrain(b, x)
		// Two steps from 0: 0.5·(0.5·0 + 0.5·m) + 0.5·m = 0.75·m.
		closeSlice(t, "running_mean", b.RunningMean.Data(cpu0).Float64s(), []float64{0.75 * mean[0], 0.75 * mean[1]}, 1e-4)
	})
	t.Run("predict-uses-running-stats", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{})
		rm, rv := []float64{1, 20}, []float64{4, 100}
		b.RunningMean.SetData(nd.FromSlice(cpu0, rm, 2))
		b.RunningVar.SetData(nd.FromSlice(cpu0, rv, 2))
		closeSlice(t, "y", forward(b, x).Float64s(), expect(rm, rv, true, true), 1e-4)
		// Predict mode leaves the running statistics alone.
		closeSlice(t, "running_mean", b.RunningMean.Data(cpu0).Float64s(), rm, 0)
		closeSlice(t, "running_var", b.RunningVar.Data(cpu0).Float64s(), rv, 0)
		// So does recording with train_mode=false.
		var y *nd.NDArray
		autograd.RecordMode(false, func() { y = b.Forward(x) })
		closeSlice(t, "y (record, predict)", y.Float64s(), expect(rm, rv, true, true), 1e-4)
		closeSlice(t, "running_mean after record(predict)", b.RunningMean.Data(cpu0).Float64s(), rm, 0)
	})
	t.Run("fresh-predict-is-identity-scaled", func(t *testing.T) {
		b := nn.NewBatchNorm(nn.BatchNormOpts{})
		initNet(t, b, initializer.Xavier{}, nd.Float32)
		want := make([]float64, len(xv))
		for i, v := range xv {
			want[i] = v / math.Sqrt(1+eps)
		}
		closeSlice(t, "y", forward(b, x).Float64s(), want, 1e-4)
	})
	t.Run("use-global-stats", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{UseGlobalStats: true})
		rm, rv := []float64{1, 20}, []float64{4, 100}
		b.RunningMean.SetData(nd.FromSlice(cpu0, rm, 2))
		b.RunningVar.SetData(nd.FromSlice(cpu0, rv, 2))
		closeSlice(t, "y", forwardTrain(b, x).Float64s(), expect(rm, rv, true, true), 1e-4)
	})
	t.Run("epsilon", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{Epsilon: new(0.75)})
		y := forward(b, x).Float64s()
		// running stats (0, 1): y = x/sqrt(1.75)·gamma + beta.
		want := make([]float64, len(xv))
		for i, v := range xv {
			want[i] = v/math.Sqrt(1.75)*gamma[i%2] + beta[i%2]
		}
		closeSlice(t, "y", y, want, 1e-4)
	})
	t.Run("no-scale", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{NoScale: true})
		if b.Gamma != nil {
			t.Fatal("NoScale layer has gamma")
		}
		closeSlice(t, "y", forwardTrain(b, x).Float64s(), expect(mean, bvar, false, true), 1e-4)
	})
	t.Run("no-center", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{NoCenter: true})
		if b.Beta != nil {
			t.Fatal("NoCenter layer has beta")
		}
		closeSlice(t, "y", forwardTrain(b, x).Float64s(), expect(mean, bvar, true, false), 1e-4)
	})
	t.Run("no-scale-no-center", func(t *testing.T) {
		b := newBN(nn.BatchNormOpts{NoScale: true, NoCenter: true})
		closeSlice(t, "y", forwardTrain(b, x).Float64s(), expect(mean, bvar, false, false), 1e-4)
	})
	t.Run("axis-last", func(t *testing.T) {
		// The same data laid out as [4, 2] with channels on the last axis
		// (axis -1) and on axis 1 must normalise identically.
		x2 := nd.Reshape(x, 4, 2)
		for _, o := range []nn.BatchNormOpts{{Axis: new(-1)}, {Axis: new(1)}} {
			b := nn.NewBatchNorm(o)
			initNet(t, b, initializer.Xavier{}, nd.Float32)
			closeSlice(t, fmt.Sprintf("axis %d", *o.Axis), forwardTrain(b, x2).Float64s(), expect(mean, bvar, false, false), 1e-4)
		}
	})
	t.Run("axis0", func(t *testing.T) {
		// Transposed: [2, 4] with channels on axis 0.
		xt := nd.Transpose(nd.Reshape(x, 4, 2))
		b := nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(0)})
		initNet(t, b, initializer.Xavier{}, nd.Float32)
		y := nd.Transpose(forwardTrain(b, xt))
		closeSlice(t, "y", y.Float64s(), expect(mean, bvar, false, false), 1e-4)
		closeSlice(t, "running_mean", b.RunningMean.Data(cpu0).Float64s(), []float64{0.25, 2.5}, 1e-5)
	})
	t.Run("train-output-moments", func(t *testing.T) {
		b := nn.NewBatchNorm(nn.BatchNormOpts{})
		initNet(t, b, initializer.Xavier{}, nd.Float32)
		xr := nd.AddScalar(nd.MulScalar(randX(cpu0, 16, 8, 3, 4, 4), 3), 2)
		y := forwardTrain(b, xr)
		m := nd.Mean(y, 0, 2, 3).Float64s()
		v := nd.Mean(nd.Square(y), 0, 2, 3).Float64s()
		for c := range 3 {
			if math.Abs(m[c]) > 1e-4 || math.Abs(v[c]-1) > 1e-3 {
				t.Errorf("channel %d: mean %g, mean square %g; want 0 and 1", c, m[c], v[c])
			}
		}
	})
}

func TestBatchNormRunningStatsHaveNoGradient(t *testing.T) {
	b := nn.NewBatchNorm(nn.BatchNormOpts{})
	params := initNet(t, b, initializer.Xavier{}, nd.Float32)
	for name, want := range map[string]nd.GradReq{
		"gamma": nd.GradWrite, "beta": nd.GradWrite, "running_mean": nd.GradNull, "running_var": nd.GradNull,
	} {
		if got := params.Get(name).GradReq(); got != want {
			t.Errorf("%s grad_req %v, want %v", name, got, want)
		}
	}
}

// TestInitializationByName checks the name rules through real layers: the
// global initializer sets weights; biases, betas and running means start
// at zero; gammas and running variances at one.
func TestInitializationByName(t *testing.T) {
	net := nn.NewSequential(
		nn.NewConv2D(2, 3, nn.Conv2DOpts{InChannels: 1}),
		nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 2}),
		nn.NewDense(3, nn.DenseOpts{InUnits: 2}),
	)
	params := initNet(t, net, initializer.Constant{Value: 0.25}, nd.Float32)
	want := map[string]float64{
		"conv0.weight": 0.25, "conv0.bias": 0,
		"batchnorm0.gamma": 1, "batchnorm0.beta": 0,
		"batchnorm0.running_mean": 0, "batchnorm0.running_var": 1,
		"dense0.weight": 0.25, "dense0.bias": 0,
	}
	for n, v := range want {
		for i, got := range params.Get(n).Data(cpu0).Float64s() {
			if got != v {
				t.Errorf("%s[%d] = %g, want %g", n, i, got, v)
				break
			}
		}
	}
	t.Run("default-uniform-0.07", func(t *testing.T) {
		d := nn.NewDense(50, nn.DenseOpts{InUnits: 40})
		initNet(t, d, nil, nd.Float32)
		w := d.Weight.Data(cpu0).Float64s()
		lo, hi := slices.Min(w), slices.Max(w)
		if lo < -0.07 || hi > 0.07 || hi < 0.06 || lo > -0.06 {
			t.Errorf("default init range [%g, %g], want about [-0.07, 0.07]", lo, hi)
		}
	})
}

// TestLayerInitOptions checks WeightInit and BiasInit. A parameter's own
// initializer replaces the global one, as in Gluon (where a parameter's
// init bypasses the initializer's name rules).
func TestLayerInitOptions(t *testing.T) {
	cases := []struct {
		name  string
		block func() (gluon.Block, *gluon.Parameter, *gluon.Parameter)
	}{
		{"Dense", func() (gluon.Block, *gluon.Parameter, *gluon.Parameter) {
			d := nn.NewDense(3, nn.DenseOpts{InUnits: 2,
				WeightInit: initializer.Constant{Value: 0.5}, BiasInit: initializer.Constant{Value: -2}})
			return d, d.Weight, d.Bias
		}},
		{"Conv2D", func() (gluon.Block, *gluon.Parameter, *gluon.Parameter) {
			c := nn.NewConv2D(3, 1, nn.Conv2DOpts{InChannels: 2,
				WeightInit: initializer.Constant{Value: 0.5}, BiasInit: initializer.Constant{Value: -2}})
			return c, c.Weight, c.Bias
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, w, bias := tc.block()
			initNet(t, b, initializer.Uniform{Scale: 1}, nd.Float32)
			for i, v := range w.Data(cpu0).Float64s() {
				if v != 0.5 {
					t.Fatalf("weight[%d] = %g, want WeightInit's 0.5", i, v)
				}
			}
			for i, v := range bias.Data(cpu0).Float64s() {
				if v != -2 {
					t.Fatalf("bias[%d] = %g, want BiasInit's -2", i, v)
				}
			}
		})
	}
}

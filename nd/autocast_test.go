package nd_test

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// TestAutocastClasses: inside an autocast scope each op runs in the dtype
// of its class — GEMM and convolution in the half dtype, softmax, sums and
// exponentials in float32, binary ops in the widest input dtype, the
// neutral ops in their input's — and outside it everything is float32
// again.
func TestAutocastClasses(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(5)
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 4, 6)
	w := nd.RandomUniform(dev, nd.Float32, -1, 1, 3, 6)
	b := nd.RandomUniform(dev, nd.Float32, -1, 1, 3)
	img := nd.RandomUniform(dev, nd.Float32, -1, 1, 2, 3, 5, 5)
	k := nd.RandomUniform(dev, nd.Float32, -1, 1, 4, 3, 3, 3)
	gamma, beta := nd.Ones(dev, nd.Float32, 4), nd.Zeros(dev, nd.Float32, 4)
	rm, rv := nd.Zeros(dev, nd.Float32, 4), nd.Ones(dev, nd.Float32, 4)
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			nd.Autocast(dt, func() {
				y := nd.FullyConnected(x, w, b)
				conv := nd.Conv2D(img, k, nil, nd.ConvOpts{Pad: [2]int{1, 1}})
				cases := []struct {
					name string
					got  *nd.NDArray
					want nd.DType
				}{
					{"FullyConnected", y, dt},
					{"MatMul", nd.MatMul(x, nd.Transpose(w)), dt},
					{"Conv2D", conv, dt},
					{"Relu (neutral)", nd.Relu(y), dt},
					{"MaxPool2D (neutral)", nd.MaxPool2D(conv, [2]int{2, 2}, [2]int{2, 2}, [2]int{}), dt},
					{"BatchNorm (neutral, float32 statistics)", nd.BatchNorm(conv, gamma, beta, rm, rv, nd.BatchNormOpts{Axis: new(1)}), dt},
					{"Softmax (float32)", nd.Softmax(y, -1), nd.Float32},
					{"Exp (float32)", nd.Exp(y), nd.Float32},
					{"Sum (float32)", nd.Sum(nd.Softmax(y, -1)), nd.Float32},
					{"Add half+half", nd.Add(y, y), dt},
					{"Add half+float32 (widest)", nd.Add(y, nd.Ones(dev, nd.Float32, 3)), nd.Float32},
					{"Concat (widest)", nd.Concat([]*nd.NDArray{y, nd.Ones(dev, nd.Float32, 4, 2)}, 1), nd.Float32},
				}
				for _, c := range cases {
					if c.got.DType() != c.want {
						t.Errorf("%s: %v, want %v", c.name, c.got.DType(), c.want)
					}
				}
			})
			if got := nd.FullyConnected(x, w, b).DType(); got != nd.Float32 {
				t.Errorf("after the scope: %v", got)
			}
			// Float32 turns it off inside.
			nd.Autocast(dt, func() {
				nd.Autocast(nd.Float32, func() {
					if got := nd.FullyConnected(x, w, b).DType(); got != nd.Float32 {
						t.Errorf("autocast off inside on: %v", got)
					}
				})
			})
		})
	}
}

// TestAutocastGradients: under autocast a float32 weight gets a float32
// gradient through the recorded casts, within half precision's rounding of
// the float32 gradient; the half result itself is within one rounding of
// the float32 computation on rounded inputs.
func TestAutocastGradients(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(6)
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 8, 16)
	w := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 10, 16)
	b := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 10)
	labels := nd.FromSlice(dev, []int64{0, 1, 2, 3, 4, 5, 6, 7})
	loss := func() *nd.NDArray {
		return nd.Sum(nd.SoftmaxCrossEntropy(nd.Relu(nd.FullyConnected(x, w, b)), labels, -1))
	}
	grads := func(dt nd.DType) (l float64, gw, gb []float64) {
		w.AttachGrad(nd.GradWrite)
		b.AttachGrad(nd.GradWrite)
		var out *nd.NDArray
		exit := nd.EnterRecording(true)
		if dt != nd.Float32 {
			nd.Autocast(dt, func() { out = loss() })
		} else {
			out = loss()
		}
		exit()
		if out.DType() != nd.Float32 {
			t.Fatalf("%v: loss is %v, want float32 (the loss is in autocast's float32 list)", dt, out.DType())
		}
		nd.Backward([]*nd.NDArray{out}, nil, false)
		if w.Grad().DType() != nd.Float32 || b.Grad().DType() != nd.Float32 {
			t.Fatalf("%v: gradients %v %v, want float32", dt, w.Grad().DType(), b.Grad().DType())
		}
		return out.Float64s()[0], w.Grad().Float64s(), b.Grad().Float64s()
	}
	l32, gw32, gb32 := grads(nd.Float32)
	for _, tc := range []struct {
		dt  nd.DType
		tol float64 // relative L2 of the gradients
	}{{nd.Float16, 2e-3}, {nd.BFloat16, 1e-2}} {
		l, gw, gb := grads(tc.dt)
		if math.Abs(l-l32) > tc.tol*math.Abs(l32) {
			t.Errorf("%v: loss %v, float32 %v", tc.dt, l, l32)
		}
		t.Logf("%v: loss %v vs %v, weight gradient %.3g, bias %.3g", tc.dt, l, l32, numcmp.RelL2(gw, gw32), numcmp.RelL2(gb, gb32))
		if e := numcmp.RelL2(gw, gw32); e > tc.tol || e == 0 {
			t.Errorf("%v: weight gradient off by %.3g relative (want (0, %g])", tc.dt, e, tc.tol)
		}
		if e := numcmp.RelL2(gb, gb32); e > tc.tol || e == 0 {
			t.Errorf("%v: bias gradient off by %.3g relative (want (0, %g])", tc.dt, e, tc.tol)
		}
	}
}

// TestHalfGradients: gradients flow to half-precision leaves, in their
// dtype, close to the float32 gradients of the same values, through ops of
// all three half forms (the elementwise ones computing on halves;
// convolution, pooling and FullyConnected widening inside; softmax in
// float32 behind recorded casts).
func TestHalfGradients(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(7)
	x32 := nd.RandomUniform(dev, nd.Float32, -1, 1, 2, 3, 6, 6)
	k32 := nd.RandomUniform(dev, nd.Float32, -0.5, 0.5, 4, 3, 3, 3)
	run := func(dt nd.DType) (gx, gk []float64, gdt nd.DType) {
		x, k := x32.AsType(dt).Detach(), k32.AsType(dt).Detach()
		x.AttachGrad(nd.GradWrite)
		k.AttachGrad(nd.GradWrite)
		exit := nd.EnterRecording(true)
		c := nd.Conv2D(x, k, nil, nd.ConvOpts{Pad: [2]int{1, 1}})
		y := nd.Add(nd.MaxPool2D(c, [2]int{2, 2}, [2]int{2, 2}, [2]int{}), nd.AvgPool2D(c, [2]int{2, 2}, [2]int{2, 2}, [2]int{}))
		f := nd.FullyConnected(nd.Reshape(y, 2, -1), nd.Reshape(nd.Tanh(y), 2, -1), nil)
		l := nd.Add(nd.Sum(nd.Mul(nd.Tanh(y), nd.LogSoftmax(y, 1))), nd.Sum(nd.Square(f)))
		exit()
		nd.Backward([]*nd.NDArray{l}, nil, false)
		return x.Grad().Float64s(), k.Grad().Float64s(), x.Grad().DType()
	}
	gx32, gk32, _ := run(nd.Float32)
	for _, tc := range []struct {
		dt  nd.DType
		tol float64
	}{{nd.Float16, 5e-3}, {nd.BFloat16, 4e-2}} {
		gx, gk, gdt := run(tc.dt)
		if gdt != tc.dt {
			t.Errorf("%v: gradient dtype %v", tc.dt, gdt)
		}
		if e := numcmp.RelL2(gx, gx32); e > tc.tol {
			t.Errorf("%v: input gradient off by %.3g relative", tc.dt, e)
		}
		if e := numcmp.RelL2(gk, gk32); e > tc.tol {
			t.Errorf("%v: filter gradient off by %.3g relative", tc.dt, e)
		}
	}
}

// TestAutocastFollowsSessions: a session that autocasts changes only its
// own ops; a server in another session, running at the same time, computes
// in float32.
func TestAutocastFollowsSessions(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.RandomUniform(dev, nd.Float32, -1, 1, 4, 6)
	w := nd.RandomUniform(dev, nd.Float32, -1, 1, 3, 6)
	learner := nd.NewSession("learner")
	server := nd.NewSession("server")
	var wg sync.WaitGroup
	wg.Add(2)
	errs := make(chan string, 200)
	go func() {
		defer wg.Done()
		learner.Autocast(nd.Float16, func() {
			for range 100 {
				if dt := nd.MatMul(learner.Use(x), nd.Transpose(w)).DType(); dt != nd.Float16 {
					errs <- "learner: " + dt.String()
				}
			}
		})
	}()
	go func() {
		defer wg.Done()
		server.PredictMode(func() {
			for range 100 {
				if dt := nd.MatMul(x, nd.Transpose(w)).DType(); dt != nd.Float32 {
					errs <- "server: " + dt.String()
				}
			}
		})
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestAutocastReductionsFloat32: under autocast the sums, means, norms and
// variances of half arrays are float32 (autocast's float32 list), so a sum
// that would overflow float16 does not.
func TestAutocastReductionsFloat32(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Full(dev, nd.Float16, 1000, 100)
	nd.Autocast(nd.Float16, func() {
		for name, got := range map[string]*nd.NDArray{
			"Sum": nd.Sum(x), "Mean": nd.Mean(x), "Norm": nd.Norm(x, 2), "Var": nd.Var(x, 0), "Std": nd.Std(x, 1),
			"SumKeepDims": nd.SumKeepDims(x, 0),
		} {
			if got.DType() != nd.Float32 {
				t.Errorf("%s: %v, want float32", name, got.DType())
			}
		}
		if s := nd.Sum(x).Float64s()[0]; s != 100000 {
			t.Errorf("Sum = %v, want 100000", s)
		}
	})
	if s := nd.Sum(x); s.DType() != nd.Float16 || !math.IsInf(s.Float64s()[0], 1) {
		t.Errorf("outside autocast Sum is %v %v, want float16 +Inf (65504 is float16's largest)", s.DType(), s.Float64s())
	}
}

// TestHalfIndexOperands: index operands do not decide an op's dtype:
// float32 data gathered with float16 indices stays float32 and equals the
// result with Int64 indices.
func TestHalfIndexOperands(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1.0001, 2.0001, 3.0001, 4.0001}, 2, 2)
	i16 := nd.FromSlice(dev, []float32{1, 0}, 2).AsType(nd.Float16)
	i64 := nd.FromSlice(dev, []int64{1, 0}, 2)
	for name, f := range map[string]func(idx *nd.NDArray) *nd.NDArray{
		"Pick":                func(idx *nd.NDArray) *nd.NDArray { return nd.Pick(x, idx, 1) },
		"Take":                func(idx *nd.NDArray) *nd.NDArray { return nd.Take(x, idx, 0) },
		"SoftmaxCrossEntropy": func(idx *nd.NDArray) *nd.NDArray { return nd.SoftmaxCrossEntropy(x, idx, 1) },
	} {
		got, want := f(i16), f(i64)
		if got.DType() != nd.Float32 || !slices.Equal(got.Float32s(), want.Float32s()) {
			t.Errorf("%s with float16 indices: %v %v, want float32 %v", name, got.DType(), got.Float32s(), want.Float32s())
		}
	}
}

// TestMixedDTypesOutsideAutocast: outside autocast an op given float16 and
// float32 data fails with ErrDType, as Add does.
func TestMixedDTypesOutsideAutocast(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1, 2}, 1, 2).AsType(nd.Float16)
	w := nd.FromSlice(dev, []float32{1, 2}, 1, 2)
	for name, f := range map[string]func(){
		"Add":            func() { nd.Add(x, w) },
		"FullyConnected": func() { nd.FullyConnected(x, w, nil) },
		"MatMul":         func() { nd.MatMul(x, nd.Transpose(w)) },
	} {
		err := nd.Catch(f)
		var ne *nd.Error
		if !errors.As(err, &ne) || ne.Kind != nd.ErrDType {
			t.Errorf("%s(float16, float32): %v, want ErrDType", name, err)
		}
	}
}

// TestAutocastReleasesConversions: when nothing records, the float16
// copies autocast makes are released with the op, so released results
// leave no memory behind.
func TestAutocastReleasesConversions(t *testing.T) {
	dev := ctx.CPU(5)
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 256)
	w := nd.RandomNormal(dev, nd.Float32, 0, 1, 256, 256)
	run := func() {
		nd.FullyConnected(x, w, nil).Release()
		fc := nd.FullyConnected(x, w, nil) // float16
		h := nd.Relu(fc)
		s := nd.Add(h, x) // widest: float32
		e := nd.Exp(h)    // float32 list
		for _, a := range []*nd.NDArray{fc, h, s, e} {
			a.Release()
		}
	}
	nd.Autocast(nd.Float16, func() {
		run()
		before := nd.MemoryStats(dev).InUse
		for range 10 {
			run()
		}
		if grew := nd.MemoryStats(dev).InUse - before; grew != 0 {
			t.Errorf("in-use memory grew by %d bytes over 10 released autocast calls", grew)
		}
	})
}

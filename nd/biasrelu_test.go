package nd

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestBiasReluFusedMatchesComposed runs BiasRelu with the CPU backend's
// fused kernels and as Relu(Add(x, bias)), on long runs, short runs and
// other axes, with inputs that include NaN, ±0 sums and ties at zero, and
// compares: the output and the input gradient bit for bit (the same
// operations on the same values), the bias gradient (sums in another
// order) to 1e-12 in float64 and 1e-5 in float32.
func TestBiasReluFusedMatchesComposed(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	for _, c := range []struct {
		shape []int
		axis  int
	}{
		{[]int{3, 5, 7, 9}, 1},
		{[]int{8, 33}, 1},
		{[]int{4, 6, 3}, 2},
		{[]int{5, 3, 17}, 0},
	} {
		for _, dt := range []DType{Float64, Float32} {
			t.Run(fmt.Sprint(c.shape, c.axis, dt), func(t *testing.T) {
				ch := c.shape[c.axis]
				r := rand.New(rand.NewPCG(uint64(ch), 9))
				x := make([]float64, numel(c.shape))
				for i := range x {
					switch r.IntN(12) {
					case 0:
						x[i] = math.NaN()
					case 1:
						x[i] = math.Copysign(0, -1)
					default:
						x[i] = float64(r.IntN(9)-4) / 4 // ties: x + b == 0 often
					}
				}
				bias := make([]float64, ch)
				for i := range bias {
					bias[i] = float64(r.IntN(5)-2) / 4
				}
				hg := make([]float64, len(x))
				for i := range hg {
					hg[i] = r.NormFloat64()
				}
				run := func(fused bool) [][]float64 {
					SetFusedKernels(fused)
					mk := func(v []float64, shape ...int) *NDArray {
						a := FromSlice(dev, v, shape...)
						if dt == Float32 {
							a = a.AsType(Float32)
						}
						return a
					}
					xa, ba := mk(x, c.shape...), mk(bias, ch)
					xa.AttachGrad(GradWrite)
					ba.AttachGrad(GradWrite)
					exit := EnterRecording(true)
					y := BiasRelu(xa, ba, c.axis)
					exit()
					Backward([]*NDArray{y}, []*NDArray{mk(hg, c.shape...)}, false)
					return [][]float64{y.AsType(Float64).Float64s(), xa.Grad().AsType(Float64).Float64s(), ba.Grad().AsType(Float64).Float64s()}
				}
				got, want := run(true), run(false)
				for i, name := range []string{"y", "dx"} {
					for j := range want[i] {
						g, w := got[i][j], want[i][j]
						if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
							t.Fatalf("%s[%d]: fused %v, composed %v", name, j, g, w)
						}
					}
				}
				tol := 1e-12
				if dt == Float32 {
					tol = 1e-5
				}
				for j, w := range want[2] {
					if d := math.Abs(got[2][j] - w); d > tol*(1+math.Abs(w)) {
						t.Fatalf("dbias[%d]: fused %v, composed %v", j, got[2][j], w)
					}
				}
			})
		}
	}
}

// TestAddReluMatchesComposed runs AddRelu through the bias + ReLU kernels
// and as Relu(Add(a, b)), with NaN, ±0 and ties at zero, and compares the
// output and both gradients bit for bit, needing one input's gradient or
// both; operands that broadcast take the composed path.
func TestAddReluMatchesComposed(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	r := rand.New(rand.NewPCG(31, 32))
	for _, dt := range []DType{Float32, Float64} {
		for _, shape := range [][]int{{1}, {7}, {4, 3, 5, 5}, {2, 64, 8, 8}} {
			n := numel(shape)
			av, bv, hg := make([]float64, n), make([]float64, n), make([]float64, n)
			for i := range av {
				av[i], bv[i], hg[i] = float64(r.IntN(9)-4)/4, float64(r.IntN(9)-4)/4, r.NormFloat64()
				switch r.IntN(16) {
				case 0:
					av[i] = math.NaN()
				case 1:
					av[i], bv[i] = math.Copysign(0, -1), math.Copysign(0, -1)
				case 2:
					hg[i] = math.NaN()
				}
			}
			for _, needB := range []bool{true, false} {
				run := func(fused bool) [][]float64 {
					SetFusedKernels(fused)
					mk := func(v []float64) *NDArray { return FromSlice(dev, v, shape...).AsType(dt) }
					a, b := mk(av), mk(bv)
					a.AttachGrad(GradWrite)
					if needB {
						b.AttachGrad(GradWrite)
					}
					exit := EnterRecording(true)
					y := AddRelu(a, b)
					exit()
					Backward([]*NDArray{y}, []*NDArray{mk(hg)}, false)
					out := [][]float64{y.AsType(Float64).Float64s(), a.Grad().AsType(Float64).Float64s()}
					if needB {
						out = append(out, b.Grad().AsType(Float64).Float64s())
					}
					return out
				}
				got, want := run(true), run(false)
				for i := range want {
					for j := range want[i] {
						g, w := got[i][j], want[i][j]
						if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
							t.Fatalf("%v %v needB=%v output %d [%d]: fused %v, composed %v", dt, shape, needB, i, j, g, w)
						}
					}
				}
			}
		}
	}
	// Broadcasting operands: Relu(Add).
	a, b := Ones(dev, Float32, 2, 3), FromSlice(dev, []float32{-2, 0, 1}, 3)
	if got := AddRelu(a, b).Float32s(); !slices.Equal(got, []float32{0, 1, 2, 0, 1, 2}) {
		t.Errorf("broadcast AddRelu = %v", got)
	}
}

// TestFusedReluOutputReleased releases the output of AddRelu, of
// BatchNorm with Relu and of max pooling (float32 and float16) before the
// backward pass, which reads it: an ErrReleased error, not a crash (max
// pooling's crashed before, found by review). Integer and half-precision AddRelu take
// the composed path (the same results as Relu(Add)).
func TestFusedReluOutputReleased(t *testing.T) {
	dev := ctx.CPU(0)
	for _, name := range []string{"AddRelu", "BatchNormRelu", "MaxPool", "MaxPoolFloat16", "Conv2DBiasRelu"} {
		a := FromSlice(dev, []float32{1, -2, 3, -4, 5, 6, -7, 8}, 2, 4)
		b := FromSlice(dev, []float32{0.5, 1, -1, 2, 0, -3, 1, 1}, 2, 4)
		a.AttachGrad(GradWrite)
		exit := EnterRecording(true)
		var y *NDArray
		switch name {
		case "AddRelu":
			y = AddRelu(a, b)
		case "BatchNormRelu":
			y = BatchNorm(a, nil, nil, Zeros(dev, Float32, 4), Ones(dev, Float32, 4), BatchNormOpts{Relu: true})
		case "MaxPool":
			y = MaxPool2D(Reshape(a, 1, 1, 2, 4), [2]int{2, 2}, [2]int{}, [2]int{})
		case "Conv2DBiasRelu":
			y = Conv2DBiasRelu(Reshape(a, 1, 1, 2, 4), Ones(dev, Float32, 2, 1, 1, 2), FromSlice(dev, []float32{0.5, -1}, 2), ConvOpts{})
		default:
			y = MaxPool2D(Reshape(a, 1, 1, 2, 4).AsType(Float16), [2]int{2, 2}, [2]int{}, [2]int{})
		}
		z := Sum(MulScalar(y, 3))
		exit()
		y.Release()
		err := Catch(func() { Backward([]*NDArray{z}, nil, false) })
		if !errors.Is(err, &Error{Kind: ErrReleased}) {
			t.Errorf("%s: backward after releasing the output: %v, want ErrReleased", name, err)
		}
	}
	ia, ib := FromSlice(dev, []int32{1, -2, 3}, 3), FromSlice(dev, []int32{-2, 1, 0}, 3)
	if got := AddRelu(ia, ib).AsType(Float32).Float32s(); !slices.Equal(got, []float32{0, 0, 3}) {
		t.Errorf("int32 AddRelu = %v", got)
	}
	ha, hb := FromSlice(dev, []float32{1, -2, 3}, 3).AsType(Float16), FromSlice(dev, []float32{-2, 1, 0.5}, 3).AsType(Float16)
	if got, want := AddRelu(ha, hb).AsType(Float32).Float32s(), Relu(Add(ha, hb)).AsType(Float32).Float32s(); !slices.Equal(got, want) {
		t.Errorf("float16 AddRelu = %v, Relu(Add) %v", got, want)
	}
}

// TestFusedOutputViewKept: a backward pass that reads the op's output works
// when the output itself was released but a view of it keeps its memory
// (NDArray.Release allows using the other views), with the gradient of the
// run that released nothing.
func TestFusedOutputViewKept(t *testing.T) {
	dev := ctx.CPU(0)
	ops := map[string]func(a *NDArray) *NDArray{
		"AddRelu": func(a *NDArray) *NDArray {
			return AddRelu(a, FromSlice(dev, []float32{0.5, 1, -1, 2, 0, -3, 1, 1}, 2, 4))
		},
		"BatchNormRelu": func(a *NDArray) *NDArray {
			return BatchNorm(a, nil, nil, Zeros(dev, Float32, 4), Ones(dev, Float32, 4), BatchNormOpts{Relu: true})
		},
		"MaxPool": func(a *NDArray) *NDArray {
			return MaxPool2D(Reshape(a, 1, 1, 2, 4), [2]int{2, 2}, [2]int{}, [2]int{})
		},
		"MaxPoolFloat16": func(a *NDArray) *NDArray {
			return MaxPool2D(Reshape(a, 1, 1, 2, 4).AsType(Float16), [2]int{2, 2}, [2]int{}, [2]int{})
		},
		"Conv2DBiasRelu": func(a *NDArray) *NDArray {
			return Conv2DBiasRelu(Reshape(a, 1, 1, 2, 4), Ones(dev, Float32, 2, 1, 1, 2), FromSlice(dev, []float32{0.5, -1}, 2), ConvOpts{})
		},
	}
	for name, f := range ops {
		grad := func(release bool) ([]float32, error) {
			a := FromSlice(dev, []float32{1, -2, 3, -4, 5, 6, -7, 8}, 2, 4)
			a.AttachGrad(GradWrite)
			exit := EnterRecording(true)
			y := f(a)
			v := Reshape(y, -1) // a view: it shares y's memory
			z := Sum(MulScalar(v.AsType(Float32), 3))
			exit()
			if release {
				y.Release()
			}
			err := Catch(func() { Backward([]*NDArray{z}, nil, false) })
			if err != nil {
				return nil, err
			}
			return a.Grad().Float32s(), nil
		}
		want, err := grad(false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := grad(true)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s with the output released and a view kept: %v, %v; want %v", name, got, err, want)
		}
	}
}

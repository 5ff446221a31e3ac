package nd

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestDropoutAppliedMatchesMask runs Dropout with the CPU backend's
// applied mask (DropoutApplyKernels: the mask computed where it is used,
// from a stored seed) and with a stored mask, from the same generator
// state, and compares the outputs and input gradients bit for bit (NaN
// and ±0 inputs, odd lengths, both dtypes); the generator must also end in
// the same state.
func TestDropoutAppliedMatchesMask(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []DType{Float32, Float64} {
		for _, shape := range [][]int{{1}, {7}, {3, 5}, {4, 3, 1001}, {70001}} {
			for _, p := range []float64{0.1, 0.5, 0.9} {
				n := numel(shape)
				x, hg := make([]float64, n), make([]float64, n)
				for i := range x {
					x[i], hg[i] = r.NormFloat64(), r.NormFloat64()
					switch r.IntN(20) {
					case 0:
						x[i] = math.NaN()
					case 1:
						x[i] = math.Copysign(0, -1)
					case 2:
						hg[i] = math.Inf(-1)
					}
				}
				run := func(applied bool) [][]float64 {
					SetFusedKernels(applied)
					Seed(5)
					mk := func(v []float64) *NDArray { return FromSlice(dev, v, shape...).AsType(dt) }
					xa := mk(x)
					xa.AttachGrad(GradWrite)
					exit := EnterRecording(true)
					y := Dropout(xa, p)
					exit()
					Backward([]*NDArray{y}, []*NDArray{mk(hg)}, false)
					next := RandomUniform(dev, Float64, 0, 1, 1) // the generator's next draw
					return [][]float64{y.AsType(Float64).Float64s(), xa.Grad().AsType(Float64).Float64s(), next.Float64s()}
				}
				got, want := run(true), run(false)
				for i, name := range []string{"y", "dx", "next draw"} {
					for j := range want[i] {
						g, w := got[i][j], want[i][j]
						if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
							t.Fatalf("%v %v p=%g %s[%d]: applied %v, stored mask %v", dt, shape, p, name, j, g, w)
						}
					}
				}
			}
		}
	}
}

// TestDropoutAppliedSeedReleased closes the scope that holds the seed
// between the forward and the backward pass: the backward pass fails with
// ErrReleased, as the stored-mask path does, on both paths.
func TestDropoutAppliedSeedReleased(t *testing.T) {
	defer SetFusedKernels(true)
	for _, applied := range []bool{true, false} {
		SetFusedKernels(applied)
		x := FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4, 5}, 5)
		x.AttachGrad(GradWrite)
		exit := EnterRecording(true)
		sc := NewScope()
		y := Dropout(x, 0.5)
		sc.Keep(y)
		sc.Close()
		exit()
		err := Catch(func() { Backward([]*NDArray{y}, nil, false) })
		if !errors.Is(err, &Error{Kind: ErrReleased}) {
			t.Errorf("applied=%v: backward after the seed was released: %v, want ErrReleased", applied, err)
		}
	}
}

// TestFusedEagerNodeInTrace traces a computation that reads the output
// of an eagerly recorded fused op (Dropout's applied mask, GELU, BiasRelu,
// AddRelu, softmax cross-entropy, BatchNorm) of a bound parameter: the trace's backward pass
// walks that node, whose kernels must be recorded as steps rather than
// run once on the dry run's buffers, so every replay gives the eager
// gradient, with the fused kernels and without.
func TestFusedEagerNodeInTrace(t *testing.T) {
	defer SetFusedKernels(true)
	dev := ctx.CPU(0)
	ops := []struct {
		name string
		f    func(w, base *NDArray) *NDArray
	}{
		{"Dropout", func(w, base *NDArray) *NDArray { return Dropout(Mul(w, base), 0.5) }},
		{"GELU", func(w, base *NDArray) *NDArray { return GELU(Mul(w, base), false) }},
		{"BiasRelu", func(w, base *NDArray) *NDArray {
			return BiasRelu(Reshape(Mul(w, base), 8, 8), SliceAxis(w, 0, 8, 0), 1)
		}},
		{"AddRelu", func(w, base *NDArray) *NDArray { return AddRelu(w, base) }},
		{"SoftmaxCrossEntropy", func(w, base *NDArray) *NDArray {
			return SoftmaxCrossEntropy(Reshape(Mul(w, base), 8, 8), FromSlice(dev, []int32{0, 1, 2, 3, 4, 5, 6, 7}, 8), 1)
		}},
		{"BatchNorm", func(w, base *NDArray) *NDArray {
			x := Reshape(Mul(w, base), 8, 8)
			return BatchNorm(x, SliceAxis(w, 0, 8, 0), nil, Zeros(dev, Float32, 8), Ones(dev, Float32, 8), BatchNormOpts{})
		}},
	}
	for _, c := range ops {
		for _, fused := range []bool{true, false} {
			SetFusedKernels(fused)
			Seed(3)
			w := RandomNormal(dev, Float32, 0, 1, 64).Persist()
			w.AttachGrad(GradWrite)
			base := RandomNormal(dev, Float32, 0, 1, 64)
			exit := EnterRecording(true)
			y := c.f(w, base) // eager, recorded
			in := RandomNormal(dev, Float32, 0, 1, y.Shape()...)
			Backward([]*NDArray{Mul(in, y)}, nil, true)
			want := w.Grad().Float32s()
			g := Trace("eager-node", func(x []*NDArray) []*NDArray { return []*NDArray{Mul(x[0], y)} }, []*NDArray{in}, []*NDArray{w})
			for call := range 3 {
				o := g.Call([]*NDArray{in})[0]
				Backward([]*NDArray{o}, nil, true)
				if got := w.Grad().Float32s(); !slices.Equal(got, want) {
					t.Fatalf("%s fused=%v call %d: gradient %v, eager %v", c.name, fused, call, got[:4], want[:4])
				}
			}
			exit()
			g.Release()
		}
	}
}

package nd_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/nd"
)

// TestConv2DBiasReluBitwise compares the fused convolution layer with
// BiasRelu(Conv2D(...)) on every CPU convolution path (direct, Winograd,
// several images per GEMM, a GEMM per image, groups, float64): outputs
// and the gradients of x, w and the bias, bit for bit.
func TestConv2DBiasReluBitwise(t *testing.T) {
	cases := []struct {
		name string
		x, w []int
		o    nd.ConvOpts
		dt   nd.DType
		nan  bool
	}{
		{"direct", []int{4, 3, 12, 12}, []int{8, 3, 5, 5}, nd.ConvOpts{}, nd.Float32, true},
		{"direct-padded", []int{2, 3, 9, 9}, []int{6, 3, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false},
		{"winograd", []int{2, 32, 10, 10}, []int{32, 32, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false},
		{"batched-small-planes", []int{8, 32, 4, 4}, []int{16, 32, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false},
		{"strided", []int{2, 20, 9, 9}, []int{12, 20, 3, 3}, nd.ConvOpts{Stride: [2]int{2, 2}}, nd.Float32, false},
		{"per-image", []int{2, 20, 14, 14}, []int{12, 20, 1, 1}, nd.ConvOpts{}, nd.Float32, false},
		{"groups", []int{2, 8, 6, 6}, []int{8, 4, 3, 3}, nd.ConvOpts{Groups: 2}, nd.Float32, false},
		{"float64", []int{2, 3, 6, 6}, []int{4, 3, 3, 3}, nd.ConvOpts{}, nd.Float64, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(fused bool) [][]float64 {
				nd.Seed(uint64(10 + i))
				x := nd.RandomNormal(cpu0, c.dt, 0, 1, c.x...)
				if c.nan {
					v := x.Float64s()
					v[7] = math.NaN()
					x = nd.Reshape(nd.FromSlice(cpu0, v).AsType(c.dt), c.x...)
				}
				w := nd.RandomNormal(cpu0, c.dt, 0, 0.3, c.w...)
				b := nd.RandomNormal(cpu0, c.dt, 0, 0.5, c.w[0])
				for _, a := range []*nd.NDArray{x, w, b} {
					a.AttachGrad(nd.GradWrite)
				}
				var y *nd.NDArray
				exit := nd.EnterRecording(true)
				if fused {
					y = nd.Conv2DBiasRelu(x, w, b, c.o)
				} else {
					y = nd.BiasRelu(nd.Conv2D(x, w, nil, c.o), b, 1)
				}
				exit()
				head := nd.RandomNormal(cpu0, c.dt, 0, 1, y.Shape()...)
				nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{head}, false)
				return [][]float64{y.Float64s(), x.Grad().Float64s(), w.Grad().Float64s(), b.Grad().Float64s()}
			}
			want, got := run(false), run(true)
			for k, name := range []string{"output", "x gradient", "w gradient", "bias gradient"} {
				for j := range want[k] {
					if math.Float64bits(got[k][j]) != math.Float64bits(want[k][j]) {
						t.Fatalf("%s [%d] = %v fused, %v composed", name, j, got[k][j], want[k][j])
					}
				}
			}
		})
	}
}

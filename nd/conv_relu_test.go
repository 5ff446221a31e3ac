package nd_test

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

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
		// infNaN: x all +Inf and the bias NaN, so the sums are NaN too
		// (Inf − Inf): the output's NaN sign follows BiasRelu's operand
		// order, which the epilogue must keep (direct tiles, planes under
		// 8 values, 1-value planes).
		infNaN bool
	}{
		{"direct/inf-nan", []int{2, 3, 8, 8}, []int{8, 3, 3, 3}, nd.ConvOpts{}, nd.Float32, false, true},
		{"small-planes/inf-nan", []int{4, 16, 2, 2}, []int{8, 16, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false, true},
		{"winograd-one-image-2x2/inf-nan", []int{1, 16, 4, 4}, []int{16, 16, 3, 3}, nd.ConvOpts{}, nd.Float32, false, true},
		{"one-pixel/inf-nan", []int{3, 16, 3, 3}, []int{8, 16, 3, 3}, nd.ConvOpts{}, nd.Float32, false, true},
		{"direct", []int{4, 3, 12, 12}, []int{8, 3, 5, 5}, nd.ConvOpts{}, nd.Float32, true, false},
		{"direct-padded", []int{2, 3, 9, 9}, []int{6, 3, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false, false},
		{"winograd", []int{2, 32, 10, 10}, []int{32, 32, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false, false},
		{"batched-small-planes", []int{8, 32, 4, 4}, []int{16, 32, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}, nd.Float32, false, false},
		{"strided", []int{2, 20, 9, 9}, []int{12, 20, 3, 3}, nd.ConvOpts{Stride: [2]int{2, 2}}, nd.Float32, false, false},
		{"per-image", []int{2, 20, 14, 14}, []int{12, 20, 1, 1}, nd.ConvOpts{}, nd.Float32, false, false},
		{"groups", []int{2, 8, 6, 6}, []int{8, 4, 3, 3}, nd.ConvOpts{Groups: 2}, nd.Float32, false, false},
		{"float64", []int{2, 3, 6, 6}, []int{4, 3, 3, 3}, nd.ConvOpts{}, nd.Float64, false, false},
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
				if c.infNaN {
					x = nd.Full(cpu0, c.dt, math.Inf(1), c.x...)
					b = nd.Full(cpu0, c.dt, math.NaN(), c.w[0])
				}
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

// TestConv2DBiasReluReleaseDuring releases x from another goroutine while
// the fused op runs: the op either fails with ErrReleased or computes on
// x's memory to the end (its inputs stay pinned while the kernel reads
// them), never on memory reused meanwhile.
func TestConv2DBiasReluReleaseDuring(t *testing.T) {
	shape := []int{8, 16, 32, 32}
	want := float64(8 * 16 * 30 * 30 * 144)
	for r := range 60 {
		x := nd.Full(cpu0, nd.Float32, 1, shape...).Persist()
		w := nd.Full(cpu0, nd.Float32, 1, 16, 16, 3, 3).Persist()
		b := nd.Zeros(cpu0, nd.Float32, 16).Persist()
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			time.Sleep(time.Duration(r%6) * 100 * time.Microsecond)
			x.Release()
			for range 4 { // reuse the freed buffer with other values
				nd.Full(cpu0, nd.Float32, -7, shape...).Release()
			}
		}()
		var sum float64
		err := nd.Catch(func() {
			close(start)
			sum = nd.Sum(nd.Conv2DBiasRelu(x, w, b, nd.ConvOpts{})).Scalar()
		})
		wg.Wait()
		switch {
		case err == nil && sum != want:
			t.Fatalf("round %d: sum %v, want %v: computed on memory that was not x's", r, sum, want)
		case err != nil && !errors.Is(err, &nd.Error{Kind: nd.ErrReleased}):
			t.Fatalf("round %d: %v", r, err)
		}
		w.Release()
		b.Release()
	}
}

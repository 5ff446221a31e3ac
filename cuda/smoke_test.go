//go:build cuda || cudaemu

package cuda

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestSmoke exercises each layer once, in order, with messages that say
// which layer failed: device start and PTX load, write/read, a kernel, a
// strided kernel, a reduction and a cuBLAS product. Run it first on a new
// machine: -test.run Smoke -test.v.
func TestSmoke(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	if _, err := DeviceName(dev); err != nil {
		t.Fatalf("starting %v (context, stream, PTX modules): %v", dev, err)
	}
	step := func(what string, f func()) {
		t.Helper()
		if err := nd.Catch(f); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := Synchronize(dev); err != nil {
			t.Fatalf("%s (after synchronising): %v", what, err)
		}
	}
	s := nd.NewScope()
	defer s.Close()
	var x *nd.NDArray
	step("write and read", func() {
		x = nd.FromSlice(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
		if got := x.Float32s(); !slices.Equal(got, []float32{1, 2, 3, 4, 5, 6}) {
			t.Errorf("read back %v", got)
		}
	})
	step("elementwise kernel (fill_f32, unary_f32)", func() {
		if got := nd.MulScalar(nd.Ones(dev, nd.Float32, 3), 2).Float32s(); !slices.Equal(got, []float32{2, 2, 2}) {
			t.Errorf("2*ones = %v", got)
		}
	})
	step("strided kernels (copy_strided_f32, binary_strided_f32)", func() {
		if got := nd.Transpose(x, 1, 0).Float32s(); !slices.Equal(got, []float32{1, 4, 2, 5, 3, 6}) {
			t.Errorf("transpose = %v", got)
		}
		if got := nd.Add(x, nd.FromSlice(dev, []float32{10, 20, 30}, 3)).Float32s(); !slices.Equal(got, []float32{11, 22, 33, 14, 25, 36}) {
			t.Errorf("broadcast add = %v", got)
		}
	})
	step("reduction (reduce_thread_f32, reduce_block_f64)", func() {
		if got := nd.Sum(x, 1).Float32s(); !slices.Equal(got, []float32{6, 15}) {
			t.Errorf("row sums = %v", got)
		}
		if got := nd.Sum(nd.Ones(dev, nd.Float32, 100000).AsType(nd.Float64)).Scalar(); got != 100000 {
			t.Errorf("sum of 100000 ones = %v", got)
		}
	})
	step("cuBLAS product (sgemm, dgemm)", func() {
		if got := nd.MatMul(x, nd.Transpose(x, 1, 0)).Float32s(); !slices.Equal(got, []float32{14, 32, 32, 77}) {
			t.Errorf("x·xᵀ = %v", got)
		}
		x64 := x.AsType(nd.Float64)
		if got := nd.MatMul(x64, nd.Transpose(x64, 1, 0)).Float64s(); !slices.Equal(got, []float64{14, 32, 32, 77}) {
			t.Errorf("x·xᵀ in float64 = %v", got)
		}
	})
}

package npy_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/npy"
)

// Arrays saved here load in NumPy with numpy.load, and files NumPy saved
// load here.
func Example() {
	dir, _ := os.MkdirTemp("", "npy")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weights.npz")

	w := nd.FromSlice(ctx.CPU(0), []float32{0.5, -1, 2, 0}, 2, 2)
	b := nd.FromSlice(ctx.CPU(0), []int64{7, 8}, 2)
	if err := npy.SaveZCompressed(path, map[string]*nd.NDArray{"w": w, "b": b}); err != nil {
		fmt.Println(err)
		return
	}
	got, err := npy.LoadZ(path, ctx.CPU(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got["w"].DType(), got["w"].Shape(), got["w"].Float32s())
	fmt.Println(got["b"].DType(), got["b"].Int64s())

	// A complex128 file from NumPy: real and imaginary parts in a last axis of 2.
	c, err := npy.Load("testdata/fortran_big_c16.npy", ctx.CPU(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.DType(), c.Shape())
	// Output:
	// float32 [2 2] [0.5 -1 2 0]
	// int64 [7 8]
	// float64 [2 3 2]
}

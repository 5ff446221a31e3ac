package cpu

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestCopyBroadcastRows: a copy whose source repeats one value along each
// row (inner source stride 0: a broadcast, as the gradient of a sum) fills
// every row with its value, for rows of 1 to 1000 values, one row or
// several, float32 and float64, at offsets, and writes nothing else.
func TestCopyBroadcastRows(t *testing.T) {
	be := New()
	for _, f64 := range []bool{false, true} {
		for _, shape := range [][]int{{1}, {2}, {3}, {17}, {1000}, {3, 5}, {4, 129}} {
			t.Run(fmt.Sprintf("f64=%v/%v", f64, shape), func(t *testing.T) {
				rows, n := 1, shape[len(shape)-1]
				for _, s := range shape[:len(shape)-1] {
					rows *= s
				}
				const off = 3
				src := make([]float64, off+rows)
				for r := range src {
					src[r] = float64(r) + 0.5
				}
				sst := make([]int, len(shape)) // stride 0 along the row
				if len(shape) > 1 {
					sst[0] = 1
				}
				dst := make([]float64, off+rows*n+2)
				for i := range dst {
					dst[i] = -1
				}
				mk := func(v []float64) *Buffer {
					if f64 {
						return &Buffer{dt: backend.Float64, F64: append([]float64(nil), v...)}
					}
					f := make([]float32, len(v))
					for i, x := range v {
						f[i] = float32(x)
					}
					return &Buffer{dt: backend.Float32, F32: f}
				}
				db, sb := mk(dst), mk(src)
				be.Copy(shape, backend.Arg{Buf: db, Off: off}, backend.Arg{Buf: sb, Off: off, Strides: sst})
				got := make([]float64, len(dst))
				for i := range got {
					if f64 {
						got[i] = db.F64[i]
					} else {
						got[i] = float64(db.F32[i])
					}
				}
				for i, g := range got {
					want := -1.0
					if i >= off && i < off+rows*n {
						want = src[off+(i-off)/n]
					}
					if g != want {
						t.Fatalf("element %d: %v, want %v", i, g, want)
					}
				}
			})
		}
	}
}

// TestCopyEmpty: a copy of no elements does nothing, even when an
// operand's offset lies past the end of its buffer (the region at the end
// of an empty axis that Concat and SliceAxis describe), in every dtype.
func TestCopyEmpty(t *testing.T) {
	be := New()
	bufs := func(n int) []*Buffer {
		return []*Buffer{
			{dt: backend.Float32, F32: make([]float32, n)},
			{dt: backend.Float64, F64: make([]float64, n)},
			{dt: backend.Int32, I32: make([]int32, n)},
			{dt: backend.Int64, I64: make([]int64, n)},
			{dt: backend.Uint8, U8: make([]uint8, n)},
			{dt: backend.Float16, F16: make([]backend.F16, n)},
			{dt: backend.BFloat16, BF16: make([]backend.BF16, n)},
		}
	}
	for _, c := range []struct {
		name                   string
		shape                  []int
		n, dstOff, srcOff      int
		dstStrides, srcStrides []int
	}{
		{"concat-second-part", []int{0, 2}, 0, 2, 0, []int{4, 1}, nil}, // Concat([(0,2),(0,2)], 1)
		{"slice-of-empty", []int{0, 2}, 0, 0, 2, nil, []int{4, 1}},     // SliceAxis((0,4), 2, 4, 1)
		{"past-the-end", []int{3, 0}, 6, 7, 9, nil, []int{2, 1}},
		{"1-D", []int{0}, 4, 5, 5, nil, nil},
	} {
		for i, dst := range bufs(c.n) {
			src := bufs(c.n)[i]
			t.Run(fmt.Sprintf("%s/%v", c.name, dst.dt), func(t *testing.T) {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				be.Copy(c.shape, backend.Arg{Buf: dst, Off: c.dstOff, Strides: c.dstStrides},
					backend.Arg{Buf: src, Off: c.srcOff, Strides: c.srcStrides})
			})
		}
	}
}

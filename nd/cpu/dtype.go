package cpu

import (
	"github.com/goluon/goluon/nd/backend"
)

// Elem is the set of element types a buffer stores (Bool is stored as
// uint8 0 or 1).
type Elem = backend.Elem

// Storage is every element type a buffer stores, the half-precision
// storage types included; only Copy, Cast and Fill take those.
type Storage interface {
	Elem | backend.F16 | backend.BF16
}

// Int is the set of integer element types.
type Int interface{ int32 | int64 | uint8 }

// sliceFrom returns n typed elements of b starting at off, with no
// capacity beyond them.
func sliceFrom(b *Buffer, off, n int) any {
	switch s := b.host().(type) {
	case []float32:
		return s[off : off+n : off+n]
	case []float64:
		return s[off : off+n : off+n]
	case []int32:
		return s[off : off+n : off+n]
	case []int64:
		return s[off : off+n : off+n]
	case []backend.F16:
		return s[off : off+n : off+n]
	case []backend.BF16:
		return s[off : off+n : off+n]
	default:
		u := s.([]uint8)
		return u[off : off+n : off+n]
	}
}

// Cast converts n elements of src into dst.
func (be *Backend) Cast(dst, src backend.Arg, n int) {
	dd, sd := dst.Buf.DType(), src.Buf.DType()
	if dd == sd || (dd == backend.Uint8 && sd == backend.Bool) {
		be.Copy([]int{n}, dst, src)
		return
	}
	d := sliceFrom(dst.Buf.(*Buffer), dst.Off, n)
	s := sliceFrom(src.Buf.(*Buffer), src.Off, n)
	convert := func(d, s any) {
		if !castHalf(d, s) {
			backend.ConvertHost(d, dd == backend.Bool, s)
		}
	}
	if n < elemGrain {
		convert(d, s)
		return
	}
	parallelFor(n, elemGrain, func(lo, hi int) {
		convert(subslice(d, lo, hi), subslice(s, lo, hi))
	})
}

// subslice returns s[lo:hi] of a typed slice.
func subslice(s any, lo, hi int) any {
	switch v := s.(type) {
	case []float32:
		return v[lo:hi]
	case []float64:
		return v[lo:hi]
	case []int32:
		return v[lo:hi]
	case []int64:
		return v[lo:hi]
	case []backend.F16:
		return v[lo:hi]
	case []backend.BF16:
		return v[lo:hi]
	default:
		return s.([]uint8)[lo:hi]
	}
}

// Fill sets n elements of dst to v converted to dst's dtype.
func (*Backend) Fill(dst backend.Arg, n int, v float64) {
	switch dst.Buf.DType() {
	case backend.Float64:
		fill(slice[float64](dst)[:n], v)
	case backend.Float32:
		fill(slice[float32](dst)[:n], float32(v))
	case backend.Int32:
		fill(slice[int32](dst)[:n], scalarAs[int32](v))
	case backend.Int64:
		fill(slice[int64](dst)[:n], scalarAs[int64](v))
	case backend.Uint8:
		fill(slice[uint8](dst)[:n], scalarAs[uint8](v))
	case backend.Bool:
		fill(slice[uint8](dst)[:n], b2u(v != 0))
	case backend.Float16:
		fill(storageSlice[backend.F16](dst)[:n], backend.F16From(float32(v)))
	case backend.BFloat16:
		fill(storageSlice[backend.BF16](dst)[:n], backend.BF16From(float32(v)))
	}
}

// scalarAs converts one float64 to T as Cast converts.
func scalarAs[T Elem](v float64) T {
	var d [1]T
	backend.Convert(d[:], []float64{v})
	return d[0]
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func fill[T Storage](d []T, v T) {
	parallelFor(len(d), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = v
		}
	})
}

package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Elem is the set of element types a buffer stores (Bool is stored as
// uint8 0 or 1).
type Elem interface {
	float32 | float64 | int32 | int64 | uint8
}

// Int is the set of integer element types.
type Int interface{ int32 | int64 | uint8 }

// sliceFrom returns n typed elements of b starting at off.
func sliceFrom(b *Buffer, off, n int) any {
	switch s := b.host().(type) {
	case []float32:
		return s[off : off+n]
	case []float64:
		return s[off : off+n]
	case []int32:
		return s[off : off+n]
	case []int64:
		return s[off : off+n]
	default:
		return s.([]uint8)[off : off+n]
	}
}

// castHost converts the typed slice src into the typed slice dst of the
// same length. Both are []float32, []float64, []int32, []int64, []uint8 or
// []bool; toBool makes a []uint8 dst receive 0/1 truth values.
func castHost(dst any, toBool bool, src any) {
	if b, ok := src.([]bool); ok {
		u := make([]uint8, len(b))
		for i, v := range b {
			if v {
				u[i] = 1
			}
		}
		src = u
	}
	if b, ok := dst.([]bool); ok {
		u := make([]uint8, len(b))
		castHost(u, true, src)
		for i, v := range u {
			b[i] = v != 0
		}
		return
	}
	switch s := src.(type) {
	case []float32:
		castFrom(dst, toBool, s)
	case []float64:
		castFrom(dst, toBool, s)
	case []int32:
		castFrom(dst, toBool, s)
	case []int64:
		castFrom(dst, toBool, s)
	case []uint8:
		castFrom(dst, toBool, s)
	}
}

func castFrom[S Elem](dst any, toBool bool, s []S) {
	switch d := dst.(type) {
	case []float32:
		convert(d, s)
	case []float64:
		convert(d, s)
	case []int32:
		convert(d, s)
	case []int64:
		convert(d, s)
	case []uint8:
		if toBool {
			truth(d, s)
		} else {
			convert(d, s)
		}
	}
}

// isFloat reports whether T is a floating type.
func isFloat[T Elem]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// intRange returns the smallest and largest values of the integer type T
// as float64 (the largest int64 rounds up to 2^63).
func intRange[T Elem]() (lo, hi float64) {
	var z T
	switch any(z).(type) {
	case int32:
		return math.MinInt32, math.MaxInt32
	case int64:
		return math.MinInt64, math.MaxInt64
	}
	return 0, math.MaxUint8
}

// convert writes d[i] = D(s[i]); floats become integers by truncation
// toward zero, saturating at D's range, and NaN becomes 0. Integers narrow
// with wrap-around, as Go, NumPy and PyTorch convert them.
func convert[D, S Elem](d []D, s []S) {
	d = d[:len(s)]
	if !isFloat[S]() || isFloat[D]() {
		for i, v := range s {
			d[i] = D(v)
		}
		return
	}
	lo, hi := intRange[D]()
	for i, v := range s {
		f := math.Trunc(float64(v))
		switch {
		case f != f:
			d[i] = 0
		case f >= hi:
			d[i] = maxOf[D]()
		case f <= lo:
			d[i] = D(lo)
		default:
			d[i] = D(f)
		}
	}
}

// maxOf returns the largest value of the integer type T.
func maxOf[T Elem]() T {
	var z T
	switch any(z).(type) {
	case int32:
		var m int32 = math.MaxInt32
		return T(m)
	case int64:
		var m int64 = math.MaxInt64
		return T(m)
	}
	var m uint8 = math.MaxUint8
	return T(m)
}

// truth writes d[i] = 1 where s[i] is not zero (NaN included), else 0.
func truth[S Elem](d []uint8, s []S) {
	d = d[:len(s)]
	for i, v := range s {
		if v != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
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
	if n < elemGrain {
		castHost(d, dd == backend.Bool, s)
		return
	}
	parallelFor(n, elemGrain, func(lo, hi int) {
		castHost(subslice(d, lo, hi), dd == backend.Bool, subslice(s, lo, hi))
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
	}
}

// scalarAs converts one float64 to T as Cast converts.
func scalarAs[T Elem](v float64) T {
	var d [1]T
	convert(d[:], []float64{v})
	return d[0]
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func fill[T Elem](d []T, v T) {
	parallelFor(len(d), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = v
		}
	})
}

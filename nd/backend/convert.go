package backend

import "math"

// Elem is the set of Go element types a buffer stores (Bool is stored as
// uint8 0 or 1).
type Elem interface {
	float32 | float64 | int32 | int64 | uint8
}

// ConvertHost converts the typed slice src into the typed slice dst, which
// must be at least as long (elements past len(src) are left alone). Both
// are []float32, []float64, []int32, []int64, []uint8, []F16, []BF16 or
// []bool; toBool makes a []uint8 dst receive 0/1 truth values.
func ConvertHost(dst any, toBool bool, src any) {
	if sameCopy(dst, toBool, src) {
		return
	}
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
		ConvertHost(u, true, src)
		for i, v := range u {
			b[i] = v != 0
		}
		return
	}
	// Half-precision storage converts through float32: decoding is exact,
	// and encoding from float32 rounds once, to nearest even.
	switch s := src.(type) {
	case []F16:
		f := make([]float32, len(s))
		for i, v := range s {
			f[i] = v.Float32()
		}
		src = f
	case []BF16:
		f := make([]float32, len(s))
		for i, v := range s {
			f[i] = v.Float32()
		}
		src = f
	}
	switch d := dst.(type) {
	case []F16:
		f := make([]float32, len(d))
		ConvertHost(f, false, src)
		for i, v := range f {
			d[i] = F16From(v)
		}
		return
	case []BF16:
		f := make([]float32, len(d))
		ConvertHost(f, false, src)
		for i, v := range f {
			d[i] = BF16From(v)
		}
		return
	}
	switch s := src.(type) {
	case []float32:
		convertFrom(dst, toBool, s)
	case []float64:
		convertFrom(dst, toBool, s)
	case []int32:
		convertFrom(dst, toBool, s)
	case []int64:
		convertFrom(dst, toBool, s)
	case []uint8:
		convertFrom(dst, toBool, s)
	}
}

func convertFrom[S Elem](dst any, toBool bool, s []S) {
	switch d := dst.(type) {
	case []float32:
		Convert(d, s)
	case []float64:
		Convert(d, s)
	case []int32:
		Convert(d, s)
	case []int64:
		Convert(d, s)
	case []uint8:
		if toBool {
			Truth(d, s)
		} else {
			Convert(d, s)
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

// sameCopy copies src into dst with copy (a memmove) when both are
// slices of the same non-bool element type, dst is long enough and no
// truth values are wanted, and reports whether it did.
func sameCopy(dst any, toBool bool, src any) bool {
	switch d := dst.(type) {
	case []float32:
		return copySame(d, src)
	case []float64:
		return copySame(d, src)
	case []int32:
		return copySame(d, src)
	case []int64:
		return copySame(d, src)
	case []uint8:
		return !toBool && copySame(d, src)
	case []F16:
		return copySame(d, src)
	case []BF16:
		return copySame(d, src)
	}
	return false
}

// copySame copies src into d when src is a []T no longer than d.
func copySame[T any](d []T, src any) bool {
	s, ok := src.([]T)
	if !ok || len(d) < len(s) {
		return false
	}
	copy(d, s)
	return true
}

// Convert writes d[i] = D(s[i]); floats become integers by truncation
// toward zero, saturating at D's range, and NaN becomes 0. Integers narrow
// with wrap-around, as Go, NumPy and PyTorch convert them.
func Convert[D, S Elem](d []D, s []S) {
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

// Truth writes d[i] = 1 where s[i] is not zero (NaN included), else 0.
func Truth[S Elem](d []uint8, s []S) {
	d = d[:len(s)]
	for i, v := range s {
		if v != 0 {
			d[i] = 1
		} else {
			d[i] = 0
		}
	}
}

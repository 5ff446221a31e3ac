package cpu

import "github.com/goluon/goluon/nd/backend"

// indices returns n indices of any dtype as ints (floats truncated toward
// zero; NaN is 0).
func indices(idx backend.Arg, n int) []int {
	out := make([]int, n)
	switch idx.Buf.DType() {
	case backend.Int64:
		for i, v := range slice[int64](idx)[:n] {
			out[i] = int(v)
		}
	case backend.Int32:
		for i, v := range slice[int32](idx)[:n] {
			out[i] = int(v)
		}
	default:
		tmp := make([]int64, n)
		backend.ConvertHost(tmp, false, sliceFrom(idx.Buf.(*Buffer), idx.Off, n))
		for i, v := range tmp {
			out[i] = int(v)
		}
	}
	return out
}

// Pick gathers dst[o,i] = x[o, idx[o,i], i].
func (*Backend) Pick(outer, n, inner int, dst, x, idx backend.Arg) {
	ix := indices(idx, outer*inner)
	if isF64(dst) {
		pick(outer, n, inner, slice[float64](dst), slice[float64](x), ix)
	} else {
		pick(outer, n, inner, slice[float32](dst), slice[float32](x), ix)
	}
}

func pick[T Float](outer, n, inner int, d, x []T, idx []int) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			k := min(max(idx[o*inner+i], 0), n-1)
			d[o*inner+i] = x[(o*n+k)*inner+i]
		}
	}
}

// PickBackward scatters dy into dx at the picked positions.
func (*Backend) PickBackward(outer, n, inner int, dx, dy, idx backend.Arg) {
	ix := indices(idx, outer*inner)
	if isF64(dx) {
		pickBackward(outer, n, inner, slice[float64](dx), slice[float64](dy), ix)
	} else {
		pickBackward(outer, n, inner, slice[float32](dx), slice[float32](dy), ix)
	}
}

func pickBackward[T Float](outer, n, inner int, dx, dy []T, idx []int) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			k := min(max(idx[o*inner+i], 0), n-1)
			dx[(o*n+k)*inner+i] += dy[o*inner+i]
		}
	}
}

// OneHot writes one row of length depth per index.
func (*Backend) OneHot(n, depth int, dst, idx backend.Arg, on, off float64) {
	valid := make([]bool, n)
	ix := make([]int, n)
	if idx.Buf.DType().IsFloat() {
		// A float index must be a whole number to select a column.
		v := make([]float64, n)
		backend.ConvertHost(v, false, sliceFrom(idx.Buf.(*Buffer), idx.Off, n))
		for i, f := range v {
			ix[i], valid[i] = int(f), f == float64(int(f))
		}
	} else {
		ix = indices(idx, n)
		for i := range valid {
			valid[i] = true
		}
	}
	switch dst.Buf.DType() {
	case backend.Float64:
		oneHot(depth, slice[float64](dst), ix, valid, on, off)
	case backend.Float32:
		oneHot(depth, slice[float32](dst), ix, valid, float32(on), float32(off))
	case backend.Int32:
		oneHot(depth, slice[int32](dst), ix, valid, scalarAs[int32](on), scalarAs[int32](off))
	case backend.Int64:
		oneHot(depth, slice[int64](dst), ix, valid, scalarAs[int64](on), scalarAs[int64](off))
	case backend.Uint8:
		oneHot(depth, slice[uint8](dst), ix, valid, scalarAs[uint8](on), scalarAs[uint8](off))
	default:
		oneHot(depth, slice[uint8](dst), ix, valid, b2u(on != 0), b2u(off != 0))
	}
}

func oneHot[T Elem](depth int, d []T, idx []int, valid []bool, on, off T) {
	for i, k := range idx {
		row := d[i*depth : (i+1)*depth]
		for j := range row {
			row[j] = off
		}
		if valid[i] && k >= 0 && k < depth {
			row[k] = on
		}
	}
}

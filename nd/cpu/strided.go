package cpu

import "github.com/goluon/goluon/nd/backend"

// rowOffsets returns, for row r of an iteration space (all dimensions but
// the last), each operand's element offset.
func rowOffsets(shape []int, strides [][]int, r int, offs []int) {
	for i := range offs {
		offs[i] = 0
	}
	for d := len(shape) - 2; d >= 0; d-- {
		idx := r % shape[d]
		r /= shape[d]
		for i, s := range strides {
			offs[i] += idx * s[d]
		}
	}
}

// forRows runs fn over the rows of a coalesced iteration space in parallel;
// fn gets each operand's offset for the row, the inner length and the
// operands' inner strides.
func forRows(shape []int, strides [][]int, fn func(offs []int, n int, inner []int)) {
	last := len(shape) - 1
	n := shape[last]
	rows := 1
	for _, s := range shape[:last] {
		rows *= s
	}
	inner := make([]int, len(strides))
	for i, s := range strides {
		inner[i] = s[last]
	}
	grain := max(1, elemGrain/max(n, 1))
	parallelFor(rows, grain, func(lo, hi int) {
		offs := make([]int, len(strides))
		for r := lo; r < hi; r++ {
			rowOffsets(shape, strides, r, offs)
			fn(offs, n, inner)
		}
	})
}

// Copy copies a strided view of src into a strided view of dst.
func (*Backend) Copy(shape []int, dst, src backend.Arg) {
	for _, d := range shape {
		if d == 0 {
			// Nothing to copy; an empty view's offset may lie past the
			// end of its buffer (a region at an empty axis's end).
			return
		}
	}
	ds, ss := dst.Strides, src.Strides
	if ds == nil {
		ds = backend.ContiguousStrides(shape)
	}
	if ss == nil {
		ss = backend.ContiguousStrides(shape)
	}
	sh, st := backend.Coalesce(shape, ds, ss)
	// Negative strides (reversed views) reach below the operand's offset:
	// start the slices at the lowest element and offset the rows instead.
	dst.Off += lowest(sh, st[0])
	src.Off += lowest(sh, st[1])
	base := []int{-lowest(sh, st[0]), -lowest(sh, st[1])}
	switch dst.Buf.DType() {
	case backend.Float64:
		copyStrided(sh, st, base, slice[float64](dst), slice[float64](src))
	case backend.Float32:
		copyStrided(sh, st, base, slice[float32](dst), slice[float32](src))
	case backend.Int32:
		copyStrided(sh, st, base, slice[int32](dst), slice[int32](src))
	case backend.Int64:
		copyStrided(sh, st, base, slice[int64](dst), slice[int64](src))
	case backend.Float16:
		copyStrided(sh, st, base, storageSlice[backend.F16](dst), storageSlice[backend.F16](src))
	case backend.BFloat16:
		copyStrided(sh, st, base, storageSlice[backend.BF16](dst), storageSlice[backend.BF16](src))
	default:
		copyStrided(sh, st, base, slice[uint8](dst), slice[uint8](src))
	}
}

// lowest returns the most negative offset a strided view of shape reaches
// (0 unless a stride is negative).
func lowest(shape, strides []int) int {
	off := 0
	for d, n := range shape {
		if strides[d] < 0 && n > 0 {
			off += (n - 1) * strides[d]
		}
	}
	return off
}

func copyStrided[T Storage](shape []int, st [][]int, base []int, d, s []T) {
	forRows(shape, st, func(offs []int, n int, in []int) {
		do, so := offs[0]+base[0], offs[1]+base[1]
		if in[0] == 1 && in[1] == 1 {
			copy(d[do:do+n], s[so:so+n])
			return
		}
		if in[0] == 1 && in[1] == 0 && n > 0 {
			// One source value along the row (a broadcast, e.g. the
			// gradient of a sum): fill the row by doubling copies.
			row := d[do : do+n]
			row[0] = s[so]
			for k := 1; k < n; k *= 2 {
				copy(row[k:], row[:k])
			}
			return
		}
		for j := 0; j < n; j++ {
			d[do+j*in[0]] = s[so+j*in[1]]
		}
	})
}

package cpu

import (
	"cmp"
	"math"
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

var _ backend.IndexKernels = (*Backend)(nil)

// gatherIndices reads the [Outer, M, Inner] index view as ints resolved to
// [0, N): clipped, or wrapped with p.Wrap.
func gatherIndices(p backend.GatherParams, idx backend.Arg) []int {
	shape := []int{p.Outer, p.M, p.Inner}
	st := idx.Strides
	if st == nil {
		st = backend.ContiguousStrides(shape)
	}
	// Read the span the view covers, then pick its elements.
	span := 1
	for d, n := range shape {
		if n > 0 {
			span += (n - 1) * st[d]
		}
	}
	raw := indices(idx, span)
	out := make([]int, p.Outer*p.M*p.Inner)
	n := 0
	for o := 0; o < p.Outer; o++ {
		for j := 0; j < p.M; j++ {
			for i := 0; i < p.Inner; i++ {
				k := raw[o*st[0]+j*st[1]+i*st[2]]
				if p.Wrap {
					k %= p.N
					if k < 0 {
						k += p.N
					}
				} else {
					k = min(max(k, 0), p.N-1)
				}
				out[n] = k
				n++
			}
		}
	}
	return out
}

// Gather writes dst[o,j,i] = x[o, idx(o,j,i), i].
func (*Backend) Gather(p backend.GatherParams, dst, x, idx backend.Arg) {
	if p.Outer*p.M*p.Inner == 0 {
		return
	}
	ix := gatherIndices(p, idx)
	switch dst.Buf.DType() {
	case backend.Float32:
		gather(p, slice[float32](dst), slice[float32](x), ix)
	case backend.Float64:
		gather(p, slice[float64](dst), slice[float64](x), ix)
	case backend.Int32:
		gather(p, slice[int32](dst), slice[int32](x), ix)
	case backend.Int64:
		gather(p, slice[int64](dst), slice[int64](x), ix)
	default:
		gather(p, slice[uint8](dst), slice[uint8](x), ix)
	}
}

func gather[T Elem](p backend.GatherParams, d, x []T, ix []int) {
	parallelFor(p.Outer*p.M, max(1, elemGrain/max(p.Inner, 1)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r / p.M
			for i := 0; i < p.Inner; i++ {
				d[r*p.Inner+i] = x[(o*p.N+ix[r*p.Inner+i])*p.Inner+i]
			}
		}
	})
}

// ScatterAdd adds src[o,j,i] into dst[o, idx(o,j,i), i], j ascending.
func (*Backend) ScatterAdd(p backend.GatherParams, dst, src, idx backend.Arg) {
	if p.Outer*p.M*p.Inner == 0 {
		return
	}
	ix := gatherIndices(p, idx)
	switch dst.Buf.DType() {
	case backend.Float32:
		scatterAdd(p, slice[float32](dst), slice[float32](src), ix)
	case backend.Float64:
		scatterAdd(p, slice[float64](dst), slice[float64](src), ix)
	case backend.Int32:
		scatterAdd(p, slice[int32](dst), slice[int32](src), ix)
	case backend.Int64:
		scatterAdd(p, slice[int64](dst), slice[int64](src), ix)
	default:
		scatterAdd(p, slice[uint8](dst), slice[uint8](src), ix)
	}
}

// scatterAdd splits the work over outer rows only: every (o, i) column is
// summed by one goroutine in j order, so results do not depend on the
// number of workers.
func scatterAdd[T Elem](p backend.GatherParams, d, s []T, ix []int) {
	parallelFor(p.Outer, max(1, elemGrain/max(p.M*p.Inner, 1)), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			for j := 0; j < p.M; j++ {
				r := o*p.M + j
				for i := 0; i < p.Inner; i++ {
					d[(o*p.N+ix[r*p.Inner+i])*p.Inner+i] += s[r*p.Inner+i]
				}
			}
		}
	})
}

// Where writes dst = cond ? a : b with broadcasting strides.
func (*Backend) Where(shape []int, dst, cond, a, b backend.Arg) {
	st := func(x backend.Arg) []int {
		if x.Strides == nil {
			return backend.ContiguousStrides(shape)
		}
		return x.Strides
	}
	sh, strides := backend.Coalesce(shape, backend.ContiguousStrides(shape), st(cond), st(a), st(b))
	c := slice[uint8](cond)
	switch dst.Buf.DType() {
	case backend.Float32:
		where(sh, strides, slice[float32](dst), c, slice[float32](a), slice[float32](b))
	case backend.Float64:
		where(sh, strides, slice[float64](dst), c, slice[float64](a), slice[float64](b))
	case backend.Int32:
		where(sh, strides, slice[int32](dst), c, slice[int32](a), slice[int32](b))
	case backend.Int64:
		where(sh, strides, slice[int64](dst), c, slice[int64](a), slice[int64](b))
	default:
		where(sh, strides, slice[uint8](dst), c, slice[uint8](a), slice[uint8](b))
	}
}

func where[T Elem](shape []int, st [][]int, d []T, c []uint8, a, b []T) {
	forRows(shape, st, func(o []int, n int, in []int) {
		whereRow(d[o[0]:], c[o[1]:], a[o[2]:], b[o[3]:], n, [4]int(in))
	})
}

// whereRow writes one row of Where: n elements with the given strides
// (dst, cond, a, b). Contiguous float rows (a and b may be broadcast
// scalars) select by bit masks, without a branch per element, which
// random masks (LeakyReLU's, attention masks) would mispredict.
func whereRow[T Elem](d []T, c []uint8, a, b []T, n int, in [4]int) {
	if in[0] == 1 && in[1] == 1 && in[2] <= 1 && in[3] <= 1 {
		switch d := any(d).(type) {
		case []float32:
			whereBits32(d, c, any(a).([]float32), any(b).([]float32), n, in[2], in[3])
			return
		case []float64:
			whereBits64(d, c, any(a).([]float64), any(b).([]float64), n, in[2], in[3])
			return
		}
	}
	for j := 0; j < n; j++ {
		if c[j*in[1]] != 0 {
			d[j*in[0]] = a[j*in[2]]
		} else {
			d[j*in[0]] = b[j*in[3]]
		}
	}
}

func whereBits32(d []float32, c []uint8, a, b []float32, n, sa, sb int) {
	d, c = d[:n], c[:n]
	for j := range d {
		m := -uint32(nonzero(c[j]))
		d[j] = math.Float32frombits(math.Float32bits(a[j*sa])&m | math.Float32bits(b[j*sb])&^m)
	}
}

func whereBits64(d []float64, c []uint8, a, b []float64, n, sa, sb int) {
	d, c = d[:n], c[:n]
	for j := range d {
		m := -uint64(nonzero(c[j]))
		d[j] = math.Float64frombits(math.Float64bits(a[j*sa])&m | math.Float64bits(b[j*sb])&^m)
	}
}

// nonzero is 1 when x is not 0 and 0 when it is, without a branch.
func nonzero(x uint8) uint8 { return (x | -x) >> 7 }

// Cumsum writes the running sums along the middle axis.
func (*Backend) Cumsum(outer, n, inner int, dst, src backend.Arg) {
	switch dst.Buf.DType() {
	case backend.Float32:
		cumsum(outer, n, inner, slice[float32](dst), slice[float32](src))
	case backend.Float64:
		cumsum(outer, n, inner, slice[float64](dst), slice[float64](src))
	case backend.Int32:
		cumsum(outer, n, inner, slice[int32](dst), slice[int32](src))
	case backend.Int64:
		cumsum(outer, n, inner, slice[int64](dst), slice[int64](src))
	default:
		cumsum(outer, n, inner, slice[uint8](dst), slice[uint8](src))
	}
}

// cumsum adds in the element type, one step at a time in order (the
// device kernels' order, bit for bit; PyTorch's CPU cumsum accumulates
// float32 in float64: callers that need that convert first).
func cumsum[T Elem](outer, n, inner int, d, s []T) {
	parallelFor(outer, max(1, elemGrain/max(n*inner, 1)), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			base := o * n * inner
			for i := 0; i < inner; i++ {
				var acc T
				for j := 0; j < n; j++ {
					k := base + j*inner + i
					acc += s[k]
					d[k] = acc
				}
			}
		}
	})
}

// Sort sorts along the middle axis, stably, writing values and positions.
func (*Backend) Sort(outer, n, inner int, desc bool, vals, idx, src backend.Arg) {
	ix := slice[int64](idx)
	switch src.Buf.DType() {
	case backend.Float32:
		sortAxis(outer, n, inner, desc, slice[float32](vals), ix, slice[float32](src))
	case backend.Float64:
		sortAxis(outer, n, inner, desc, slice[float64](vals), ix, slice[float64](src))
	case backend.Int32:
		sortAxis(outer, n, inner, desc, slice[int32](vals), ix, slice[int32](src))
	case backend.Int64:
		sortAxis(outer, n, inner, desc, slice[int64](vals), ix, slice[int64](src))
	default:
		sortAxis(outer, n, inner, desc, slice[uint8](vals), ix, slice[uint8](src))
	}
}

func sortAxis[T Elem](outer, n, inner int, desc bool, vals []T, idx []int64, src []T) {
	parallelFor(outer*inner, max(1, elemGrain/max(n, 1)), func(lo, hi int) {
		perm := make([]int, n)
		for r := lo; r < hi; r++ {
			o, i := r/inner, r%inner
			base := o*n*inner + i
			at := func(j int) T { return src[base+j*inner] }
			for j := range perm {
				perm[j] = j
			}
			slices.SortStableFunc(perm, func(x, y int) int {
				c := cmpNaNLast(at(x), at(y))
				if desc {
					c = -c
				}
				return c
			})
			for j, p := range perm {
				vals[base+j*inner] = at(p)
				idx[base+j*inner] = int64(p)
			}
		}
	})
}

// cmpNaNLast orders numbers ascending with NaN above everything (and equal
// to NaN), as NumPy and PyTorch sort.
func cmpNaNLast[T Elem](a, b T) int {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

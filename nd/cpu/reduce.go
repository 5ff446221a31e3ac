package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// reducePlan describes a reduction after adjacent axes with the same flag
// have been merged: kept output rows, an optional innermost kept run that is
// reduced as a vector, and the reduced index space split into an outer part
// and an innermost run.
type reducePlan struct {
	rowShape, rowStride []int // kept dims other than the vector run
	vec                 int   // length of the innermost kept run (1 if none)
	redShape, redStride []int // reduced dims other than the innermost one
	inN, inStride       int   // innermost reduced run
}

func planReduce(shape []int, axes []bool) reducePlan {
	sh, red := backend.MergeReduceAxes(shape, axes)
	st := backend.ContiguousStrides(sh)
	p := reducePlan{vec: 1, inN: 1, inStride: 0}
	last := len(sh) - 1
	if last >= 0 && !red[last] {
		p.vec = sh[last]
		sh, red, st = sh[:last], red[:last], st[:last]
	}
	innerFound := false
	for d := len(sh) - 1; d >= 0; d-- {
		if red[d] && !innerFound {
			p.inN, p.inStride = sh[d], st[d]
			innerFound = true
			continue
		}
		if red[d] {
			p.redShape = append([]int{sh[d]}, p.redShape...)
			p.redStride = append([]int{st[d]}, p.redStride...)
		} else {
			p.rowShape = append([]int{sh[d]}, p.rowShape...)
			p.rowStride = append([]int{st[d]}, p.rowStride...)
		}
	}
	return p
}

func offsetOf(idx int, shape, stride []int) int {
	off := 0
	for d := len(shape) - 1; d >= 0; d-- {
		off += (idx % shape[d]) * stride[d]
		idx /= shape[d]
	}
	return off
}

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// Reduce reduces src over the marked axes into dst.
func (*Backend) Reduce(op backend.ReduceOp, shape []int, axes []bool, dst, src backend.Arg) {
	p := planReduce(shape, axes)
	switch src.Buf.DType() {
	case backend.Float64:
		reduceTo[float64](op, p, dst, src)
	case backend.Float32:
		reduceTo[float32](op, p, dst, src)
	case backend.Int32:
		reduceIntTo[int32](op, p, dst, src)
	case backend.Int64:
		reduceIntTo[int64](op, p, dst, src)
	default:
		reduceIntTo[uint8](op, p, dst, src)
	}
}

// reduceTo picks dst's element type for a float source: the source's, or
// any for the index reductions.
func reduceTo[T Float](op backend.ReduceOp, p reducePlan, dst, src backend.Arg) {
	s := slice[T](src)
	switch dst.Buf.DType() {
	case backend.Float32:
		reduce(op, p, slice[float32](dst), s)
	case backend.Float64:
		reduce(op, p, slice[float64](dst), s)
	case backend.Int32:
		reduce(op, p, slice[int32](dst), s)
	case backend.Int64:
		reduce(op, p, slice[int64](dst), s)
	default:
		reduce(op, p, slice[uint8](dst), s)
	}
}

func reduce[D Elem, T Float](op backend.ReduceOp, p reducePlan, d []D, s []T) {
	rows := prod(p.rowShape)
	outer := prod(p.redShape)
	// Split the vector run too when there are fewer rows than workers.
	vchunks := 1
	if rows < workers() && p.vec >= 64 {
		vchunks = workers()
	}
	parallelFor(rows*vchunks, 1, func(lo, hi int) {
		acc := make([]float64, p.vec)
		idx := make([]int, p.vec)
		for task := lo; task < hi; task++ {
			row, vc := task/vchunks, task%vchunks
			v0, v1 := chunkBounds(p.vec, vchunks, vc)
			base := offsetOf(row, p.rowShape, p.rowStride)
			a, ix := acc[v0:v1], idx[v0:v1]
			init := 0.0
			switch op {
			case backend.Max, backend.ArgMax:
				init = math.Inf(-1)
			case backend.Min, backend.ArgMin:
				init = math.Inf(1)
			}
			for i := range a {
				a[i], ix[i] = init, 0
			}
			for ro := 0; ro < outer; ro++ {
				off := base + offsetOf(ro, p.redShape, p.redStride)
				if p.vec == 1 {
					reduceRun(op, &a[0], &ix[0], s[off:], p.inN, p.inStride, ro*p.inN)
					continue
				}
				for j := 0; j < p.inN; j++ {
					run := s[off+j*p.inStride+v0 : off+j*p.inStride+v1]
					r := ro*p.inN + j
					accumulate(op, a, ix, run, r)
				}
			}
			out := d[row*p.vec+v0 : row*p.vec+v1]
			for i := range out {
				if op == backend.ArgMax || op == backend.ArgMin {
					out[i] = D(ix[i])
				} else {
					out[i] = D(a[i])
				}
			}
		}
	})
}

// accumulate folds one run of source values into the accumulators; r is
// the index of the run in the reduced space (for ArgMax).
func accumulate[T Float](op backend.ReduceOp, acc []float64, idx []int, run []T, r int) {
	switch op {
	case backend.Sum:
		if f, ok := asF32(run); ok && useAsmKernel && len(f) > 0 {
			accF32k(&acc[:len(f)][0], &f[0], len(f))
			return
		}
		for i, v := range run {
			acc[i] += float64(v)
		}
	case backend.Max:
		for i, v := range run {
			if float64(v) > acc[i] || v != v {
				acc[i] = float64(v)
			}
		}
	case backend.Min:
		for i, v := range run {
			if float64(v) < acc[i] || v != v {
				acc[i] = float64(v)
			}
		}
	case backend.ArgMax:
		for i, v := range run {
			if f := float64(v); f > acc[i] || (f != f && acc[i] == acc[i]) {
				acc[i] = f
				idx[i] = r
			}
		}
	case backend.ArgMin:
		for i, v := range run {
			if f := float64(v); f < acc[i] || (f != f && acc[i] == acc[i]) {
				acc[i] = f
				idx[i] = r
			}
		}
	}
}

// reduceRun folds n values s[0], s[stride], ... into one accumulator; r0 is
// the reduced-space index of the first value (for ArgMax).
func reduceRun[T Float](op backend.ReduceOp, acc *float64, idx *int, s []T, n, stride, r0 int) {
	a := *acc
	switch op {
	case backend.Sum:
		if f, ok := asF32(s); ok && stride == 1 && n >= 16 && useAsmKernel {
			*acc = a + sumF32k(&f[:n][0], n)
			return
		}
		for j := 0; j < n; j++ {
			a += float64(s[j*stride])
		}
	case backend.Max:
		for j := 0; j < n; j++ {
			if v := float64(s[j*stride]); v > a || v != v {
				a = v
			}
		}
	case backend.Min:
		for j := 0; j < n; j++ {
			if v := float64(s[j*stride]); v < a || v != v {
				a = v
			}
		}
	case backend.ArgMax:
		for j := 0; j < n; j++ {
			if v := float64(s[j*stride]); v > a || (v != v && a == a) {
				a, *idx = v, r0+j
			}
		}
	case backend.ArgMin:
		for j := 0; j < n; j++ {
			if v := float64(s[j*stride]); v < a || (v != v && a == a) {
				a, *idx = v, r0+j
			}
		}
	}
	*acc = a
}

// reduceIntTo reduces an integer or Bool source in int64: sums wrap around
// as Go's integer arithmetic does; the index reductions write into a dst of
// any dtype, the others into one of the source's.
func reduceIntTo[T Int](op backend.ReduceOp, p reducePlan, dst, src backend.Arg) {
	s := slice[T](src)
	switch dst.Buf.DType() {
	case backend.Float32:
		reduceInt(op, p, slice[float32](dst), s)
	case backend.Float64:
		reduceInt(op, p, slice[float64](dst), s)
	case backend.Int32:
		reduceInt(op, p, slice[int32](dst), s)
	case backend.Int64:
		reduceInt(op, p, slice[int64](dst), s)
	default:
		reduceInt(op, p, slice[uint8](dst), s)
	}
}

func reduceInt[D Elem, T Int](op backend.ReduceOp, p reducePlan, d []D, s []T) {
	rows, outer := prod(p.rowShape), prod(p.redShape)
	parallelFor(rows*p.vec, max(1, elemGrain/max(outer*p.inN, 1)), func(lo, hi int) {
		for task := lo; task < hi; task++ {
			row, v := task/p.vec, task%p.vec
			base := offsetOf(row, p.rowShape, p.rowStride) + v
			var acc int64
			idx, first := 0, true
			for ro := 0; ro < outer; ro++ {
				off := base + offsetOf(ro, p.redShape, p.redStride)
				for j := 0; j < p.inN; j++ {
					x := int64(s[off+j*p.inStride])
					better := false
					switch op {
					case backend.Sum:
						acc += x
						continue
					case backend.Max, backend.ArgMax:
						better = first || x > acc
					case backend.Min, backend.ArgMin:
						better = first || x < acc
					}
					if better {
						acc, idx = x, ro*p.inN+j
					}
					first = false
				}
			}
			if op == backend.ArgMax || op == backend.ArgMin {
				d[task] = D(idx)
			} else {
				d[task] = D(acc)
			}
		}
	})
}

package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// DropoutApply implements backend.DropoutApplyKernels: dst = src times
// the dropout mask of the seed held in seed, each mask value computed
// where it is used. Pairs of values share one draw, so the work splits
// over the goroutines at even indices.
func (*Backend) DropoutApply(dst, src, seed backend.Arg, n int, thr uint32, keep float64) {
	s := uint64(slice[int64](seed)[0])
	if isF64(dst) {
		dropoutApply(slice[float64](dst)[:n], slice[float64](src)[:n], s, thr, keep)
	} else {
		dropoutApply(slice[float32](dst)[:n], slice[float32](src)[:n], s, thr, keep)
	}
}

// dropoutApply writes d[i] = x[i]·m_i, m_i the mask value (0 or keep in
// T) of backend.DropoutBits and DropoutValue: the product with the value
// a stored mask would hold, so the same bits.
func dropoutApply[T Float](d, x []T, seed uint64, thr uint32, keep float64) {
	kb := math.Float64bits(keep)
	pairs := (len(d) + 1) / 2
	body := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			u := backend.DropoutBits(seed, uint64(k))
			i := 2 * k
			d[i] = x[i] * T(math.Float64frombits(backend.DropoutValue(uint32(u), thr, kb)))
			if i+1 < len(d) {
				d[i+1] = x[i+1] * T(math.Float64frombits(backend.DropoutValue(uint32(u>>32), thr, kb)))
			}
		}
	}
	if numChunks(pairs, elemGrain/2) <= 1 {
		body(0, pairs)
		return
	}
	parallelFor(pairs, elemGrain/2, body)
}

var _ backend.DropoutApplyKernels = (*Backend)(nil)

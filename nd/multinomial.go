package nd

import (
	"cmp"
	"math"
	"slices"
)

// Multinomial draws numSamples category indices from each row of weights
// (PyTorch's multinomial): weights is a floating vector, or a matrix of
// one distribution per row, of non-negative, finite weights that need not
// sum to 1, of any magnitude from subnormal to the largest float64. The
// result is Int64, [numSamples] or [rows, numSamples]. With replacement
// every draw is independent (as Categorical); without it the
// indices of a row are distinct, drawn one after another in proportion to
// the weights of the categories not yet drawn (PyTorch's exponential race:
// the numSamples largest wᵢ/Eᵢ, Eᵢ exponential draws, in decreasing
// order). Without replacement numSamples may not exceed a row's number of
// non-zero weights, so that a zero-weight category is never drawn
// (PyTorch 1.13 then draws zero-weight categories). The weights are read
// back to the host and the draws come from the generator of their context
// in their session (see Seed): the same seed gives the same draws on every
// backend, though not PyTorch's. A row of zeros, a negative, NaN or
// infinite weight, or numSamples < 1 is an error.
func Multinomial(weights *NDArray, numSamples int, replacement bool) *NDArray {
	const op = "Multinomial"
	defer checkLive(op, weights).done()
	checkFloat(op, weights)
	if nd := weights.NDim(); nd != 1 && nd != 2 {
		fail(op, ErrShape, "weights of shape %v: want a vector or a matrix of rows", weights.shape)
	}
	if numSamples < 1 {
		fail(op, ErrArgument, "%d samples: want at least one", numSamples)
	}
	k := weights.shape[weights.NDim()-1]
	if k > 1<<24 {
		fail(op, ErrShape, "%d categories: at most 2^24", k)
	}
	if !replacement && numSamples > k {
		fail(op, ErrArgument, "%d samples without replacement from %d categories", numSamples, k)
	}
	w := weights.Float64s()
	rows := 1
	if weights.NDim() == 2 {
		rows = weights.shape[0]
	}
	for r := range rows {
		row := w[r*k : (r+1)*k]
		sum, nonzero := 0.0, 0
		for j, v := range row {
			if !(v >= 0) || math.IsInf(v, 1) {
				fail(op, ErrArgument, "row %d has the weight %g at category %d: want finite, non-negative weights", r, v, j)
			}
			sum += v
			if v > 0 {
				nonzero++
			}
		}
		if sum == 0 {
			fail(op, ErrArgument, "row %d's weights sum to 0", r)
		}
		if !replacement && numSamples > nonzero {
			fail(op, ErrArgument, "row %d has %d non-zero weights: cannot draw %d samples without replacement", r, nonzero, numSamples)
		}
	}
	out := make([]int64, rows*numSamples)
	g := weights.Session().rngFor(weights.st.dev)
	g.mu.Lock()
	for r := range rows {
		row, dst := w[r*k:(r+1)*k], out[r*numSamples:(r+1)*numSamples]
		if replacement {
			drawWithReplacement(g, row, dst)
		} else {
			drawWithoutReplacement(g, row, dst)
		}
	}
	g.mu.Unlock()
	shape := []int{numSamples}
	if weights.NDim() == 2 {
		shape = []int{rows, numSamples}
	}
	a := newArray(op, weights.Session(), weights.st.dev, Int64, shape)
	a.be().Write(a.st.buf, a.off, out)
	return a
}

// drawWithReplacement fills dst with independent draws from the weights
// row, inverting its cumulative distribution. The weights are divided by
// the largest first, so that neither subnormal weights (whose sum holds a
// few bits) nor huge ones (whose sum overflows) bias the draws.
func drawWithReplacement(g *lockedRand, row []float64, dst []int64) {
	top := slices.Max(row) // > 0: the row's sum is not 0
	cdf := make([]float64, len(row))
	sum, last := 0.0, 0
	for j, v := range row {
		v /= top // in [0, 1]: the sum is at most the number of categories
		sum += v
		cdf[j] = sum
		if v > 0 {
			last = j
		}
	}
	for i := range dst {
		u := g.r.Float64() * sum
		j, _ := slices.BinarySearch(cdf, u)
		for j < last && cdf[j] <= u { // the first category whose cumulative weight passes u
			j++
		}
		dst[i] = int64(j)
	}
}

// drawWithoutReplacement fills dst with the categories of the len(dst)
// largest keys wᵢ/Eᵢ (Eᵢ exponential), largest first: a draw in
// proportion to the weights, then another among the rest, and so on. The
// keys are compared as log₂ wᵢ − log₂ Eᵢ, which neither overflows for
// huge weights nor underflows for subnormal ones. (math.Log2 splits off
// the exponent with Frexp; math.Log's amd64 assembly returns −709.09 for
// every subnormal, golang/go#56600.)
func drawWithoutReplacement(g *lockedRand, row []float64, dst []int64) {
	type key struct {
		k float64
		i int
	}
	keys := make([]key, 0, len(row))
	for i, v := range row {
		e := g.r.ExpFloat64()
		if v > 0 {
			keys = append(keys, key{math.Log2(v) - math.Log2(e), i})
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(b.k, a.k); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	for i := range dst {
		dst[i] = int64(keys[i].i)
	}
}

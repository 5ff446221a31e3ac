package quantization

import (
	"fmt"
	"math"
)

// histBins is the number of bins of a histogram observer (torch's
// HistogramObserver default).
const histBins = 2048

// histDstBins is the number of quantization levels the search assumes:
// torch's 2^8 for quint8, also with reduce_range.
const histDstBins = 256

// histogram is the state of a histogram observer: counts of the values
// seen in histBins equal bins over [lo, hi], the range of everything
// seen. A batch that widens the range re-bins the counts so far into the
// wider bins, spreading each old bin over the new ones it overlaps in
// proportion (torch's up- and down-sampling does the same on a grid 128
// times finer).
type histogram struct {
	lo, hi float32
	counts []float64
}

// add counts x, whose range is [lo, hi] (no NaN).
func (h *histogram) add(x []float32, lo, hi float32) {
	if len(x) == 0 {
		return
	}
	if h.counts == nil {
		h.lo, h.hi, h.counts = lo, hi, make([]float64, histBins)
	} else if lo < h.lo || hi > h.hi {
		h.rebin(min(lo, h.lo), max(hi, h.hi))
	}
	if h.hi == h.lo {
		h.counts[0] += float64(len(x))
		return
	}
	// torch.histc's bin, in float32: (v − lo)·bins/(hi − lo).
	d := h.hi - h.lo
	for _, v := range x {
		i := int(float32(float32(v-h.lo)*histBins) / d)
		h.counts[min(max(i, 0), histBins-1)]++
	}
}

// rebin spreads the counts over the bins of the range [lo, hi], which
// holds the current one.
func (h *histogram) rebin(lo, hi float32) {
	counts := make([]float64, histBins)
	w := (float64(hi) - float64(lo)) / histBins
	bin := func(v float64) int { return min(max(int((v-float64(lo))/w), 0), histBins-1) }
	ow := (float64(h.hi) - float64(h.lo)) / histBins
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		a0 := float64(h.lo) + float64(i)*ow // the old bin [a0, a1)
		if ow == 0 {
			counts[bin(a0)] += c
			continue
		}
		a1 := a0 + ow
		j0, j1 := bin(a0), bin(a1)
		for j := j0; j <= j1; j++ {
			e0, e1 := max(a0, float64(lo)+float64(j)*w), a1
			if j < j1 {
				e1 = float64(lo) + float64(j+1)*w
			}
			if j == j0 {
				e0 = a0
			}
			if e1 > e0 {
				counts[j] += c * (e1 - e0) / ow
			}
		}
	}
	h.lo, h.hi, h.counts = lo, hi, counts
}

// search returns the range torch's HistogramObserver quantizes to
// (_non_linear_param_search, after Caffe2's NormMinimization): bins are
// dropped from whichever end holds fewer values, a quantile step of 1e-5
// at a time, while the L2 error of quantizing the histogram uniformly to
// histDstBins levels over the remaining bins decreases.
func (h *histogram) search() (lo, hi float32) {
	if h.counts == nil || h.hi == h.lo {
		return h.lo, h.hi
	}
	var total float64
	csum := make([]float64, histBins)
	for i, c := range h.counts {
		total += c
		csum[i] = total
	}
	const step = 1e-5
	alpha, beta := 0.0, 1.0
	start, end := 0, histBins-1
	best := math.Inf(1)
	for alpha < beta {
		na, nb := alpha+step, beta-step
		l, r := start, end
		for l < end && csum[l] < na*total {
			l++
		}
		for r > start && csum[r] > nb*total {
			r--
		}
		ns, ne := start, end
		if l-start > end-r {
			ns, alpha = l, na
		} else {
			ne, beta = r, nb
		}
		if ns == start && ne == end {
			continue
		}
		norm := h.quantError(ns, ne)
		if norm > best {
			break
		}
		best, start, end = norm, ns, ne
	}
	w := (h.hi - h.lo) / histBins // float32, as torch's tensors
	return h.lo + float32(w*float32(start)), h.lo + float32(w*float32(end+1))
}

// quantError is torch's _compute_quantization_error: the L2 error of
// quantizing the values of the histogram (uniform within each bin) to
// histDstBins levels spanning the bins [start, end], those outside
// clamped to the first or last level.
func (h *histogram) quantError(start, end int) float64 {
	bw := (float64(h.hi) - float64(h.lo)) / histBins
	dw := bw * float64(end-start+1) / histDstBins
	if dw == 0 {
		return 0
	}
	cube := func(a, b float64) float64 { return (b*b*b - a*a*a) / 3 }
	var norm float64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		density := c / bw
		begin := float64(i-start) * bw
		endv := begin + bw
		db := min(max(math.Floor(begin/dw), 0), histDstBins-1)
		de := min(max(math.Floor(endv/dw), 0), histDstBins-1)
		norm += density * cube(begin-(db+0.5)*dw, dw/2)
		norm += (de - db - 1) * density * cube(-dw/2, dw/2)
		norm += density * cube(-dw/2, endv-(de*dw+dw/2))
	}
	return norm
}

// histQParams returns the input quantization a histogram observer
// chooses: MinMaxQParams of the searched range.
func histQParams(h *histogram, reduceRange bool) (QParams, error) {
	if h.counts == nil {
		return QParams{}, fmt.Errorf("quantization: empty histogram")
	}
	lo, hi := h.search()
	return MinMaxQParams(lo, hi, reduceRange)
}

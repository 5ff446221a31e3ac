package metric

import (
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// comoments are the sufficient statistics of a Pearson correlation: the
// count, the means of x (labels) and y (predictions), the sums of squared
// deviations from the means and the sum of cross deviations. Each mean is
// kept as a shift (a sample value) plus the mean of the data less the
// shift, so data far from 0 (1e8 ± 1, say) keep their small differences:
// subtracting nearby values is exact in floating point.
type comoments struct {
	n             int64
	kx, ky        float64 // shifts
	mx, my        float64 // means less the shifts
	m2x, m2y, cxy float64
}

// batchComoments returns the comoments of the pairs (x[i], y[i]), computed
// in two passes (means first, then deviations from them) on the data less
// their first pair.
func batchComoments(x, y []float64) comoments {
	c := comoments{n: int64(len(x))}
	if c.n == 0 {
		return c
	}
	c.kx, c.ky = x[0], y[0]
	for i := range x {
		c.mx += x[i] - c.kx
		c.my += y[i] - c.ky
	}
	c.mx /= float64(c.n)
	c.my /= float64(c.n)
	for i := range x {
		dx, dy := (x[i]-c.kx)-c.mx, (y[i]-c.ky)-c.my
		c.m2x += dx * dx
		c.m2y += dy * dy
		c.cxy += dx * dy
	}
	return c
}

// merge folds b into c with the pairwise update of Chan, Golub and LeVeque
// (the parallel form of Welford's algorithm), exact up to rounding.
func (c *comoments) merge(b comoments) {
	switch {
	case b.n == 0:
		return
	case c.n == 0:
		*c = b
		return
	}
	n := c.n + b.n
	dx := (b.kx - c.kx) + (b.mx - c.mx)
	dy := (b.ky - c.ky) + (b.my - c.my)
	w := float64(c.n) * float64(b.n) / float64(n)
	c.mx += dx * float64(b.n) / float64(n)
	c.my += dy * float64(b.n) / float64(n)
	c.m2x += b.m2x + dx*dx*w
	c.m2y += b.m2y + dy*dy*w
	c.cxy += b.cxy + dx*dy*w
	c.n = n
}

// r returns the correlation coefficient, NaN when either variable has no
// spread (fewer than two samples, or constant values).
func (c comoments) r() float64 {
	if c.n < 2 || c.m2x == 0 || c.m2y == 0 {
		return math.NaN()
	}
	r := c.cxy / (math.Sqrt(c.m2x) * math.Sqrt(c.m2y))
	return max(-1, min(1, r)) // rounding may step just outside
}

// PearsonCorrelation is mx.metric.PearsonCorrelation: the Pearson
// correlation coefficient between labels and predictions, taken over every
// element of every update since the last Reset (arrays are flattened;
// labels must hold as many elements as their predictions). The statistics
// (means and co-moments) are merged batch by batch in float64 with the
// pairwise form of Welford's algorithm, on data shifted by a sample value,
// so the result is the coefficient of all the data, accurate even for
// values far from 0 with a small spread, and neither order nor batching
// changes it beyond rounding; no running sum of squares is kept. Constant labels or predictions (no spread) give NaN, as does a
// single sample.
//
// This is MXNet 1.9's average="micro" and Gluon 2.0's metric. MXNet 1.9's
// default, average="macro", averages the coefficient of each array
// instead.
//
// The zero value is ready to use.
type PearsonCorrelation struct {
	mu sync.Mutex
	st comoments
}

// NewPearsonCorrelation returns an empty PearsonCorrelation.
func NewPearsonCorrelation() *PearsonCorrelation { return &PearsonCorrelation{} }

// Update adds a batch of one label and one prediction array per device.
func (m *PearsonCorrelation) Update(labels, preds []*nd.NDArray) {
	const op = "metric.PearsonCorrelation.Update"
	ls, ps := read(op, labels, preds, true)
	var batch comoments
	for i := range ps {
		if len(ls[i].data) != len(ps[i].data) {
			nd.Panicf(op, nd.ErrShape, "labels of shape %v do not match predictions of shape %v (device %d: %d labels, %d predictions)",
				ls[i].shape, ps[i].shape, i, len(ls[i].data), len(ps[i].data))
		}
		batch.merge(batchComoments(ls[i].data, ps[i].data))
	}
	m.mu.Lock()
	m.st.merge(batch)
	m.mu.Unlock()
}

// Get returns "pearsonr" and the correlation coefficient (NaN before two
// samples, or when labels or predictions are constant).
func (m *PearsonCorrelation) Get() (string, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "pearsonr", m.st.r()
}

// Reset forgets every update.
func (m *PearsonCorrelation) Reset() {
	m.mu.Lock()
	m.st = comoments{}
	m.mu.Unlock()
}

package metric

import (
	"math"

	"github.com/goluon/goluon/nd"
)

// pNorm returns the p-norm of d (p > 0, +Inf for the largest magnitude).
// Values are scaled by the largest magnitude first, so neither large nor
// tiny differences overflow or underflow.
func pNorm(d []float64, p float64) float64 {
	top := 0.0
	for _, v := range d {
		top = max(top, math.Abs(v))
	}
	if top == 0 || math.IsNaN(top) || math.IsInf(top, 1) || math.IsInf(p, 1) {
		return top // max propagates NaN
	}
	var s float64
	for _, v := range d {
		switch a := math.Abs(v) / top; p {
		case 1:
			s += a
		case 2:
			s += a * a
		default:
			s += math.Pow(a, p)
		}
	}
	switch p {
	case 1:
		return top * s
	case 2:
		return top * math.Sqrt(s)
	}
	return top * math.Pow(s, 1/p)
}

// MeanPairwiseDistance is Gluon 2.0's mx.gluon.metric.MeanPairwiseDistance:
// the mean over samples of the p-norm of label − pred. Samples are the
// entries of the predictions' first axis, flattened ([N] predictions are N
// one-value samples, so the distance is |label − pred|); labels must hold
// as many elements as the predictions and are read in their layout. P is
// the norm's order, 2 (Euclidean) unless set, any p > 0 or +Inf (the
// largest absolute difference).
//
// MXNet raises each difference to the power p without taking its absolute
// value first, which is only a norm for even p; here it is the p-norm for
// every p.
//
// The zero value is ready to use.
type MeanPairwiseDistance struct {
	// P is the order of the norm; 0 means 2.
	P float64

	acc runningMean
}

// NewMeanPairwiseDistance returns an empty MeanPairwiseDistance with the
// Euclidean norm.
func NewMeanPairwiseDistance() *MeanPairwiseDistance { return &MeanPairwiseDistance{P: 2} }

// Update adds a batch of one label and one prediction array per device.
func (m *MeanPairwiseDistance) Update(labels, preds []*nd.NDArray) {
	const op = "metric.MeanPairwiseDistance.Update"
	p := m.P
	if p == 0 {
		p = 2
	}
	if !(p > 0) {
		nd.Panicf(op, nd.ErrArgument, "P = %v, want P > 0 (or 0 for the default 2)", m.P)
	}
	ls, ps := read(op, labels, preds, true)
	var sum float64
	var num int64
	for i := range ps {
		n, width := sampleRows(op, i, ls[i], ps[i])
		d := make([]float64, width)
		for r := range n {
			for k := range d {
				d[k] = ls[i].data[r*width+k] - ps[i].data[r*width+k]
			}
			sum += pNorm(d, p)
		}
		num += int64(n)
	}
	m.acc.add(sum, num)
}

// Get returns "mpd" and the mean distance per sample.
func (m *MeanPairwiseDistance) Get() (string, float64) { return "mpd", m.acc.mean() }

// Reset forgets every update.
func (m *MeanPairwiseDistance) Reset() { m.acc.reset() }

// MeanCosineSimilarity is Gluon 2.0's mx.gluon.metric.MeanCosineSimilarity:
// the mean over vectors of label·pred / max(‖label‖·‖pred‖, Epsilon),
// where the vectors lie along the predictions' last axis (predictions
// [N, D] are N vectors, [N, T, D] are N·T; a one-dimensional array is a
// single vector). Labels must hold as many elements as the predictions
// and are read in their layout. A zero vector has similarity 0.
//
// The zero value is ready to use.
type MeanCosineSimilarity struct {
	// Epsilon is the floor of the product of norms; 0 means 1e-8, MXNet's
	// default.
	Epsilon float64

	acc runningMean
}

// NewMeanCosineSimilarity returns an empty MeanCosineSimilarity with
// Epsilon = 1e-8.
func NewMeanCosineSimilarity() *MeanCosineSimilarity { return &MeanCosineSimilarity{Epsilon: 1e-8} }

// Update adds a batch of one label and one prediction array per device.
func (m *MeanCosineSimilarity) Update(labels, preds []*nd.NDArray) {
	const op = "metric.MeanCosineSimilarity.Update"
	eps := m.Epsilon
	if eps == 0 {
		eps = 1e-8
	}
	if !(eps > 0) || math.IsInf(eps, 1) {
		nd.Panicf(op, nd.ErrArgument, "Epsilon = %v, want a positive finite value (or 0 for the default 1e-8)", m.Epsilon)
	}
	ls, ps := read(op, labels, preds, true)
	var sum float64
	var num int64
	for i := range ps {
		label, pred := ls[i], ps[i]
		if len(label.data) != len(pred.data) {
			nd.Panicf(op, nd.ErrShape, "labels of shape %v do not match predictions of shape %v (device %d: %d labels, %d predictions)",
				label.shape, pred.shape, i, len(label.data), len(pred.data))
		}
		if len(pred.shape) == 0 || (pred.shape[len(pred.shape)-1] == 0 && numVectors(pred.shape) > 0) {
			nd.Panicf(op, nd.ErrShape, "predictions of shape %v (device %d) have no vector axis, or empty vectors", pred.shape, i)
		}
		d := pred.shape[len(pred.shape)-1]
		for v := range numVectors(pred.shape) {
			l, p := label.data[v*d:(v+1)*d], pred.data[v*d:(v+1)*d]
			var dot, ll, pp float64
			for k := range l {
				dot += l[k] * p[k]
				ll += l[k] * l[k]
				pp += p[k] * p[k]
			}
			sum += dot / max(math.Sqrt(ll)*math.Sqrt(pp), eps)
		}
		num += int64(numVectors(pred.shape))
	}
	m.acc.add(sum, num)
}

// numVectors returns the number of vectors along the last axis of shape:
// the product of the other dimensions.
func numVectors(shape []int) int {
	n := 1
	for _, s := range shape[:len(shape)-1] {
		n *= s
	}
	return n
}

// Get returns "cos_sim" and the mean cosine similarity per vector.
func (m *MeanCosineSimilarity) Get() (string, float64) { return "cos_sim", m.acc.mean() }

// Reset forgets every update.
func (m *MeanCosineSimilarity) Reset() { m.acc.reset() }

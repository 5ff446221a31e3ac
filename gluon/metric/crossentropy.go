package metric

import (
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// DefaultEpsilon is the value CrossEntropy adds to probabilities before the
// logarithm, as mx.metric.CrossEntropy's eps.
const DefaultEpsilon = 1e-12

// CrossEntropy is mx.metric.CrossEntropy: the mean over samples of
// −log(p[label] + Epsilon), for predictions that are probabilities [N, C]
// (the output of a softmax, not raw scores) and labels holding N class
// indices. A label outside [0, C) panics.
//
// The zero value is ready to use.
type CrossEntropy struct {
	// Epsilon is added to each probability; 0 means DefaultEpsilon.
	Epsilon float64

	mu  sync.Mutex
	sum float64
	num int64
}

// NewCrossEntropy returns an empty CrossEntropy with Epsilon = DefaultEpsilon.
func NewCrossEntropy() *CrossEntropy { return &CrossEntropy{Epsilon: DefaultEpsilon} }

// Update adds a batch of one label and one prediction array per device.
func (m *CrossEntropy) Update(labels, preds []*nd.NDArray) {
	const op = "metric.CrossEntropy.Update"
	eps := m.Epsilon
	if eps == 0 {
		eps = DefaultEpsilon
	}
	sum, num := negLogProbs(op, labels, preds, eps)
	m.mu.Lock()
	m.sum += sum
	m.num += num
	m.mu.Unlock()
}

// negLogProbs checks a batch of probabilities [N, C] and N class labels per
// device and returns the sum of −log(p[label] + eps) over the samples, and
// their number.
func negLogProbs(op string, labels, preds []*nd.NDArray, eps float64) (sum float64, num int64) {
	ls, ps := read(op, labels, preds, true)
	for i := range ps {
		label, pred := ls[i], ps[i]
		if len(pred.shape) != 2 || pred.shape[0] != len(label.data) {
			nd.Panicf(op, nd.ErrShape, "predictions of shape %v do not fit labels of shape %v (want probabilities [%d, C])",
				pred.shape, label.shape, len(label.data))
		}
		n, c := pred.shape[0], pred.shape[1]
		for r := range n {
			lbl := classIndex(label.data[r])
			if lbl < 0 || lbl >= int64(c) {
				nd.Panicf(op, nd.ErrArgument, "label %v of sample %d (device %d) is outside [0, %d)", label.data[r], r, i, c)
			}
			sum -= math.Log(pred.data[r*c+int(lbl)] + eps)
		}
		num += int64(n)
	}
	return sum, num
}

// Get returns "cross-entropy" and the mean cross-entropy per sample.
func (m *CrossEntropy) Get() (string, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "cross-entropy", ratio(m.sum, m.num)
}

// Reset forgets every update.
func (m *CrossEntropy) Reset() {
	m.mu.Lock()
	m.sum, m.num = 0, 0
	m.mu.Unlock()
}

// NegativeLogLikelihood is mx.metric.NegativeLogLikelihood: the mean over
// samples of −log(p[label] + Epsilon), for probabilities [N, C] and labels
// holding N class indices. It computes what CrossEntropy does, under
// MXNet's other name ("nll-loss"); a label outside [0, C) panics.
//
// The zero value is ready to use.
type NegativeLogLikelihood struct {
	// Epsilon is added to each probability; 0 means DefaultEpsilon.
	Epsilon float64

	acc runningMean
}

// NewNegativeLogLikelihood returns an empty NegativeLogLikelihood with
// Epsilon = DefaultEpsilon.
func NewNegativeLogLikelihood() *NegativeLogLikelihood {
	return &NegativeLogLikelihood{Epsilon: DefaultEpsilon}
}

// Update adds a batch of one label and one prediction array per device.
func (m *NegativeLogLikelihood) Update(labels, preds []*nd.NDArray) {
	eps := m.Epsilon
	if eps == 0 {
		eps = DefaultEpsilon
	}
	m.acc.add(negLogProbs("metric.NegativeLogLikelihood.Update", labels, preds, eps))
}

// Get returns "nll-loss" and the mean negative log-likelihood per sample.
func (m *NegativeLogLikelihood) Get() (string, float64) { return "nll-loss", m.acc.mean() }

// Reset forgets every update.
func (m *NegativeLogLikelihood) Reset() { m.acc.reset() }

// Loss is mx.metric.Loss: the mean of the elements of the given loss
// arrays (the per-sample losses each device computed), passed as preds.
// Labels are ignored and may be nil.
//
// The zero value is ready to use.
type Loss struct {
	mu  sync.Mutex
	sum float64
	num int64
}

// NewLoss returns an empty Loss metric.
func NewLoss() *Loss { return &Loss{} }

// Update adds the per-device loss arrays in preds; labels are ignored.
func (m *Loss) Update(_, preds []*nd.NDArray) {
	_, ps := read("metric.Loss.Update", nil, preds, false)
	var sum float64
	var num int64
	for _, p := range ps {
		for _, v := range p.data {
			sum += v
		}
		num += int64(len(p.data))
	}
	m.mu.Lock()
	m.sum += sum
	m.num += num
	m.mu.Unlock()
}

// Get returns "loss" and the mean loss per element.
func (m *Loss) Get() (string, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return "loss", ratio(m.sum, m.num)
}

// Reset forgets every update.
func (m *Loss) Reset() {
	m.mu.Lock()
	m.sum, m.num = 0, 0
	m.mu.Unlock()
}

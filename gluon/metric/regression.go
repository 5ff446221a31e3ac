package metric

import (
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// runningMean is the state of a metric that averages one value per sample:
// a float64 sum and an exact sample count, behind a mutex.
type runningMean struct {
	mu  sync.Mutex
	sum float64
	num int64
}

// add counts num more samples whose values sum to sum.
func (r *runningMean) add(sum float64, num int64) {
	r.mu.Lock()
	r.sum += sum
	r.num += num
	r.mu.Unlock()
}

// mean returns the mean per sample, NaN before the first sample.
func (r *runningMean) mean() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return ratio(r.sum, r.num)
}

// reset forgets every sample.
func (r *runningMean) reset() {
	r.mu.Lock()
	r.sum, r.num = 0, 0
	r.mu.Unlock()
}

// sampleRows checks that label holds as many elements as pred and returns
// the number of samples (pred's first axis; a 0-d pred is one sample) and
// the number of elements per sample. The label is read in pred's layout,
// as a reshape: only the element counts must agree.
func sampleRows(op string, device int, label, pred host) (n, width int) {
	if len(label.data) != len(pred.data) {
		nd.Panicf(op, nd.ErrShape, "labels of shape %v do not match predictions of shape %v (device %d: %d labels, %d predictions)",
			label.shape, pred.shape, device, len(label.data), len(pred.data))
	}
	if len(pred.shape) == 0 {
		return 1, len(pred.data)
	}
	n = pred.shape[0]
	if n == 0 {
		return 0, 0
	}
	width = len(pred.data) / n
	if width == 0 {
		nd.Panicf(op, nd.ErrShape, "predictions of shape %v (device %d) have samples with no elements", pred.shape, device)
	}
	return n, width
}

// sampleMeans returns the sum over the samples of every device of the mean
// of f(label - pred) over each sample's elements, and the number of
// samples.
func sampleMeans(op string, labels, preds []*nd.NDArray, f func(d float64) float64) (sum float64, num int64) {
	ls, ps := read(op, labels, preds, true)
	for i := range ps {
		n, width := sampleRows(op, i, ls[i], ps[i])
		for r := range n {
			var s float64
			for k := r * width; k < (r+1)*width; k++ {
				s += f(ls[i].data[k] - ps[i].data[k])
			}
			sum += s / float64(width)
		}
		num += int64(n)
	}
	return sum, num
}

func square(d float64) float64 { return d * d }

// MAE is mx.metric.MAE: the mean absolute error. Each sample is one entry
// of the predictions' first axis ([N] predictions are N samples of one
// value, [N, K] ones N samples of K values); its error is the mean of
// |label − pred| over its values, and the metric is the mean of that over
// every sample since the last Reset. Labels must hold as many elements as
// the predictions and are read in the predictions' layout, so labels [N]
// go with predictions [N, 1].
//
// This is Gluon 2.0's mx.gluon.metric.MAE, and equals the mean over all
// elements when every sample has the same size. MXNet 1.9's mx.metric.MAE
// instead averages the per-array means, each (label, prediction) pair
// counting once whatever its batch size; the two agree when every batch
// has the same size. MXNet broadcasts labels against predictions of a
// different size; here that panics.
//
// The zero value is ready to use.
type MAE struct{ acc runningMean }

// NewMAE returns an empty MAE.
func NewMAE() *MAE { return &MAE{} }

// Update adds a batch of one label and one prediction array per device.
func (m *MAE) Update(labels, preds []*nd.NDArray) {
	m.acc.add(sampleMeans("metric.MAE.Update", labels, preds, math.Abs))
}

// Get returns "mae" and the mean absolute error per sample.
func (m *MAE) Get() (string, float64) { return "mae", m.acc.mean() }

// Reset forgets every update.
func (m *MAE) Reset() { m.acc.reset() }

// MSE is mx.metric.MSE: the mean squared error, over samples as MAE
// describes (Gluon 2.0's semantics; MXNet 1.9 averages per-array means).
//
// The zero value is ready to use.
type MSE struct{ acc runningMean }

// NewMSE returns an empty MSE.
func NewMSE() *MSE { return &MSE{} }

// Update adds a batch of one label and one prediction array per device.
func (m *MSE) Update(labels, preds []*nd.NDArray) {
	m.acc.add(sampleMeans("metric.MSE.Update", labels, preds, square))
}

// Get returns "mse" and the mean squared error per sample.
func (m *MSE) Get() (string, float64) { return "mse", m.acc.mean() }

// Reset forgets every update.
func (m *MSE) Reset() { m.acc.reset() }

// RMSE is mx.metric.RMSE: the square root of the mean squared error over
// every sample since the last Reset (samples as MAE describes). This is
// Gluon 2.0's semantics; MXNet 1.9's mx.metric.RMSE averages the RMSE of
// each array instead, which is not the RMSE of the data set.
//
// The zero value is ready to use.
type RMSE struct{ acc runningMean }

// NewRMSE returns an empty RMSE.
func NewRMSE() *RMSE { return &RMSE{} }

// Update adds a batch of one label and one prediction array per device.
func (m *RMSE) Update(labels, preds []*nd.NDArray) {
	m.acc.add(sampleMeans("metric.RMSE.Update", labels, preds, square))
}

// Get returns "rmse" and the root of the mean squared error per sample.
func (m *RMSE) Get() (string, float64) { return "rmse", math.Sqrt(m.acc.mean()) }

// Reset forgets every update.
func (m *RMSE) Reset() { m.acc.reset() }

package metric_test

import (
	"testing"

	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
)

// TestIntegerLabels checks that Accuracy and TopKAccuracy take integer
// labels and integer class predictions (ArgMax's Int64 output).
func TestIntegerLabels(t *testing.T) {
	scores := arr(c0, []float32{0.1, 0.7, 0.2, 0.5, 0.3, 0.2, 0.2, 0.3, 0.5}, 3, 3)
	for _, labels := range []*nd.NDArray{
		nd.FromSlice(c0, []int64{1, 0, 0}),
		nd.FromSlice(c0, []int32{1, 0, 0}),
		nd.FromSlice(c0, []uint8{1, 0, 0}),
	} {
		acc := metric.NewAccuracy()
		acc.Update(list(labels), list(scores))
		acc.Update(list(labels), list(nd.ArgMax(scores, 1)))
		if _, v := acc.Get(); v != 4.0/6 {
			t.Errorf("%v labels: accuracy %v, want 4/6", labels.DType(), v)
		}
		top2 := metric.NewTopKAccuracy(2)
		top2.Update(list(labels), list(scores))
		if _, v := top2.Get(); v != 2.0/3 {
			t.Errorf("%v labels: top-2 accuracy %v, want 2/3", labels.DType(), v)
		}
	}
}

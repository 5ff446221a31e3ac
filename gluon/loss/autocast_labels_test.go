package loss_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
)

// TestLossesHalfLabelsUnderAutocast: inside an autocast scope a loss takes
// half-precision labels and weights as torch does (both inputs cast to
// float32); it used to refuse them as a dtype mismatch with its own
// float32 predictions.
func TestLossesHalfLabelsUnderAutocast(t *testing.T) {
	c := ctx.CPU(0)
	pred, label := nd.Full(c, nd.Float16, 0.75, 2, 3), nd.Full(c, nd.Float16, 0.25, 2, 3)
	weight := nd.Full(c, nd.Float16, 2, 2, 1)
	for name, l := range map[string]loss.Weighted{
		"L2": loss.NewL2(), "L1": loss.NewL1(), "SigmoidBCE": loss.NewSigmoidBCE(false), "Huber": loss.NewHuber(),
	} {
		var got, want *nd.NDArray
		err := nd.Catch(func() {
			nd.Autocast(nd.Float16, func() { got = l.ForwardWeighted(pred, label, weight) })
			want = l.ForwardWeighted(pred.AsType(nd.Float32), label.AsType(nd.Float32), weight.AsType(nd.Float32))
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.DType() != nd.Float32 {
			t.Errorf("%s: %v loss under autocast, want float32", name, got.DType())
		}
		g, w := got.Float32s(), want.Float32s()
		for i := range w {
			if math.Abs(float64(g[i]-w[i])) > 1e-6 {
				t.Errorf("%s: %v, want %v", name, g, w)
				break
			}
		}
	}
}

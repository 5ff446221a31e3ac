package text_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// TestForwardMaskedTrains: a padded batch trains through ForwardMasked
// and LMLoss with −100 labels at the padding and at each row's first
// token (which, left-padded, the last padding position would otherwise
// predict): on either side of the rows, the loss is the mean over the
// rows' own predicted positions (the rows' losses alone, weighted by
// their positions), and its gradients equal those of the rows' losses
// alone, so weighted, within 1e-5.
func TestForwardMaskedTrains(t *testing.T) {
	dev := ctx.CPU(0)
	rows := [][]int64{{5, 9, 33, 2, 71, 8}, {40, 1, 60, 7}}
	const width = 6
	name := "transformer.h.0.attn.c_attn.weight"
	// alone returns the weighted sum of the rows' losses alone (row i
	// weighted by its predicted positions over all of them) and its
	// gradient to name.
	alone := func(m *text.GPT2) (float64, []float32) {
		total := 0
		for _, r := range rows {
			total += len(r) - 1
		}
		var loss *nd.NDArray
		autograd.Record(func() {
			for _, r := range rows {
				ids := idsArray(dev, [][]int64{r})
				l := nd.MulScalar(text.LMLoss(m.Forward(ids), ids), float64(len(r)-1)/float64(total))
				if loss == nil {
					loss = l
				} else {
					loss = nd.Add(loss, l)
				}
			}
			autograd.Backward(loss)
		})
		return loss.Float64s()[0], gluon.CollectParams(m).Get(name).Grad(dev).Float32s()
	}
	ref := loadTiny(t, tinyConfig())
	wantLoss, wantGrad := alone(ref)
	for _, left := range []bool{true, false} {
		ids, mask, labels := make([][]int64, len(rows)), make([][]int64, len(rows)), make([][]int64, len(rows))
		for i, r := range rows {
			for j := range width {
				at := j - (width - len(r)) // the token at j, left-padded
				if !left {
					at = j
				}
				switch {
				case at == 0: // the row's first token: nothing of the row predicts it
					ids[i], mask[i], labels[i] = append(ids[i], r[at]), append(mask[i], 1), append(labels[i], -100)
				case at > 0 && at < len(r):
					ids[i], mask[i], labels[i] = append(ids[i], r[at]), append(mask[i], 1), append(labels[i], r[at])
				default:
					ids[i], mask[i], labels[i] = append(ids[i], 50), append(mask[i], 0), append(labels[i], -100)
				}
			}
		}
		m := loadTiny(t, tinyConfig())
		var loss *nd.NDArray
		autograd.Record(func() {
			loss = text.LMLoss(m.ForwardMasked(idsArray(dev, ids), idsArray(dev, mask)), idsArray(dev, labels))
			autograd.Backward(loss)
		})
		if got := loss.Float64s()[0]; math.Abs(got-wantLoss) > 1e-5*(1+wantLoss) {
			t.Errorf("left %v: loss %.8g, the rows alone %.8g", left, got, wantLoss)
		}
		grad := gluon.CollectParams(m).Get(name).Grad(dev).Float32s()
		if r := numcmp.RelL2(grad, wantGrad); !(r < 1e-5) {
			t.Errorf("left %v: gradient of %s: relative L2 difference %.3g from the rows alone", left, name, r)
		}
	}
}

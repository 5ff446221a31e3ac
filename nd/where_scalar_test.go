package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestMaskedFillZeroDim: a 0-d input keeps its shape (the fill value used
// to broadcast it to [1]).
func TestMaskedFillZeroDim(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Reshape(nd.Scalar(dev, nd.Float32, 2))
	for _, c := range []struct {
		mask bool
		want float32
	}{{true, -1}, {false, 2}} {
		m := nd.Reshape(nd.FromSlice(dev, []bool{c.mask}, 1))
		y := nd.MaskedFill(x, m, -1)
		if len(y.Shape()) != 0 || !slices.Equal(y.Float32s(), []float32{c.want}) {
			t.Errorf("mask %v: shape %v, values %v; want [] and %v", c.mask, y.Shape(), y.Float32s(), c.want)
		}
	}
}

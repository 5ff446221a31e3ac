package traintest

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// LateNet is a network (Body, LeNet's shape: [N, 1, 28, 28] to 10 logits)
// beside a Dense layer on the flattened input (Late), which Forward adds
// to the logits only once Use is set: a part of a network that the tests
// of freezing keep frozen, uninitialised or elsewhere, and bring in later.
type LateNet struct {
	gluon.BlockMeta
	Body gluon.Block
	Late *nn.Dense
	Use  bool
}

// NewLateNet returns body beside a new Late layer, registered before body
// when lateFirst is set (its parameters then come first).
func NewLateNet(body gluon.Block, lateFirst bool) *LateNet {
	w := &LateNet{BlockMeta: gluon.NewBlockMeta("late")}
	late := nn.NewDense(10, nn.DenseOpts{InUnits: 28 * 28})
	if lateFirst {
		w.Late = w.AddChild(late).(*nn.Dense)
		w.Body = w.AddChild(body).(gluon.Block)
	} else {
		w.Body = w.AddChild(body).(gluon.Block)
		w.Late = w.AddChild(late).(*nn.Dense)
	}
	return w
}

// Forward is Body's output, plus Late's on the flattened input with Use.
func (w *LateNet) Forward(x *nd.NDArray) *nd.NDArray {
	y := w.Body.Forward(x)
	if w.Use {
		y = nd.Add(y, w.Late.Forward(nd.Reshape(x, x.Shape()[0], -1)))
	}
	return y
}

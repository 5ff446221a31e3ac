package gluon_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// elmanCell is a MultiBlock: h' = tanh(x·Wxᵀ + h·Whᵀ + b) from the input
// x and the state h, returning the output and the new state (the same
// array, as for a plain RNN cell).
type elmanCell struct {
	gluon.BlockMeta
	in2h, h2h *nn.Dense
}

func newElmanCell(hidden int) *elmanCell {
	c := &elmanCell{BlockMeta: gluon.NewBlockMeta("elman")}
	c.in2h = c.AddChild(nn.NewDense(hidden, nn.DenseOpts{})).(*nn.Dense)
	c.h2h = c.AddChild(nn.NewDense(hidden, nn.DenseOpts{NoBias: true})).(*nn.Dense)
	return c
}

// ForwardMulti takes (x, h) and returns (output, new state).
func (c *elmanCell) ForwardMulti(in ...*nd.NDArray) []*nd.NDArray {
	h := nd.Tanh(nd.Add(c.in2h.Forward(in[0]), c.h2h.Forward(in[1])))
	return []*nd.NDArray{h, h}
}

// A layer with several inputs and outputs: a recurrent cell run over three
// steps, its state carried from step to step. CollectParams finds the
// parameters of its children as for any block.
func ExampleMultiBlock() {
	dev := ctx.CPU(0)
	cell := newElmanCell(2)
	params := gluon.CollectParams(cell)
	_ = params.Initialize(initializer.One(), []ctx.Context{dev}, false)
	fmt.Println(params.Names())

	h := nd.Zeros(dev, nd.Float32, 1, 2)
	for _, v := range []float32{0.1, -0.2, 0.3} {
		out := gluon.Call(cell, nd.FromSlice(dev, []float32{v}, 1, 1), h)
		h = out[1]
	}
	// With unit weights and zero biases: tanh(0.1) = 0.0997, then
	// tanh(−0.2 + 2·0.0997) ≈ −0.0006, then tanh(0.3 − 0.0012) = 0.290.
	fmt.Printf("%.3f\n", h.Float32s())
	// Output:
	// [dense0.weight dense0.bias dense1.weight]
	// [0.290 0.290]
}

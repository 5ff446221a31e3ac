package rnn_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/nd"
)

// ExampleNewLSTM runs a 2-layer bidirectional LSTM over a batch-first
// sequence from given begin states and prints the shapes of the output and
// of the final states.
func ExampleNewLSTM() {
	dev := ctx.CPU(0)
	lstm := rnn.NewLSTM(16, rnn.Opts{NumLayers: 2, Bidirectional: true, Layout: "NTC"})
	if err := gluon.CollectParams(lstm).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		fmt.Println(err)
		return
	}
	x := nd.Ones(dev, nd.Float32, 3, 10, 8) // batch 3, 10 steps, 8 features
	begin := lstm.BeginState(x, 3)
	outs := gluon.Call(lstm, x, begin[0], begin[1])
	fmt.Println("output", outs[0].Shape())
	fmt.Println("h", outs[1].Shape(), "c", outs[2].Shape())
	fmt.Println(gluon.CollectParams(lstm).Names()[:4])
	// Output:
	// output [3 10 32]
	// h [4 3 16] c [4 3 16]
	// [weight_ih_l0 weight_hh_l0 bias_ih_l0 bias_hh_l0]
}

// ExampleNewGRUCell steps a GRU cell through a sequence by hand, feeding
// each step's state into the next, as a decoder does.
func ExampleNewGRUCell() {
	dev := ctx.CPU(0)
	cell := rnn.NewGRUCell(4, 8)
	if err := gluon.CollectParams(cell).Initialize(nil, []ctx.Context{dev}, false); err != nil {
		fmt.Println(err)
		return
	}
	x := nd.Ones(dev, nd.Float32, 2, 4) // batch 2, 4 features
	h := cell.BeginState(x, 2)[0]
	for range 5 {
		h = gluon.Call(cell, x, h)[0]
	}
	fmt.Println("h", h.Shape())
	// Output:
	// h [2 8]
}

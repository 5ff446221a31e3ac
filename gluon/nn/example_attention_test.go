package nn_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// ExampleMultiHeadAttention attends from 3 queries to 5 keys in a batch of
// 2, with the last key of the second sequence masked out as padding, and
// returns the output and the weights averaged over the heads.
func ExampleMultiHeadAttention() {
	dev := ctx.CPU(0)
	att := nn.NewMultiHeadAttention(16, 4, nn.AttentionOpts{Layout: "NTC"})
	if err := gluon.Initialize(att, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	q := nd.Ones(dev, nd.Float32, 2, 3, 16)
	kv := nd.Ones(dev, nd.Float32, 2, 5, 16)
	pad := nd.FromSlice(dev, []bool{
		false, false, false, false, false,
		false, false, false, false, true,
	}, 2, 5)
	res := gluon.Call(att, q, kv, kv, pad)
	out, w := res[0], res[1]
	fmt.Println("output", out.Shape(), "weights", w.Shape())
	fmt.Printf("weight of the padded key: %.2f\n", w.Float64s()[1*15+4])
	// Output:
	// output [2 3 16] weights [2 3 5]
	// weight of the padded key: 0.00
}

// ExampleTransformerEncoderLayer stacks two GPT-style blocks: pre-norm,
// GELU and causal self-attention, so that each position sees only its
// past.
func ExampleTransformerEncoderLayer() {
	dev := ctx.CPU(0)
	opts := nn.TransformerOpts{FeedForward: 128, Activation: "gelu", NormFirst: true, Layout: "NTC", Causal: true}
	net := nn.NewSequential(
		nn.NewTransformerEncoderLayer(32, 4, opts),
		nn.NewTransformerEncoderLayer(32, 4, opts),
	)
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	x := nd.Ones(dev, nd.Float32, 2, 10, 32) // batch, time, features
	fmt.Println(net.Forward(x).Shape(), gluon.CollectParams(net).Len(), "parameters")
	// Output:
	// [2 10 32] 24 parameters
}

// ExampleTransformerDecoderLayer runs a decoder layer over a target of 4
// steps with a causal mask and attends to an encoder's memory of 6 steps.
func ExampleTransformerDecoderLayer() {
	dev := ctx.CPU(0)
	dec := nn.NewTransformerDecoderLayer(16, 2, nn.TransformerOpts{FeedForward: 32, Causal: true})
	if err := gluon.CollectParams(dec).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		fmt.Println(err)
		return
	}
	tgt := nd.Ones(dev, nd.Float32, 4, 2, 16)    // TNC: time, batch, features
	memory := nd.Ones(dev, nd.Float32, 6, 2, 16) // the encoder's output
	fmt.Println(gluon.Call(dec, tgt, memory)[0].Shape())
	// Output:
	// [4 2 16]
}

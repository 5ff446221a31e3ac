// Package nn holds Gluon's neural-network layers: containers (Sequential,
// Concurrent), Dense, Conv1D, Conv2D, Conv2DTranspose, pooling, Upsample, Flatten,
// Dropout (with optional shared-mask axes), BatchNorm, the
// normalisations of sequence models (LayerNorm, GroupNorm, InstanceNorm),
// Embedding, the activations (Activation by name, LeakyReLU, PReLU, ELU,
// GELU, SiLU), and attention: MultiHeadAttention (causal and padding
// masks) and the transformer's TransformerEncoderLayer and
// TransformerDecoderLayer, with PyTorch's parameter names so that a torch
// state_dict loads. Recurrent layers (RNN, LSTM, GRU) are in gluon/rnn.
//
// Most layers are gluon.Blocks; attention and the decoder layer, which take
// several inputs (keys, values, masks, memory), are gluon.MultiBlocks run
// with gluon.Call. Input sizes (Dense's in_units, Conv2D's and
// BatchNorm's in_channels) may be left 0 and are inferred at the first
// forward pass, as in Gluon.
//
// A layer runs on whatever context its input lives on, using its
// parameters' replica there; an input on a context the parameters were not
// initialised on panics with an error naming both.
package nn

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Sequential runs its children one after the other.
type Sequential struct {
	gluon.BlockMeta
}

// NewSequential returns an empty Sequential; add layers with Add.
func NewSequential(blocks ...gluon.Block) *Sequential {
	s := &Sequential{BlockMeta: gluon.NewBlockMeta("sequential")}
	s.Add(blocks...)
	return s
}

// Add appends blocks; unnamed ones are named by kind (conv0, dense1, ...).
func (s *Sequential) Add(blocks ...gluon.Block) {
	for _, b := range blocks {
		s.AddChild(b)
	}
}

// Chained reports that Sequential applies its children in order, so that
// gluon.Summary lists them one by one.
func (s *Sequential) Chained() bool { return true }

// Forward runs the children in order.
func (s *Sequential) Forward(x *nd.NDArray) *nd.NDArray {
	for _, c := range s.Children() {
		x = asBlock("nn.Sequential", c).Forward(x)
	}
	return x
}

// asBlock returns c as a single-input Block; a MultiBlock added with
// AddChild panics with an *nd.Error naming it.
func asBlock(op string, c gluon.Component) gluon.Block {
	b, ok := c.(gluon.Block)
	if !ok {
		nd.Panicf(op, nd.ErrArgument, "child %s (%T) is not a single-input Block", c.Meta().Name(), c)
	}
	return b
}

// Concurrent runs its children on the same input and concatenates their
// outputs along Axis (1, the channel axis, by default): the branch
// container of Inception-style modules (Gluon's HybridConcurrent).
type Concurrent struct {
	gluon.BlockMeta
	Axis int
}

// NewConcurrent returns a Concurrent joining on the channel axis.
func NewConcurrent(blocks ...gluon.Block) *Concurrent {
	c := &Concurrent{BlockMeta: gluon.NewBlockMeta("concurrent"), Axis: 1}
	for _, b := range blocks {
		c.AddChild(b)
	}
	return c
}

// Add appends branches.
func (c *Concurrent) Add(blocks ...gluon.Block) {
	for _, b := range blocks {
		c.AddChild(b)
	}
}

// Forward runs every branch and concatenates the results.
func (c *Concurrent) Forward(x *nd.NDArray) *nd.NDArray {
	outs := make([]*nd.NDArray, len(c.Children()))
	for i, b := range c.Children() {
		outs[i] = asBlock("nn.Concurrent", b).Forward(x)
	}
	return nd.Concat(outs, c.Axis)
}

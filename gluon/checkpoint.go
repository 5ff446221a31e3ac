package gluon

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Checkpointed runs a block with activation checkpointing (nd.Checkpoint,
// PyTorch's torch.utils.checkpoint): in a recording scope the block's
// intermediate arrays are freed as soon as its forward pass ends, and its
// backward pass runs the forward again to rebuild them. Peak memory then
// holds one block's intermediates at a time instead of all of them, for
// about one more forward pass of compute. Wrap the repeated blocks of a
// deep network (a transformer's layers, a ResNet's stages).
//
// It has the wrapped block's Meta, so parameter names, saving and loading,
// and ONNX export are the block's. Outputs equal the unwrapped block's
// bit for bit, dropout included: the forward pass draws its masks from
// the context's generator as the block would, and the recomputation
// replays them. So do gradients, but for the order in which those of an
// array read by several checkpointed blocks are summed (a transformer
// encoder's output, read by every decoder layer, may differ in its last
// bits). A BatchNorm inside updates its running statistics
// twice per step (as under PyTorch). Hybridized, it is the wrapped block.
type Checkpointed struct {
	inner Component
}

// Checkpoint wraps c (a Block or a MultiBlock).
func Checkpoint(c Component) *Checkpointed { return &Checkpointed{inner: c} }

// Meta returns the wrapped block's Meta.
func (c *Checkpointed) Meta() *BlockMeta { return c.inner.Meta() }

// Inner returns the wrapped block.
func (c *Checkpointed) Inner() Component { return c.inner }

// Forward runs a Block's forward pass checkpointed.
func (c *Checkpointed) Forward(x *nd.NDArray) *nd.NDArray { return c.ForwardMulti(x)[0] }

// ForwardMulti runs the wrapped block (Call) checkpointed.
func (c *Checkpointed) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	var dev ctx.Context
	for _, x := range inputs {
		if x != nil {
			dev = x.Context()
			break
		}
	}
	return nd.Checkpoint(func(in []*nd.NDArray) []*nd.NDArray { return Call(c.inner, in...) }, inputs, func() []*nd.NDArray {
		// (CollectParams would rename the parameters after c.inner.)
		var ps []*nd.NDArray
		seen := map[*Parameter]bool{}
		var walk func(m *BlockMeta)
		walk = func(m *BlockMeta) {
			for _, p := range m.Params() {
				if !seen[p] && p.Initialized() && p.GradReq() != nd.GradNull {
					seen[p] = true
					ps = append(ps, p.Data(dev))
				}
			}
			for _, ch := range m.Children() {
				walk(ch.Meta())
			}
		}
		walk(c.inner.Meta())
		return ps
	})
}

// ExportONNX writes the wrapped block's form.
func (c *Checkpointed) ExportONNX(g ONNXGraph, x string) (string, error) { return g.Block(c.inner, x) }

// ExportONNXMulti writes the wrapped block's form for several inputs.
func (c *Checkpointed) ExportONNXMulti(g ONNXGraph, inputs []string) ([]string, error) {
	return g.BlockMulti(c.inner, inputs)
}

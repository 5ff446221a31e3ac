package autograd

import "github.com/goluon/goluon/nd"

// Function is a user-defined differentiable operation, like Gluon's
// autograd.Function: Forward computes the output from the inputs, Backward
// maps the output's gradient to one gradient per input (nil for an input
// that gets none). A Function value may keep what Forward saw for use in
// Backward; use a fresh value for each call.
type Function interface {
	Forward(inputs ...*nd.NDArray) *nd.NDArray
	Backward(grad *nd.NDArray) []*nd.NDArray
}

// Apply runs f.Forward on the inputs and, while recording, records the
// result so that backpropagation calls f.Backward. Whatever Forward did
// internally is not part of the graph.
//
// Under GradWith's CreateGraph, Backward runs while recording, as
// PyTorch runs a custom Function's backward under create_graph: the
// gradients it returns are differentiable through the ops it applies to
// grad and to the inputs it kept (keep the inputs themselves, not detached
// copies, for second derivatives with respect to them).
func Apply(name string, f Function, inputs ...*nd.NDArray) *nd.NDArray {
	out := f.Forward(inputs...).Detach()
	grads := func(detach bool) nd.BackwardFunc {
		return func(g *nd.NDArray, need []bool) []*nd.NDArray {
			grads := f.Backward(g)
			if len(grads) != len(inputs) {
				panic(&nd.Error{Op: name, Kind: nd.ErrGraph, Msg: "custom Backward returned the wrong number of gradients"})
			}
			out := make([]*nd.NDArray, len(grads))
			for i, gr := range grads {
				if need[i] && gr != nil {
					out[i] = gr
					if detach {
						out[i] = gr.Detach()
					}
				}
			}
			return out
		}
	}
	nd.RecordDiff(name, out, inputs, grads(true), grads(false))
	return out
}

// FunctionN is a user-defined differentiable operation with several
// outputs (a fused recurrent cell returning its output and new state, an
// op returning a value and an auxiliary). Forward returns the outputs,
// which must share a dtype and a context; Backward receives one gradient
// per output (zeros for an output the loss does not use) and returns one
// gradient per input (nil for an input that gets none).
type FunctionN interface {
	Forward(inputs ...*nd.NDArray) []*nd.NDArray
	Backward(grads ...*nd.NDArray) []*nd.NDArray
}

// ApplyN runs f.Forward on the inputs and, while recording, records the
// outputs so that backpropagation calls f.Backward once with the
// gradients of all of them, however many of them the loss uses. The
// outputs are views of one packed copy, so that the tape gathers their
// gradients before calling Backward.
func ApplyN(name string, f FunctionN, inputs ...*nd.NDArray) []*nd.NDArray {
	outs := f.Forward(inputs...)
	if len(outs) == 0 {
		panic(&nd.Error{Op: name, Kind: nd.ErrArgument, Msg: "custom Forward returned no outputs"})
	}
	flat := make([]*nd.NDArray, len(outs))
	shapes := make([][]int, len(outs))
	sizes := make([]int, len(outs))
	for i, o := range outs {
		shapes[i], sizes[i] = o.Shape(), o.Size()
		flat[i] = nd.Reshape(o.Detach(), -1)
	}
	packed := nd.Concat(flat, 0).Detach()
	nd.Record(name, packed, inputs, func(g *nd.NDArray, need []bool) []*nd.NDArray {
		grads := make([]*nd.NDArray, len(outs))
		off := 0
		for i, s := range shapes {
			grads[i] = nd.Reshape(nd.SliceAxis(g.Detach(), off, off+sizes[i], 0), s...)
			off += sizes[i]
		}
		in := f.Backward(grads...)
		if len(in) != len(inputs) {
			panic(&nd.Error{Op: name, Kind: nd.ErrGraph, Msg: "custom Backward returned the wrong number of gradients"})
		}
		out := make([]*nd.NDArray, len(in))
		for i, gr := range in {
			if need[i] && gr != nil {
				out[i] = gr.Detach()
			}
		}
		return out
	})
	res := make([]*nd.NDArray, len(outs))
	off := 0
	for i, s := range shapes {
		res[i] = nd.Reshape(nd.SliceAxis(packed, off, off+sizes[i], 0), s...)
		off += sizes[i]
	}
	return res
}

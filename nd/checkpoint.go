package nd

import "slices"

// Checkpoint runs f on inputs and records it as one op whose backward
// pass runs f again (activation checkpointing: PyTorch's
// torch.utils.checkpoint, MXNet's mirroring), so that what f computes
// inside is freed at once instead of being kept for the backward pass:
// memory for time. params returns the arrays f reads besides its inputs
// that take gradients (a block's parameters on the inputs' context); it is
// called after f, so that deferred parameters exist.
//
// The recomputation replays the random draws of the first run (dropout
// masks: the session's generator for the inputs' context is reset to its
// state before f, then put back), and runs in the same training mode. It
// also repeats f's side effects: a BatchNorm in training mode updates its
// running statistics twice, as under PyTorch's checkpoint. An array f
// reads that takes a gradient but is neither an input nor among params is
// an ErrGraph error in the backward pass (its gradient would be lost).
// Outside a recording scope, and while tracing (gluon.Hybridize plans
// memory itself), Checkpoint calls f and nothing more. Nil inputs are
// passed to f as they are (an omitted mask).
func Checkpoint(f func(in []*NDArray) []*NDArray, inputs []*NDArray, params func() []*NDArray) []*NDArray {
	const op = "Checkpoint"
	live := nonNil(inputs)
	if len(live) == 0 {
		fail(op, ErrArgument, "no inputs")
	}
	s := sessionOf(op, live...)
	if !s.IsRecording() || currentTrace() != nil {
		return f(inputs)
	}
	dev := live[0].Context()
	train := s.IsTraining()
	rng := s.RNGState(dev)
	// f runs as it would (recorded: turning recording off would turn it
	// off for the goroutines ForEachDevice runs beside this one, which
	// share the mode), then the graph below its outputs is dropped: the
	// scope releases every array f made, and the outputs are copied out
	// packed, without history.
	var shapes [][]int
	var packed *NDArray
	func() {
		sc := s.NewScope()
		defer sc.Close()
		outs := f(inputs)
		if len(outs) == 0 {
			fail(op, ErrArgument, "the function returned no outputs")
		}
		flat := make([]*NDArray, len(outs))
		for i, o := range outs {
			if o.DType() != outs[0].DType() {
				fail(op, ErrDType, "outputs of dtypes %v and %v: a checkpointed function's outputs share one", outs[0].DType(), o.DType())
			}
			shapes = append(shapes, o.Shape())
			flat[i] = Reshape(o.Detach(), -1)
		}
		packed = Concat(flat, 0).Detach()
		sc.Keep(packed)
	}()
	// The node's inputs: the inputs and parameters that take gradients.
	var recIn []*NDArray
	var fromInput []int // per recIn entry, its index in inputs, or −1 for a parameter
	for i, x := range inputs {
		if x != nil && x.requiresGrad() {
			recIn, fromInput = append(recIn, x), append(fromInput, i)
		}
	}
	var ps []*NDArray
	if params != nil {
		ps = params()
	}
	for _, p := range ps {
		if p != nil && p.requiresGrad() && !slices.Contains(recIn, p) {
			recIn, fromInput = append(recIn, p), append(fromInput, -1)
		}
	}
	Record(op, packed, recIn, func(g *NDArray, need []bool) []*NDArray {
		cur := s.RNGState(dev)
		if err := s.SetRNGState(dev, rng); err != nil {
			fail(op, ErrArgument, "%v", err)
		}
		defer func() { _ = s.SetRNGState(dev, cur) }()
		sc := s.NewScope()
		defer sc.Close()
		in2 := slices.Clone(inputs)
		leaves := make([]*NDArray, len(recIn))
		for j, x := range recIn {
			if fromInput[j] < 0 {
				leaves[j] = x // a parameter: a leaf of the recomputed graph too
				continue
			}
			x2 := x.Detach() // cut from the outer graph, a leaf of its own
			x2.AttachGrad(GradWrite)
			in2[fromInput[j]], leaves[j] = x2, x2
		}
		var outs2 []*NDArray
		s.RecordMode(train, func() { outs2 = f(in2) })
		if len(outs2) != len(shapes) {
			fail(op, ErrGraph, "the recomputation gave %d outputs, the first run %d", len(outs2), len(shapes))
		}
		var heads, headGrads []*NDArray
		off := 0
		for i, o := range outs2 {
			n := numel(shapes[i])
			if !slices.Equal(o.Shape(), shapes[i]) {
				fail(op, ErrGraph, "the recomputation's output %d has shape %v, the first run's %v", i, o.Shape(), shapes[i])
			}
			if o.requiresGrad() {
				heads = append(heads, o)
				headGrads = append(headGrads, Reshape(SliceAxis(g, off, off+n, 0), shapes[i]...))
			}
			off += n
		}
		defer func() { // the fresh leaves' gradient buffers, which gradsOf never writes
			for j, x := range leaves {
				if fromInput[j] >= 0 {
					x.Grad().Release()
					x.Release()
				}
			}
		}()
		grads := make([]*NDArray, len(recIn))
		if len(heads) > 0 {
			grads = gradsOf(heads, headGrads, leaves, func(a *NDArray) {
				fail(op, ErrGraph, "the checkpointed computation reads an array of shape %v that takes a gradient but is neither an input nor one of its parameters: its gradient would be lost", a.shape)
			})
		}
		for j := range grads {
			if !need[j] && grads[j] != nil {
				grads[j].Release()
				grads[j] = nil
			}
		}
		sc.Keep(grads...)
		return grads
	})
	res := make([]*NDArray, len(shapes))
	off := 0
	for i, sh := range shapes {
		n := numel(sh)
		res[i] = Reshape(SliceAxis(packed, off, off+n, 0), sh...)
		off += n
	}
	return res
}

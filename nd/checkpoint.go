package nd

import (
	"slices"

	"github.com/goluon/goluon/ctx"
)

// Checkpoint runs f on inputs and records it as one op whose backward
// pass runs f again (activation checkpointing: PyTorch's
// torch.utils.checkpoint, MXNet's mirroring), so that what f computes
// inside is freed at once instead of being kept for the backward pass:
// memory for time. params returns the arrays f reads besides its inputs
// that take gradients (a block's parameters on the inputs' context); it is
// called after f, so that deferred parameters exist.
//
// Both runs of f happen in private sessions (see Session) on views of the
// inputs (an f that changes an input in place is an ErrArgument error), in the training mode and autocast state the caller had when it
// called Checkpoint, whatever the caller's goroutine tree does when the
// backward pass comes (a device in Pause beside it, a backward pass
// outside Record). The first run's random draws (dropout masks) come
// from the caller's generators, as they would without Checkpoint, and the
// recomputation replays them: they are kept on the host until the
// backward pass, 8 bytes per number drawn (one per dropout mask; one or
// more per element of a random array drawn inside). It also repeats f's side effects: a
// BatchNorm in training mode updates its running statistics twice, as
// under PyTorch's checkpoint. Outputs of several dtypes are handed out
// through the widest (the others converted back, exactly). An array f
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
	run := checkpointRun{owner: s.claimOwner(), train: s.IsTraining(), draws: &drawLog{caller: s, logs: map[ctx.Context]*[]uint64{}}}
	run.castDT, run.cast = s.AutocastDType()
	// The first run, not recorded, in a session of its own: the caller's
	// goroutine tree may not pause recording (ForEachDevice's goroutines
	// share their tree's mode).
	var packed *NDArray
	var shapes [][]int
	var dtypes []DType
	versions := make([]uint64, len(inputs))
	for i, x := range inputs {
		if x != nil {
			versions[i] = x.st.version.Load()
		}
	}
	run.in(run.draws, func(fs *Session) {
		in1 := fs.views(inputs, nil)
		var outs []*NDArray
		fs.PauseMode(run.train, func() { run.autocast(fs, func() { outs = f(in1) }) })
		if len(outs) == 0 {
			fail(op, ErrArgument, "the function returned no outputs")
		}
		for i, o := range outs {
			if o == nil {
				fail(op, ErrArgument, "the function's output %d is nil", i)
			}
			defer checkLive(op, o).done()
			if !o.DType().IsFloat() {
				fail(op, ErrDType, "output of dtype %v: a checkpointed function's outputs are floating-point", o.DType())
			}
			if o.Context() != outs[0].Context() {
				fail(op, ErrContext, "outputs on %v and %v: a checkpointed function's outputs share one context", outs[0].Context(), o.Context())
			}
			shapes, dtypes = append(shapes, o.Shape()), append(dtypes, o.DType())
		}
		for i, x := range inputs {
			if x != nil && x.st.version.Load() != versions[i] {
				// The recomputation would change it again, from the changed
				// value (PyTorch's checkpoint fails in backward on this).
				fail(op, ErrArgument, "the function changed its input %d (shape %v) in place: a checkpointed function must leave its inputs as they are (change a copy)", i, x.shape)
			}
		}
		pk := packOutputs(outs)
		packed = pk.viewIn(s, 0, pk.shape) // outlives fs's scope: the storage is shared
	})
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
		grads := make([]*NDArray, len(recIn))
		run.in(run.draws.replay(), func(rs *Session) {
			in2 := rs.views(inputs, ps)
			leaves := make([]*NDArray, len(recIn))
			for j, x := range recIn {
				if fromInput[j] < 0 || slices.Contains(ps, x) {
					leaves[j] = x // a parameter (an input too: tied): a leaf of the recomputed graph too
					continue
				}
				x2 := in2[fromInput[j]] // a view: a leaf of its own, whose gradient gradsOf collects
				x2.ag.Store(&agState{traced: true})
				leaves[j] = x2
			}
			var outs2 []*NDArray
			rs.RecordMode(run.train, func() { run.autocast(rs, func() { outs2 = f(in2) }) })
			if len(outs2) != len(shapes) {
				fail(op, ErrGraph, "the recomputation gave %d outputs, the first run %d", len(outs2), len(shapes))
			}
			var heads, headGrads []*NDArray
			off := 0
			for i, o := range outs2 {
				n := numel(shapes[i])
				if !slices.Equal(o.Shape(), shapes[i]) || o.DType() != dtypes[i] {
					fail(op, ErrGraph, "the recomputation's output %d is %v %v, the first run's %v %v", i, o.Shape(), o.DType(), shapes[i], dtypes[i])
				}
				if o.requiresGrad() {
					hg := g.viewIn(rs, off, shapes[i]) // released with rs's scope
					if hg.DType() != dtypes[i] {
						hg = hg.AsType(dtypes[i]) // exact: widened from it
					}
					heads, headGrads = append(heads, o), append(headGrads, hg)
				}
				off += n
			}
			if len(heads) == 0 {
				return
			}
			gs := gradsOf(heads, headGrads, leaves, func(a *NDArray) {
				fail(op, ErrGraph, "the checkpointed computation reads an array of shape %v that takes a gradient but is neither an input nor one of its parameters: its gradient would be lost", a.shape)
			})
			for j, gr := range gs {
				if gr != nil && need[j] {
					grads[j] = gr.viewIn(s, 0, gr.shape) // outlives rs's scope: the storage is shared
				}
			}
		})
		return grads
	})
	res := make([]*NDArray, len(shapes))
	off := 0
	for i, sh := range shapes {
		n := numel(sh)
		res[i] = Reshape(SliceAxis(packed, off, off+n, 0), sh...)
		if res[i].DType() != dtypes[i] {
			res[i] = res[i].AsType(dtypes[i])
		}
		off += n
	}
	return res
}

// checkpointRun is what both runs of a checkpointed function share: the
// caller's training mode and autocast state, and the first run's random
// draws.
type checkpointRun struct {
	owner  *Session // the caller's session, or the session it stands for
	train  bool
	cast   bool
	castDT DType
	draws  *drawLog
}

// in runs body in a new private session whose generators are draws', and
// releases everything made there when it returns.
func (r checkpointRun) in(draws *drawLog, body func(s *Session)) {
	s := NewSession("checkpoint")
	s.draws, s.owner = draws, r.owner
	sc := s.NewScope()
	defer sc.Close()
	body(s)
}

// autocast runs body in s under the caller's autocast state.
func (r checkpointRun) autocast(s *Session, body func()) {
	if r.cast {
		s.Autocast(r.castDT, body)
		return
	}
	body()
}

// views returns views of arrs in s, without history (nil stays nil);
// an array among keep is passed as it is.
func (s *Session) views(arrs, keep []*NDArray) []*NDArray {
	out := make([]*NDArray, len(arrs))
	for i, a := range arrs {
		switch {
		case a == nil:
		case slices.Contains(keep, a):
			out[i] = a
		default:
			func() {
				defer checkLive("Checkpoint", a).done()
				a.claimFor(s)
				out[i] = a.viewIn(s, 0, a.shape)
			}()
		}
	}
	return out
}

// packOutputs concatenates outs flattened, in the widest of their dtypes.
func packOutputs(outs []*NDArray) *NDArray {
	dt := outs[0].DType()
	for _, o := range outs[1:] {
		dt = widerFloat(dt, o.DType())
	}
	flat := make([]*NDArray, len(outs))
	for i, o := range outs {
		if o.DType() != dt {
			o = o.AsType(dt)
		}
		flat[i] = Reshape(o, -1)
	}
	return Concat(flat, 0)
}

// widerFloat is the dtype that holds both a and b exactly.
func widerFloat(a, b DType) DType {
	switch {
	case a == b:
		return a
	case a == Float64 || b == Float64:
		return Float64
	}
	return Float32
}

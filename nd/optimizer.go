package nd

import (
	"fmt"
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// OptimizerParams are the scalars of an optimizer update (learning rate,
// weight decay, gradient rescale and clip, momentum, RMSProp's decay and
// epsilon); backend.SGDProgram and backend.RMSPropProgram turn them into
// the update's program.
type OptimizerParams = backend.OptimizerParams

// OptProgram is an optimizer's update rule as elementwise steps
// (backend.OptProgram).
type OptProgram = backend.OptProgram

// SGDProgram returns SGD's update rule for p, with or without momentum
// (backend.SGDProgram documents it).
func SGDProgram(p OptimizerParams, momentum bool) OptProgram { return backend.SGDProgram(p, momentum) }

// RMSPropProgram returns the uncentred RMSProp update rule for p
// (backend.RMSPropProgram documents it).
func RMSPropProgram(p OptimizerParams) OptProgram { return backend.RMSPropProgram(p) }

// OptimizerUpdate applies one optimizer update to weight (and state, nil
// when prog does not use one) in place: prog's steps (backend.OptProgram:
// the rule, written once, e.g. backend.SGDProgram) run on every element.
// With the backend's fused kernel (backend.OptimizerKernels) and fused
// kernels on (SetFusedKernels) that is one pass over memory; otherwise
// each step runs over whole arrays with the backend's elementwise ops
// (with two weight-sized temporaries). Both round each step to the
// element type, so they agree bit for bit. grad is read, never written.
// It is not recorded. weight, grad and state must be live and share one
// context, element type (a float one) and shape; else it panics with an
// *Error, changing nothing.
func OptimizerUpdate(prog backend.OptProgram, weight, grad, state *NDArray) {
	const op = "OptimizerUpdate"
	defer checkLive(op, weight, grad).done()
	if prog.UsesState && state == nil {
		fail(op, ErrArgument, "the program uses a state and none was given")
	}
	if !prog.UsesState {
		state = nil
	}
	if len(prog.Steps) > backend.MaxOptSteps {
		fail(op, ErrArgument, "%d steps, at most %d", len(prog.Steps), backend.MaxOptSteps)
	}
	if !weight.dtype.IsFloat() {
		fail(op, ErrDType, "weight is %v, not a float type", weight.dtype)
	}
	if _, half := halfOf(weight, grad, state); half {
		fail(op, ErrDType, "half-precision operands (weight %v, gradient %v): update a float32 master copy (optimizer multi-precision) and cast it back", weight.dtype, grad.dtype)
	}
	for i, a := range []*NDArray{grad, state} {
		if a == nil {
			continue
		}
		name := [...]string{"gradient", "state"}[i]
		defer checkLive(op, a).done()
		switch {
		case a.st.dev != weight.st.dev:
			fail(op, ErrContext, "%s on %v, weight on %v", name, a.st.dev, weight.st.dev)
		case a.dtype != weight.dtype:
			fail(op, ErrDType, "%s is %v, weight %v", name, a.dtype, weight.dtype)
		case !slices.Equal(a.shape, weight.shape):
			fail(op, ErrShape, "%s shape %v vs weight shape %v", name, a.shape, weight.shape)
		}
	}
	if err := checkOptProgram(prog); err != nil {
		fail(op, ErrArgument, "%v", err)
	}
	n := weight.Size()
	if k, ok := kernelsOf[backend.OptimizerKernels](weight.be()); ok && fusedKernels() {
		var s backend.Arg
		if state != nil {
			s = state.arg()
		}
		k.OptimizerUpdate(prog, weight.arg(), grad.arg(), s, n)
		return
	}
	composeOptProgram(prog, weight, grad, state)
}

// composeOptProgram runs prog one step at a time over whole arrays, with
// two temporaries from weight's pool.
func composeOptProgram(prog backend.OptProgram, weight, grad, state *NDArray) {
	var regs [backend.NumOptRegs]backend.Arg
	regs[backend.OptW], regs[backend.OptG] = weight.arg(), grad.arg()
	if state != nil {
		regs[backend.OptS] = state.arg()
	}
	for _, r := range []backend.OptReg{backend.OptT1, backend.OptT2} {
		t := newArray("OptimizerUpdate", weight.Session(), weight.st.dev, weight.dtype, weight.shape)
		defer t.Release()
		regs[r] = t.arg()
	}
	be, n := weight.be(), weight.Size()
	for _, st := range prog.Steps {
		if st.IsBinary {
			be.Binary(st.Binary, weight.shape, regs[st.D], regs[st.A], regs[st.B])
		} else {
			be.Unary(st.Unary, regs[st.D], regs[st.A], n, st.S1, st.S2)
		}
	}
}

// checkOptProgram reports a program that writes the gradient, names a
// register that does not exist, names the state without UsesState or
// reads a temporary before writing it.
func checkOptProgram(prog backend.OptProgram) error {
	written := [backend.NumOptRegs]bool{true, true, true, false, false}
	for i, st := range prog.Steps {
		reads := []backend.OptReg{st.A}
		if st.IsBinary {
			reads = append(reads, st.B)
		}
		for _, r := range append(reads, st.D) {
			if r >= backend.NumOptRegs {
				return fmt.Errorf("step %d names register %v", i, r)
			}
			if r == backend.OptS && !prog.UsesState {
				return fmt.Errorf("step %d names the state, which the program says it does not use", i)
			}
		}
		for _, r := range reads {
			if !written[r] {
				return fmt.Errorf("step %d reads %v before any step writes it", i, r)
			}
		}
		if st.D == backend.OptG {
			return fmt.Errorf("step %d writes the gradient", i)
		}
		written[st.D] = true
	}
	return nil
}

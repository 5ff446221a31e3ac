package cpu

import "github.com/goluon/goluon/nd/backend"

// Fused optimizer updates (backend.OptimizerKernels). The composed update
// (nd.OptimizerUpdate without fused kernels) makes one pass over memory
// per step of the rule's program (backend.SGDProgram, RMSPropProgram:
// five to fourteen steps, each reading and writing whole parameter-sized
// arrays). OptimizerUpdate runs the same steps, with the same element
// kernels, on blocks of optBlock values that stay in the L1 cache, so the
// weight, gradient and state are read and written once; the results are
// those of the composed steps bit for bit.

var _ backend.OptimizerKernels = (*Backend)(nil)

// optBlock is the number of values one block step works on: its two
// temporaries (8 KiB each in float32) and the operands' blocks fit in L1.
const optBlock = 2048

// OptimizerUpdate implements backend.OptimizerKernels.
func (*Backend) OptimizerUpdate(prog backend.OptProgram, w, g, s backend.Arg, n int) {
	if isF64(w) {
		runOptProgram(prog, slice[float64](w)[:n], slice[float64](g)[:n], optSlice[float64](s))
	} else {
		runOptProgram(prog, slice[float32](w)[:n], slice[float32](g)[:n], optSlice[float32](s))
	}
}

// optKernel is one step of a program with its element function.
type optKernel struct {
	step  backend.OptStep
	unary func(float64) float64
	bin   func(a, b float64) float64
}

func runOptProgram[T Float](prog backend.OptProgram, w, g, s []T) {
	ks := make([]optKernel, len(prog.Steps))
	for i, st := range prog.Steps {
		ks[i].step = st
		if st.IsBinary {
			ks[i].bin = binaryFunc(st.Binary)
		} else {
			ks[i].unary = unaryFunc(st.Unary, st.S1, st.S2)
		}
	}
	parallelFor(len(w), elemGrain, func(lo, hi int) {
		// The temporaries come from the scratch pool: as local arrays
		// they escaped to the heap, 16 KiB allocated and cleared per call.
		tmp := scratch[T](2 * optBlock)
		defer release(tmp)
		t1, t2 := tmp[:optBlock], tmp[optBlock:]
		var regs [backend.NumOptRegs][]T
		for b := lo; b < hi; b += optBlock {
			e := min(b+optBlock, hi)
			regs[backend.OptW], regs[backend.OptG] = w[b:e], g[b:e]
			if s != nil {
				regs[backend.OptS] = s[b:e]
			}
			regs[backend.OptT1], regs[backend.OptT2] = t1[:e-b], t2[:e-b]
			for _, k := range ks {
				d, a := regs[k.step.D], regs[k.step.A]
				if k.step.IsBinary {
					binaryContig(k.step.Binary, k.bin, d, a, regs[k.step.B])
				} else {
					unaryRange(k.step.Unary, k.unary, d, a, k.step.S1, k.step.S2)
				}
			}
		}
	})
}

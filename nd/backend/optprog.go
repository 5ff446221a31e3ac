package backend

import "fmt"

// Optimizer rules are written once, as programs: short lists of the
// elementwise ops every backend already has (Unary, Binary), applied in
// order to each element. A fused kernel (OptimizerKernels.OptimizerUpdate)
// runs the program one element (or one cache-sized block) at a time; the
// composed path (nd.OptimizerUpdate without fused kernels) runs each step
// over whole arrays. Both round each step to the element type, so they
// agree bit for bit.

// OptReg is an operand of an optimizer program, as long as the weight.
type OptReg uint8

// The registers. A program reads OptG and never writes it.
const (
	OptW  OptReg = iota // the weight, read and written
	OptG                // the gradient, read only
	OptS                // the state (momentum, mean square), read and written
	OptT1               // temporaries, undefined until written
	OptT2
	// NumOptRegs is the number of registers.
	NumOptRegs
)

var optRegNames = [NumOptRegs]string{"w", "g", "s", "t1", "t2"}

// String returns w, g, s, t1 or t2.
func (r OptReg) String() string {
	if r < NumOptRegs {
		return optRegNames[r]
	}
	return fmt.Sprintf("OptReg(%d)", uint8(r))
}

// OptStep is one step of an optimizer program: D = Unary(A; S1, S2), or
// D = Binary(A, B) when IsBinary.
type OptStep struct {
	IsBinary bool
	Unary    UnaryOp
	Binary   BinaryOp
	D, A, B  OptReg
	S1, S2   float64
}

// MaxOptSteps is the most steps a program has (the CUDA kernel's bound).
const MaxOptSteps = 16

// OptProgram is an optimizer's update rule: its steps in order.
type OptProgram struct {
	Steps []OptStep
	// UsesState says whether the program reads or writes OptS.
	UsesState bool
}

// String lists the steps, one per line, e.g. "t1 = MulScalar(g; 0.5)".
func (p OptProgram) String() string {
	s := ""
	for _, st := range p.Steps {
		if st.IsBinary {
			s += fmt.Sprintf("%v = %v(%v, %v)\n", st.D, st.Binary, st.A, st.B)
		} else {
			s += fmt.Sprintf("%v = %v(%v; %g, %g)\n", st.D, st.Unary, st.A, st.S1, st.S2)
		}
	}
	return s
}

// optBuilder appends steps.
type optBuilder struct{ p OptProgram }

func (b *optBuilder) unary(d OptReg, op UnaryOp, a OptReg, s1, s2 float64) {
	b.p.Steps = append(b.p.Steps, OptStep{Unary: op, D: d, A: a, S1: s1, S2: s2})
	b.state(d, a)
}

func (b *optBuilder) binary(d OptReg, op BinaryOp, a, c OptReg) {
	b.p.Steps = append(b.p.Steps, OptStep{IsBinary: true, Binary: op, D: d, A: a, B: c})
	b.state(d, a, c)
}

func (b *optBuilder) state(rs ...OptReg) {
	for _, r := range rs {
		if r == OptS {
			b.p.UsesState = true
		}
	}
}

// grad writes into t1 the gradient the update sees: RescaleGrad·g, then
// + WD·w, clipped to ±ClipGradient before the decay when clipFirst (SGD)
// or after it (RMSProp). A zero WD or ClipGradient skips its step.
func (b *optBuilder) grad(p OptimizerParams, clipFirst bool) {
	b.unary(OptT1, MulScalar, OptG, p.RescaleGrad, 0)
	clip := func() {
		if p.ClipGradient > 0 {
			b.unary(OptT1, Clip, OptT1, -p.ClipGradient, p.ClipGradient)
		}
	}
	if clipFirst {
		clip()
	}
	if p.WD != 0 {
		b.unary(OptT2, MulScalar, OptW, p.WD, 0)
		b.binary(OptT1, Add, OptT1, OptT2)
	}
	if !clipFirst {
		clip()
	}
}

// SGDProgram is SGD's rule (MXNet's sgd_update and sgd_mom_update, with
// Nesterov's form as PyTorch's): a = clip(RescaleGrad·g) + WD·w; without
// momentum w += (−LR)·a; with it (state m) m = Momentum·m, then m +=
// (−LR)·a and w += m, or for Nesterov m += a and w += (−LR)·(Momentum·m
// + a).
func SGDProgram(p OptimizerParams, momentum bool) OptProgram {
	var b optBuilder
	b.grad(p, true)
	switch {
	case !momentum:
		b.unary(OptT1, MulScalar, OptT1, -p.LR, 0)
		b.binary(OptW, Add, OptW, OptT1)
	case p.Nesterov:
		b.unary(OptS, MulScalar, OptS, p.Momentum, 0)
		b.binary(OptS, Add, OptS, OptT1)
		b.unary(OptT2, MulScalar, OptS, p.Momentum, 0)
		b.binary(OptT2, Add, OptT2, OptT1)
		b.unary(OptT2, MulScalar, OptT2, -p.LR, 0)
		b.binary(OptW, Add, OptW, OptT2)
	default:
		b.unary(OptS, MulScalar, OptS, p.Momentum, 0)
		b.unary(OptT1, MulScalar, OptT1, -p.LR, 0)
		b.binary(OptS, Add, OptS, OptT1)
		b.binary(OptW, Add, OptW, OptS)
	}
	return b.p
}

// RMSPropProgram is the uncentred RMSProp rule (state s, the mean square):
// a = clip(RescaleGrad·g + WD·w); s = Gamma1·s + (1−Gamma1)·(a·a); d =
// a / (sqrt(s) + Epsilon) with KerasEpsilon (Keras, PyTorch), else
// a / sqrt(s + Epsilon) (MXNet); w += (−LR)·d, then clipped to
// ±ClipWeights when that is not zero.
func RMSPropProgram(p OptimizerParams) OptProgram {
	var b optBuilder
	b.grad(p, false)
	b.unary(OptT2, Square, OptT1, 0, 0)
	b.unary(OptT2, MulScalar, OptT2, 1-p.Gamma1, 0)
	b.unary(OptS, MulScalar, OptS, p.Gamma1, 0)
	b.binary(OptS, Add, OptS, OptT2)
	if p.KerasEpsilon {
		b.unary(OptT2, Sqrt, OptS, 0, 0)
		b.unary(OptT2, AddScalar, OptT2, p.Epsilon, 0)
	} else {
		b.unary(OptT2, AddScalar, OptS, p.Epsilon, 0)
		b.unary(OptT2, Sqrt, OptT2, 0, 0)
	}
	b.binary(OptT1, Div, OptT1, OptT2)
	b.unary(OptT1, MulScalar, OptT1, -p.LR, 0)
	b.binary(OptW, Add, OptW, OptT1)
	if p.ClipWeights > 0 {
		b.unary(OptW, Clip, OptW, -p.ClipWeights, p.ClipWeights)
	}
	return b.p
}

package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// gemmRaw computes op(a)·op(b) for 2-D operands or batches of them (3-D).
// A 2-D operand next to a 3-D one is shared by every matrix of the batch.
func gemmRaw(op string, a, b *NDArray, ta, tb bool) *NDArray {
	return gemmInto(op, a, b, ta, tb, nil)
}

// gemmInto is gemmRaw, with C filled first with bias broadcast over its
// rows and the product added to it (Beta 1) when bias is not nil.
func gemmInto(op string, a, b *NDArray, ta, tb bool, bias *NDArray) *NDArray {
	defer checkInputs(op, a, b).done()
	checkFloat(op, a, b)
	if a.NDim() < 2 || a.NDim() > 3 || b.NDim() < 2 || b.NDim() > 3 {
		fail(op, ErrShape, "operands must be 2-D or 3-D, got %v and %v", a.shape, b.shape)
	}
	batchA, batchB := 1, 1
	if a.NDim() == 3 {
		batchA = a.shape[0]
	}
	if b.NDim() == 3 {
		batchB = b.shape[0]
	}
	if a.NDim() == 3 && b.NDim() == 3 && batchA != batchB {
		fail(op, ErrShape, "batch sizes differ: %v and %v", a.shape, b.shape)
	}
	ar, ac := a.shape[a.NDim()-2], a.shape[a.NDim()-1]
	br, bc := b.shape[b.NDim()-2], b.shape[b.NDim()-1]
	m, k := ar, ac
	if ta {
		m, k = ac, ar
	}
	k2, n := br, bc
	if tb {
		k2, n = bc, br
	}
	if k != k2 {
		fail(op, ErrShape, "inner dimensions differ: %v%s and %v%s", a.shape, tflag(ta), b.shape, tflag(tb))
	}
	batch := batchA // the batch of the 3-D operand (either, when both are)
	if b.NDim() == 3 {
		batch = batchB
	}
	shape := []int{m, n}
	if a.NDim() == 3 || b.NDim() == 3 {
		shape = []int{batch, m, n}
	}
	out := newArray(op, sessionOf(op, a, b), a.st.dev, a.dtype, shape)
	beta := 0.0
	if bias != nil {
		out.be().Copy(out.shape, out.storageArg(), bcastStorage(bias, out.shape))
		beta = 1
	}
	if out.Size() == 0 { // an empty batch (a backend's Batch 0 means one product)
		return out
	}
	if k == 0 && out.dtype.IsHalf() { // no terms: C is its starting value (a backend scales no half C)
		if bias == nil {
			out.be().Fill(out.storageArg(), out.Size(), 0)
		}
		return out
	}
	p := backend.GemmParams{
		TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: 1, Beta: beta,
		A: a.gemmArg(), B: b.gemmArg(), C: out.gemmArg(), LDA: ac, LDB: bc, LDC: n,
		Batch: batch, StrideC: m * n,
	}
	if a.NDim() == 3 {
		p.StrideA = ar * ac
	}
	if b.NDim() == 3 {
		p.StrideB = br * bc
	}
	a.be().Gemm(p)
	return out
}

func tflag(t bool) string {
	if t {
		return "ᵀ"
	}
	return ""
}

// gemmGrads returns the gradients of C = op(A)·op(B) for a and b, summed
// back to each operand's shape when it was shared across a batch.
func gemmGrads(op string, g, a, b *NDArray, ta, tb bool, need []bool) []*NDArray {
	var ga, gb *NDArray
	if need[0] {
		if !ta {
			ga = gemmRaw(op, g, b, false, !tb)
		} else {
			ga = gemmRaw(op, b, g, tb, true)
		}
		ga = reduceGrad(ga, a.shape)
	}
	if need[1] {
		if !tb {
			gb = gemmRaw(op, a, g, !ta, false)
		} else {
			gb = gemmRaw(op, g, a, true, ta)
		}
		gb = reduceGrad(gb, b.shape)
	}
	return []*NDArray{ga, gb}
}

// gemmGradsRecorded is gemmGrads made of recorded ops (Dot), for
// GradWith's CreateGraph.
func gemmGradsRecorded(g, a, b *NDArray, ta, tb bool, need []bool) []*NDArray {
	var ga, gb *NDArray
	if need[0] {
		if !ta {
			ga = Dot(g, b, false, !tb)
		} else {
			ga = Dot(b, g, tb, true)
		}
		ga = sumToRecorded(ga, a.shape)
	}
	if need[1] {
		if !tb {
			gb = Dot(a, g, !ta, false)
		} else {
			gb = Dot(g, a, true, ta)
		}
		gb = sumToRecorded(gb, b.shape)
	}
	return []*NDArray{ga, gb}
}

// MatMul returns the matrix product a·b with the rules of NumPy's and
// PyTorch's matmul: 2-D operands multiply as matrices ([m,k]·[k,n]); a
// 1-D operand is a row vector on the left or a column vector on the right,
// its axis removed from the result ([k]·[k,n] is [n], [m,k]·[k] is [m],
// [k]·[k] a 0-d scalar); operands of more axes are stacks of matrices
// whose leading (batch) axes broadcast against each other ([1,m,k] with
// [B,k,n], [m,k] with [B,k,n], [A,1,m,k] with [B,k,n]). A 2-D operand
// beside a stack is applied to every matrix of it without being copied;
// other broadcast batches are materialised (BroadcastTo) before one
// batched product. It is differentiable in both operands.
func MatMul(a, b *NDArray) *NDArray {
	const op = "MatMul"
	defer checkLive(op, a, b).done()
	if a.NDim() == 0 || b.NDim() == 0 {
		fail(op, ErrShape, "operands must have at least one axis, got %v and %v", a.shape, b.shape)
	}
	if kb := b.shape[max(b.NDim()-2, 0)]; a.shape[a.NDim()-1] != kb {
		fail(op, ErrShape, "inner dimensions differ: %v and %v", a.shape, b.shape)
	}
	if a.NDim() <= 3 && b.NDim() <= 3 && a.NDim() >= 2 && b.NDim() >= 2 &&
		(a.NDim() != b.NDim() || a.NDim() == 2 || a.shape[0] == b.shape[0]) {
		return Dot(a, b, false, false) // the GEMM's own forms
	}
	var temps []*NDArray
	keep := func(x *NDArray) *NDArray { temps = append(temps, x); return x }
	vecA, vecB := a.NDim() == 1, b.NDim() == 1
	if vecA {
		a = keep(Reshape(a, 1, a.shape[0]))
	}
	if vecB {
		b = keep(Reshape(b, b.shape[0], 1))
	}
	m, k, k2, n := a.shape[a.NDim()-2], a.shape[a.NDim()-1], b.shape[b.NDim()-2], b.shape[b.NDim()-1]
	if k != k2 {
		fail(op, ErrShape, "inner dimensions differ: %v and %v", a.shape, b.shape)
	}
	batch := broadcastShape(op, a.shape[:a.NDim()-2], b.shape[:b.NDim()-2])
	nb := numel(batch)
	stack := func(x *NDArray, rows, cols int) *NDArray {
		if x.NDim() == 2 && len(batch) > 0 {
			return x // shared by every matrix of the batch
		}
		if !slices.Equal(x.shape[:x.NDim()-2], batch) {
			x = keep(BroadcastTo(x, append(slices.Clone(batch), rows, cols)...))
		}
		return keep(Reshape(x, nb, rows, cols))
	}
	var out *NDArray
	if len(batch) == 0 {
		out = Dot(a, b, false, false)
	} else {
		p := keep(Dot(stack(a, m, k), stack(b, k, n), false, false))
		out = Reshape(p, append(slices.Clone(batch), m, n)...)
	}
	shape := slices.Clone(batch)
	if !vecA {
		shape = append(shape, m)
	}
	if !vecB {
		shape = append(shape, n)
	}
	if len(shape) != out.NDim() {
		temps = append(temps, out)
		out = Reshape(out, shape...)
	}
	if !out.requiresGrad() {
		release(temps...)
	}
	return out
}

// Dot returns op(a)·op(b), where op transposes the last two axes of an
// operand when its flag is set (MXNet's dot with transpose_a/transpose_b).
func Dot(a, b *NDArray, transA, transB bool) *NDArray {
	return dispatchNative("Dot", castLow, []*NDArray{a, b}, func(w []*NDArray) *NDArray { return dot(w[0], w[1], transA, transB) })
}

func dot(a, b *NDArray, transA, transB bool) *NDArray {
	if a.dtype.IsHalf() || b.dtype.IsHalf() { // the tape keeps the half arrays (halfNative)
		return halfGemmRunner(a, a.dtype)("Dot", []*NDArray{a, b}, func(w []*NDArray) *NDArray {
			return gemmRaw("Dot", w[0], w[1], transA, transB)
		}, func(g *NDArray, w []*NDArray, _ func() *NDArray, need []bool) []*NDArray {
			return gemmGrads("Dot", g, w[0], w[1], transA, transB, need)
		})
	}
	out := gemmRaw("Dot", a, b, transA, transB)
	RecordDiff("Dot", out, []*NDArray{a, b}, func(g *NDArray, need []bool) []*NDArray {
		return gemmGrads("Dot", g, a, b, transA, transB, need)
	}, func(g *NDArray, need []bool) []*NDArray {
		return gemmGradsRecorded(g, a, b, transA, transB, need)
	})
	return out
}

// FullyConnected returns x·wᵀ + bias for x [N, in], w [out, in] and bias
// [out] (bias may be nil): the Dense layer's computation.
func FullyConnected(x, w, bias *NDArray) *NDArray {
	return dispatchNative("FullyConnected", castLow, []*NDArray{x, w, bias}, func(in []*NDArray) *NDArray { return fullyConnected(in[0], in[1], in[2]) })
}

func fullyConnected(x, w, bias *NDArray) *NDArray {
	const op = "FullyConnected"
	inputs := []*NDArray{x, w}
	if bias != nil {
		inputs = append(inputs, bias)
	}
	defer checkLive(op, inputs...).done()
	checkContexts(op, inputs...)
	if _, half := halfOf(inputs...); !half {
		checkInputs(op, inputs...).done() // (pinned above); halfNative checks the half dtypes
	}
	checkFloat(op, inputs...)
	if x.NDim() != 2 || w.NDim() != 2 || x.shape[1] != w.shape[1] {
		fail(op, ErrShape, "want x [N, in] and w [out, in], got %v and %v", x.shape, w.shape)
	}
	if bias != nil && (bias.NDim() != 1 || bias.shape[0] != w.shape[0]) {
		fail(op, ErrShape, "bias shape %v does not match weight %v (want [%d])", bias.shape, w.shape, w.shape[0])
	}
	if s := sessionOf(op, inputs...); s != defaultSession {
		inputs = s.lift(op, inputs...) // the product of neutral x and w must be s's
		x, w = inputs[0], inputs[1]
		if bias != nil {
			bias = inputs[2]
		}
	}
	if _, half := halfOf(inputs...); half { // the tape keeps the half arrays (halfNative)
		return halfGemmRunner(x, x.dtype)(op, inputs, func(in []*NDArray) *NDArray {
			if len(in) == 3 && in[0].dtype.IsHalf() { // the backend's own half product: C starts as the bias
				return gemmInto(op, in[0], in[1], false, true, in[2])
			}
			out := gemmRaw(op, in[0], in[1], false, true)
			if len(in) == 3 {
				out.be().Binary(bAdd, out.shape, out.arg(), out.arg(), bcastArg(in[2], out.shape))
			}
			return out
		}, func(g *NDArray, in []*NDArray, _ func() *NDArray, need []bool) []*NDArray {
			grads := gemmGrads(op, g, in[0], in[1], false, true, need[:2])
			if len(in) == 3 && need[2] {
				grads = append(grads, sumTo(g, in[2].shape))
			}
			return grads
		})
	}
	out := gemmRaw(op, x, w, false, true)
	if bias != nil {
		out.be().Binary(bAdd, out.shape, out.arg(), out.arg(), bcastArg(bias, out.shape))
	}
	RecordDiff(op, out, inputs, func(g *NDArray, need []bool) []*NDArray {
		grads := gemmGrads(op, g, x, w, false, true, need[:2])
		if bias != nil && need[2] {
			grads = append(grads, sumTo(g, bias.shape))
		}
		return grads
	}, func(g *NDArray, need []bool) []*NDArray {
		grads := gemmGradsRecorded(g, x, w, false, true, need[:2])
		if bias != nil && need[2] {
			grads = append(grads, sumToRecorded(g, bias.shape))
		}
		return grads
	})
	return out
}

package linalg

import (
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/goluon/goluon/nd"
)

// Solve returns X with A·X = B (torch.linalg.solve): a [..., n, n] and b
// [..., n, k], or b [..., n] for one right-hand side (a vector when its
// shape is a's without the last axis, as PyTorch decides). Batch axes
// broadcast. Gradients: B gets A⁻ᵀ·G, A gets −A⁻ᵀ·G·Xᵀ.
func Solve(a, b *nd.NDArray) *nd.NDArray {
	const op = "linalg.Solve"
	_, n := batch(op, a)
	if b == nil {
		nd.Panicf(op, nd.ErrArgument, "nil right-hand side")
	}
	if b.DType() != a.DType() {
		nd.Panicf(op, nd.ErrDType, "matrices of %v and right-hand side of %v", a.DType(), b.DType())
	}
	as, bs := a.Shape(), b.Shape()
	vector := len(bs) == 1 || slices.Equal(bs, as[:len(as)-1])
	if vector {
		b = nd.ExpandDims(b, -1)
		bs = b.Shape()
	}
	if len(bs) < 2 || bs[len(bs)-2] != n {
		nd.Panicf(op, nd.ErrShape, "right-hand side of shape %v for matrices of shape %v: want [..., %d, k] or [..., %d]", b.Shape(), as, n, n)
	}
	k := bs[len(bs)-1]
	lead := broadcastLead(op, as[:len(as)-2], bs[:len(bs)-2])
	a = nd.BroadcastTo(a, append(slices.Clone(lead), n, n)...) // recorded: gradients sum back
	b = nd.BroadcastTo(b, append(slices.Clone(lead), n, k)...)
	x := solve(op, a, b, false)
	nd.Record(op, x, []*nd.NDArray{a, b}, func(g *nd.NDArray, need []bool) []*nd.NDArray {
		ad := a.Detach()
		gb := solve(op, ad, g, true) // Aᵀ·gB = G
		var ga *nd.NDArray
		if need[0] {
			ga = nd.Neg(nd.MatMul(gb, mT(x.Detach())))
		}
		return []*nd.NDArray{ga, gb}
	})
	if vector {
		return nd.Squeeze(x, -1)
	}
	return x
}

// broadcastLead is the broadcast of two batch shapes.
func broadcastLead(op string, p, q []int) []int {
	if len(p) < len(q) {
		p, q = q, p
	}
	out := slices.Clone(p)
	off := len(p) - len(q)
	for i, d := range q {
		switch o := out[off+i]; {
		case o == d || d == 1:
		case o == 1:
			out[off+i] = d
		default:
			nd.Panicf(op, nd.ErrShape, "batch shapes %v and %v do not broadcast", p, q)
		}
	}
	return out
}

// solve solves A·X = B (Aᵀ·X = B with transpose) for equal batches,
// without recording.
func solve(op string, a, b *nd.NDArray, transpose bool) *nd.NDArray {
	count, n := batch(op, a)
	k := b.Shape()[b.NDim()-1]
	as, bs := matrices(a, count, n, n), matrices(b, count, n, k)
	v := make([]float64, 0, count*n*k)
	for i := range as {
		if n == 0 || k == 0 {
			break
		}
		var m mat.Matrix = as[i]
		if transpose {
			m = as[i].T()
		}
		var x mat.Dense
		if err := x.Solve(m, bs[i]); err != nil {
			if _, ill := err.(mat.Condition); !ill || mat.Det(as[i]) == 0 {
				nd.Panicf(op, nd.ErrArgument, "%s is singular", where(a.Shape(), i))
			}
		}
		v = flat(v, &x, n, k)
	}
	return upload(a, v, b.Shape()...)
}

// Cholesky returns the lower-triangular L with A = L·Lᵀ for the symmetric
// positive-definite matrices a [..., n, n] (torch.linalg.cholesky; only
// the lower triangle of A is read). Its gradient is PyTorch's:
// L⁻ᵀ·Φ(Lᵀ·G)·L⁻¹, Φ taking the lower triangle with the strictly lower
// part's transpose added and halved.
func Cholesky(a *nd.NDArray) *nd.NDArray {
	const op = "linalg.Cholesky"
	count, n := batch(op, a)
	ms := matrices(a, count, n, n)
	v := make([]float64, 0, count*n*n)
	for i, m := range ms {
		if n == 0 {
			break
		}
		sym := mat.NewSymDense(n, nil)
		for r := range n {
			for c := 0; c <= r; c++ {
				sym.SetSym(r, c, m.At(r, c))
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(sym) {
			nd.Panicf(op, nd.ErrArgument, "%s is not positive-definite", where(a.Shape(), i))
		}
		var l mat.TriDense
		ch.LTo(&l)
		v = flat(v, &l, n, n)
	}
	l := upload(a, v, a.Shape()...)
	nd.Record(op, l, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		ld := l.Detach()
		t := nd.Tril(nd.MatMul(mT(ld), g), 0)
		t = nd.MulScalar(nd.Add(t, mT(nd.Tril(t, -1))), 0.5)
		li := inv(op, ld)
		return []*nd.NDArray{nd.MatMul(nd.MatMul(mT(li), t), li)}
	})
	return l
}

// Eigh returns the eigenvalues, ascending [..., n], and the orthonormal
// eigenvectors, as the columns of [..., n, n], of the symmetric matrices
// a (torch.linalg.eigh; only the lower triangle is read). An eigenvector's
// sign is arbitrary, as in every LAPACK. Gradients are PyTorch's: V·(diag(gw)
// + skew(Vᵀ·gV)/(wⱼ − wᵢ))·Vᵀ, so a loss of the eigenvectors must not
// depend on their signs, and repeated eigenvalues give infinite gradients
// unless it does not depend on the vectors either.
func Eigh(a *nd.NDArray) (w, v *nd.NDArray) {
	const op = "linalg.Eigh"
	count, n := batch(op, a)
	ms := matrices(a, count, n, n)
	wv := make([]float64, 0, count*n)
	vv := make([]float64, 0, count*n*n)
	for i, m := range ms {
		if n == 0 {
			break
		}
		sym := mat.NewSymDense(n, nil)
		for r := range n {
			for c := 0; c <= r; c++ {
				sym.SetSym(r, c, m.At(r, c))
			}
		}
		var es mat.EigenSym
		if !es.Factorize(sym, true) {
			nd.Panicf(op, nd.ErrArgument, "%s: the eigendecomposition did not converge", where(a.Shape(), i))
		}
		wv = append(wv, es.Values(nil)...)
		var vecs mat.Dense
		es.VectorsTo(&vecs)
		vv = flat(vv, &vecs, n, n)
	}
	s := a.Shape()
	// One recorded array holds both (values, then vectors), sliced apart
	// below, so that a loss of either or both gets one backward pass.
	packed := upload(a, append(wv, vv...), len(wv)+len(vv))
	nd.Record(op, packed, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		lead := s[:len(s)-2]
		gw := nd.Reshape(nd.SliceAxis(g, 0, len(wv), 0), append(slices.Clone(lead), n)...)
		gv := nd.Reshape(nd.SliceAxis(g, len(wv), len(wv)+len(vv), 0), s...)
		wd := nd.Reshape(nd.SliceAxis(packed.Detach(), 0, len(wv), 0), append(slices.Clone(lead), n)...)
		vd := nd.Reshape(nd.SliceAxis(packed.Detach(), len(wv), len(wv)+len(vv), 0), s...)
		vg := nd.MatMul(mT(vd), gv)
		skew := nd.MulScalar(nd.Sub(vg, mT(vg)), 0.5)
		gap := nd.Sub(nd.ExpandDims(wd, -2), nd.ExpandDims(wd, -1)) // wⱼ − wᵢ
		// Where the vectors get no gradient (a loss of the values alone,
		// whose share of g is an explicit zero) the quotient is 0, not the
		// 0/0 of a repeated value; the diagonal is gw.
		zero := nd.ZerosLike(skew)
		inner := nd.Where(nd.NotEqual(skew, zero), nd.Div(skew, gap), zero)
		inner = nd.Add(inner, nd.DiagEmbed(gw, 0))
		return []*nd.NDArray{nd.MatMul(nd.MatMul(vd, inner), mT(vd))}
	})
	w = nd.Reshape(nd.SliceAxis(packed, 0, len(wv), 0), append(slices.Clone(s[:len(s)-2]), n)...)
	v = nd.Reshape(nd.SliceAxis(packed, len(wv), len(wv)+len(vv), 0), s...)
	return w, v
}

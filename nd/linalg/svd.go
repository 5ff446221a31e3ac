package linalg

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/goluon/goluon/nd"
)

// rect checks that a holds matrices in its last two axes and returns their
// count and shape.
func rect(op string, a *nd.NDArray) (count, m, n int) {
	if a == nil {
		nd.Panicf(op, nd.ErrArgument, "nil array")
	}
	if dt := a.DType(); dt != nd.Float32 && dt != nd.Float64 {
		nd.Panicf(op, nd.ErrDType, "needs float32 or float64 matrices, got %v", dt)
	}
	s := a.Shape()
	if len(s) < 2 {
		nd.Panicf(op, nd.ErrShape, "needs matrices in the last two axes, got shape %v", s)
	}
	m, n = s[len(s)-2], s[len(s)-1]
	count = 1
	for _, d := range s[:len(s)-2] {
		count *= d
	}
	return count, m, n
}

// Svd returns the reduced singular value decomposition A = U·diag(S)·Vh of
// the matrices a [..., m, n] (torch.linalg.svd with full_matrices=False):
// U [..., m, k], S [..., k] descending, Vh [..., k, n], k = min(m, n). A
// singular vector's sign is arbitrary, as in every LAPACK. Gradients are
// PyTorch's: a loss of U or Vh must not depend on their signs, and equal
// singular values give infinite gradients unless it depends on S alone.
func Svd(a *nd.NDArray) (u, s, vh *nd.NDArray) {
	const op = "linalg.Svd"
	count, m, n := rect(op, a)
	k := min(m, n)
	as := a.Shape()
	lead := as[:len(as)-2]
	var uv, sv, vv []float64
	for i, x := range matrices(a, count, m, n) {
		if k == 0 {
			break
		}
		var d mat.SVD
		if !d.Factorize(x, mat.SVDThin) {
			nd.Panicf(op, nd.ErrArgument, "%s: the decomposition did not converge", where(as, i))
		}
		var um, vm mat.Dense
		d.UTo(&um)
		d.VTo(&vm)
		uv = flat(uv, &um, m, k)
		sv = append(sv, d.Values(nil)...)
		vv = flat(vv, vm.T(), k, n)
	}
	nu, ns := len(uv), len(sv)
	packed := upload(a, append(append(append([]float64{}, uv...), sv...), vv...), nu+ns+len(vv))
	shapeU := append(slices.Clone(lead), m, k)
	shapeS := append(slices.Clone(lead), k)
	shapeV := append(slices.Clone(lead), k, n)
	parts := func(p *nd.NDArray) (u, s, vh *nd.NDArray) {
		return nd.Reshape(nd.SliceAxis(p, 0, nu, 0), shapeU...),
			nd.Reshape(nd.SliceAxis(p, nu, nu+ns, 0), shapeS...),
			nd.Reshape(nd.SliceAxis(p, nu+ns, p.Shape()[0], 0), shapeV...)
	}
	nd.Record(op, packed, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		gu, gs, gv := parts(g)
		u, s, vh := parts(packed.Detach())
		return []*nd.NDArray{svdGrad(u, s, vh, gu, gs, gv, m, n)}
	})
	return parts(packed)
}

// svdGrad is the gradient of A = U·diag(S)·Vh (PyTorch's): with
// skew(X) = X − Xᵀ and E_jk = S_k² − S_j², the square part is
// U·[(skew(Uᵀ·gU)·S + S·skew(Vh·gVhᵀ)) / E + diag(gS)]·Vh, and a tall or
// wide A adds the part of gU (of gVh) outside the span of U (of V).
func svdGrad(u, s, vh, gu, gs, gv *nd.NDArray, m, n int) *nd.NDArray {
	skew := func(x *nd.NDArray) *nd.NDArray { return nd.Sub(x, mT(x)) }
	s2 := nd.Mul(s, s)
	e := nd.Sub(nd.ExpandDims(s2, -2), nd.ExpandDims(s2, -1)) // E_jk = S_k² − S_j²
	k := s.Shape()[s.NDim()-1]
	eye := nd.Eye(s.Context(), s.DType(), k, k, 0)
	e = nd.Add(e, eye) // 1 on the diagonal, whose numerators are 0
	uhgu := skew(nd.MatMul(mT(u), gu))
	vhgv := skew(nd.MatMul(vh, mT(gv)))
	ga := nd.Div(nd.Add(nd.Mul(uhgu, nd.ExpandDims(s, -2)), nd.Mul(nd.ExpandDims(s, -1), vhgv)), e)
	ga = nd.Add(ga, nd.DiagEmbed(gs, 0))
	switch {
	case m > n:
		// U·gA + (I − U·Uᵀ)·gU·S⁻¹, then ·Vh
		gus := nd.Div(gu, nd.ExpandDims(s, -2))
		ga = nd.Add(nd.MatMul(u, ga), nd.Sub(gus, nd.MatMul(u, nd.MatMul(mT(u), gus))))
		return nd.MatMul(ga, vh)
	case m < n:
		// U·(gA·Vh + S⁻¹·gVh·(I − Vhᵀ·Vh))
		sgv := nd.Div(gv, nd.ExpandDims(s, -1))
		ga = nd.Add(nd.MatMul(ga, vh), nd.Sub(sgv, nd.MatMul(nd.MatMul(sgv, mT(vh)), vh)))
		return nd.MatMul(u, ga)
	}
	return nd.MatMul(u, nd.MatMul(ga, vh))
}

// Svdvals returns the singular values of a [..., m, n], descending,
// [..., min(m, n)] (torch.linalg.svdvals). Its gradient, U·diag(G)·Vh, is
// defined for repeated values too.
func Svdvals(a *nd.NDArray) *nd.NDArray {
	u, s, vh := Svd(a.Detach())
	u, vh = u.Detach(), vh.Detach()
	out := nd.MulScalar(s.Detach(), 1)
	nd.Record("linalg.Svdvals", out, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		return []*nd.NDArray{nd.MatMul(nd.Mul(u, nd.ExpandDims(g, -2)), vh)}
	})
	return out
}

// MatrixNorm returns a matrix norm of a [..., m, n] over its last two
// axes (torch.linalg.matrix_norm): ord "fro" (Frobenius), "nuc" (the sum
// of the singular values) or "2" (the largest singular value).
func MatrixNorm(a *nd.NDArray, ord string) *nd.NDArray {
	const op = "linalg.MatrixNorm"
	rect(op, a)
	switch ord {
	case "fro":
		return nd.Norm(a, 2, -2, -1)
	case "nuc":
		return nd.Sum(Svdvals(a), -1)
	case "2":
		return nd.Max(Svdvals(a), -1)
	}
	nd.Panicf(op, nd.ErrArgument, "ord %q: want fro, nuc or 2", ord)
	return nil
}

// Pinv returns the Moore–Penrose pseudo-inverses of a [..., m, n],
// [..., n, m] (torch.linalg.pinv): V·diag(1/S)·Uᵀ over the singular values
// above rtol times the largest (rtol 0 means max(m, n)·ε of the dtype, as
// PyTorch's default). Its gradient goes through Svd's, so it needs
// distinct singular values.
func Pinv(a *nd.NDArray, rtol float64) *nd.NDArray {
	const op = "linalg.Pinv"
	_, m, n := rect(op, a)
	if rtol == 0 {
		eps := math.Nextafter(1, 2) - 1
		if a.DType() == nd.Float32 {
			eps = float64(math.Nextafter32(1, 2) - 1)
		}
		rtol = float64(max(m, n)) * eps
	}
	u, s, vh := Svd(a)
	if s.Size() == 0 {
		shape := slices.Clone(a.Shape())
		shape[len(shape)-2], shape[len(shape)-1] = n, m
		return nd.Zeros(a.Context(), a.DType(), shape...)
	}
	keep := nd.Greater(s, nd.MulScalar(nd.MaxKeepDims(s.Detach(), -1), rtol))
	inv := nd.Where(keep, nd.Reciprocal(nd.Where(keep, s, nd.OnesLike(s))), nd.ZerosLike(s))
	return nd.MatMul(nd.Mul(mT(vh), nd.ExpandDims(inv, -2)), mT(u))
}

// Lstsq returns the least-squares solutions X minimising ‖A·X − B‖ for a
// [..., m, n] and b [..., m, k] (or [..., m]), as Pinv(A)·B: the
// minimum-norm solution when A is rank-deficient (torch.linalg.lstsq with
// the gelsd driver gives the same).
func Lstsq(a, b *nd.NDArray) *nd.NDArray {
	const op = "linalg.Lstsq"
	_, m, _ := rect(op, a)
	if b == nil {
		nd.Panicf(op, nd.ErrArgument, "nil right-hand side")
	}
	vector := b.NDim() == a.NDim()-1
	if vector {
		b = nd.ExpandDims(b, -1)
	}
	if bs := b.Shape(); len(bs) < 2 || bs[len(bs)-2] != m {
		nd.Panicf(op, nd.ErrShape, "right-hand side of shape %v for matrices of shape %v", bs, a.Shape())
	}
	x := nd.MatMul(Pinv(a, 0), b)
	if vector {
		return nd.Squeeze(x, -1)
	}
	return x
}

// Qr returns the reduced QR decomposition A = Q·R of a [..., m, n] with
// m ≥ n (torch.linalg.qr, mode "reduced"): Q [..., m, n] with orthonormal
// columns, R [..., n, n] upper triangular, its diagonal's signs as
// LAPACK's Householder QR leaves them. Its gradient is the standard one,
// (gQ + Q·copyltu(M))·R⁻ᵀ with M = R·gRᵀ − gQᵀ·Q, which needs R
// invertible (A of full column rank).
func Qr(a *nd.NDArray) (q, r *nd.NDArray) {
	const op = "linalg.Qr"
	count, m, n := rect(op, a)
	if m < n {
		nd.Panicf(op, nd.ErrShape, "matrices of shape %v are wide: Qr takes m ≥ n", a.Shape())
	}
	as := a.Shape()
	lead := as[:len(as)-2]
	var qv, rv []float64
	for _, x := range matrices(a, count, m, n) {
		if n == 0 {
			break
		}
		var d mat.QR
		d.Factorize(x)
		var qm, rm mat.Dense
		d.QTo(&qm)
		d.RTo(&rm)
		qv = flat(qv, qm.Slice(0, m, 0, n), m, n)
		rv = flat(rv, rm.Slice(0, n, 0, n), n, n)
	}
	nq := len(qv)
	packed := upload(a, append(append([]float64{}, qv...), rv...), nq+len(rv))
	shapeQ := append(slices.Clone(lead), m, n)
	shapeR := append(slices.Clone(lead), n, n)
	parts := func(p *nd.NDArray) (q, r *nd.NDArray) {
		return nd.Reshape(nd.SliceAxis(p, 0, nq, 0), shapeQ...), nd.Reshape(nd.SliceAxis(p, nq, p.Shape()[0], 0), shapeR...)
	}
	nd.Record(op, packed, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		gq, gr := parts(g)
		q, r := parts(packed.Detach())
		mm := nd.Sub(nd.MatMul(r, mT(gr)), nd.MatMul(mT(gq), q))
		low := nd.Tril(mm, 0)
		copyltu := nd.Add(low, mT(nd.Tril(mm, -1)))
		num := nd.Add(gq, nd.MatMul(q, copyltu))
		return []*nd.NDArray{nd.MatMul(num, mT(inv(op, r)))}
	})
	return parts(packed)
}

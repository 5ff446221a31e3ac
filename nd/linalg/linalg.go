// Package linalg is PyTorch's torch.linalg for nd arrays: the inverse,
// determinant, log-determinant, linear solve, Cholesky factor and
// symmetric eigendecomposition of square matrices, and the singular value
// and QR decompositions, singular values, matrix norms, pseudo-inverse and
// least squares of rectangular ones, batched over leading axes, with
// PyTorch's gradients.
//
// The factorisations run on the host in float64 (gonum's LAPACK in Go),
// whatever the array's context: a GPU array is copied to the host and the
// result back, which suits the small matrices of covariance, whitening
// and normalising-flow layers, not large solves. Float32 and
// Float64 arrays are accepted; results take the input's dtype. The
// gradients are composed from nd's batched matrix products on detached
// views and this package's own routines, so they run where the arrays
// live and are not themselves recorded (no double backward).
//
// A singular matrix (Inv, Solve) or one that is not positive-definite
// (Cholesky) is an *nd.Error naming its position in the batch.
package linalg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/goluon/goluon/nd"
)

// batch checks that a holds square matrices in its last two axes and
// returns their count and size.
func batch(op string, a *nd.NDArray) (count, n int) {
	if a == nil {
		nd.Panicf(op, nd.ErrArgument, "nil array")
	}
	if dt := a.DType(); dt != nd.Float32 && dt != nd.Float64 {
		nd.Panicf(op, nd.ErrDType, "needs float32 or float64 matrices, got %v", dt)
	}
	s := a.Shape()
	if len(s) < 2 || s[len(s)-1] != s[len(s)-2] {
		nd.Panicf(op, nd.ErrShape, "needs square matrices in the last two axes, got shape %v", s)
	}
	n = s[len(s)-1]
	count = 1
	for _, d := range s[:len(s)-2] {
		count *= d
	}
	return count, n
}

// matrices reads a's matrices (count of them, n×m each) to the host.
func matrices(a *nd.NDArray, count, n, m int) []*mat.Dense {
	v := a.Float64s()
	out := make([]*mat.Dense, count)
	for i := range out {
		out[i] = mat.NewDense(max(n, 1), max(m, 1), nil)
		if n > 0 && m > 0 {
			out[i] = mat.NewDense(n, m, v[i*n*m:(i+1)*n*m])
		}
	}
	return out
}

// upload makes an array of like's session, context and dtype from v.
func upload(like *nd.NDArray, v []float64, shape ...int) *nd.NDArray {
	a := like.Session().FromSlice(like.Context(), v, len(v))
	if len(shape) != 1 {
		a = nd.Reshape(a, shape...) // a scalar too (FromSlice makes vectors)
	}
	if like.DType() == nd.Float64 {
		return a
	}
	out := a.AsType(like.DType())
	a.Release()
	return out
}

// flat appends the n×m elements of d to v.
func flat(v []float64, d mat.Matrix, n, m int) []float64 {
	for i := range n {
		for j := range m {
			v = append(v, d.At(i, j))
		}
	}
	return v
}

// mT swaps the last two axes.
func mT(a *nd.NDArray) *nd.NDArray { return nd.SwapAxes(a, -1, -2) }

// where names matrix i of a batch of shape s (without its last two axes)
// for an error.
func where(s []int, i int) string {
	lead := s[:len(s)-2]
	if len(lead) == 0 {
		return "the matrix"
	}
	idx := make([]int, len(lead))
	for k := len(lead) - 1; k >= 0; k-- {
		idx[k] = i % lead[k]
		i /= lead[k]
	}
	return fmt.Sprintf("matrix %v of the batch", idx)
}

// Inv returns the inverses of the square matrices a [..., n, n]
// (torch.linalg.inv). Its gradient is −A⁻ᵀ·G·A⁻ᵀ.
func Inv(a *nd.NDArray) *nd.NDArray {
	const op = "linalg.Inv"
	y := inv(op, a)
	nd.Record(op, y, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		yt := mT(y.Detach())
		return []*nd.NDArray{nd.Neg(nd.MatMul(nd.MatMul(yt, g), yt))}
	})
	return y
}

// inv computes the inverses without recording.
func inv(op string, a *nd.NDArray) *nd.NDArray {
	count, n := batch(op, a)
	ms := matrices(a, count, n, n)
	v := make([]float64, 0, count*n*n)
	for i, m := range ms {
		if n == 0 {
			break
		}
		var r mat.Dense
		if err := r.Inverse(m); err != nil {
			if _, ill := err.(mat.Condition); !ill || mat.Det(m) == 0 {
				nd.Panicf(op, nd.ErrArgument, "%s is singular", where(a.Shape(), i))
			}
		}
		v = flat(v, &r, n, n)
	}
	return upload(a, v, a.Shape()...)
}

// Det returns the determinants of the square matrices a [..., n, n], of
// shape [...] (torch.linalg.det). Its gradient is G·det(A)·A⁻ᵀ, which
// needs A invertible (PyTorch's also covers singular matrices).
func Det(a *nd.NDArray) *nd.NDArray {
	const op = "linalg.Det"
	count, n := batch(op, a)
	ms := matrices(a, count, n, n)
	v := make([]float64, count)
	for i, m := range ms {
		v[i] = 1
		if n > 0 {
			v[i] = det(m, n)
		}
	}
	s := a.Shape()
	d := upload(a, v, s[:len(s)-2]...)
	nd.Record(op, d, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		scale := nd.ExpandDims(nd.ExpandDims(nd.Mul(g, d.Detach()), -1), -1)
		return []*nd.NDArray{nd.Mul(scale, mT(inv(op, a.Detach())))}
	})
	return d
}

// det is the product of the LU factorisation's pivots with the row
// exchanges' sign (gonum's Det goes through exp(log|det|), whose rounding
// made det(2·I₄) 15.999999999999998).
func det(m *mat.Dense, n int) float64 {
	var lu mat.LU
	lu.Factorize(m)
	var u mat.TriDense
	lu.UTo(&u)
	d := 1.0
	for i := range n {
		d *= u.At(i, i)
	}
	perm := lu.RowPivots(nil)
	seen := make([]bool, n)
	for i := range n { // each cycle of length k is k−1 exchanges
		if seen[i] {
			continue
		}
		k := 0
		for j := i; !seen[j]; j = perm[j] {
			seen[j] = true
			k++
		}
		if k%2 == 0 {
			d = -d
		}
	}
	return d
}

// Slogdet returns the signs and the logarithms of the absolute values of
// the determinants of a [..., n, n] (torch.linalg.slogdet): det = sign ·
// exp(logAbsDet), without overflow. A singular matrix gives sign 0 and
// logAbsDet −Inf. Only logAbsDet has a gradient, G·A⁻ᵀ.
func Slogdet(a *nd.NDArray) (sign, logAbsDet *nd.NDArray) {
	const op = "linalg.Slogdet"
	count, n := batch(op, a)
	ms := matrices(a, count, n, n)
	sv, lv := make([]float64, count), make([]float64, count)
	for i, m := range ms {
		sv[i] = 1
		if n > 0 {
			lv[i], sv[i] = mat.LogDet(m)
			if math.IsInf(lv[i], -1) {
				sv[i] = 0 // singular (gonum gives the pivots' sign)
			}
		}
	}
	s := a.Shape()
	sign = upload(a, sv, s[:len(s)-2]...)
	logAbsDet = upload(a, lv, s[:len(s)-2]...)
	nd.Record(op, logAbsDet, []*nd.NDArray{a}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		return []*nd.NDArray{nd.Mul(nd.ExpandDims(nd.ExpandDims(g, -1), -1), mT(inv(op, a.Detach())))}
	})
	return sign, logAbsDet
}

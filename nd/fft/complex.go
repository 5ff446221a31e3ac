package fft

import (
	"slices"

	"github.com/goluon/goluon/nd"
)

// checkComplex fails unless z is a complex array (a trailing axis of 2).
func checkComplex(op string, z *nd.NDArray) {
	if z == nil {
		nd.Panicf(op, nd.ErrArgument, "nil array")
	}
	if s := z.Shape(); len(s) == 0 || s[len(s)-1] != 2 {
		nd.Panicf(op, nd.ErrShape, "needs a complex array with a trailing axis of 2 (real, imaginary), got shape %v", s)
	}
}

// Complex returns the complex array re + i·im, of re's shape with a
// trailing axis of 2 (torch.complex, then torch.view_as_real). A nil im
// gives zero imaginary parts, which makes a real signal complex for FFT.
func Complex(re, im *nd.NDArray) *nd.NDArray {
	const op = "fft.Complex"
	if re == nil {
		nd.Panicf(op, nd.ErrArgument, "nil real part")
	}
	if im == nil {
		im = nd.ZerosLike(re)
	}
	if !slices.Equal(re.Shape(), im.Shape()) {
		nd.Panicf(op, nd.ErrShape, "real part of shape %v, imaginary part of shape %v", re.Shape(), im.Shape())
	}
	return nd.Stack([]*nd.NDArray{re, im}, -1)
}

// Real returns the real parts of the complex array z (torch.real).
func Real(z *nd.NDArray) *nd.NDArray {
	checkComplex("fft.Real", z)
	return nd.Squeeze(nd.SliceAxis(z, 0, 1, -1), -1)
}

// Imag returns the imaginary parts of the complex array z (torch.imag).
func Imag(z *nd.NDArray) *nd.NDArray {
	checkComplex("fft.Imag", z)
	return nd.Squeeze(nd.SliceAxis(z, 1, 2, -1), -1)
}

// Conj returns the complex conjugate of z (torch.conj).
func Conj(z *nd.NDArray) *nd.NDArray {
	checkComplex("fft.Conj", z)
	return nd.Stack([]*nd.NDArray{Real(z), nd.Neg(Imag(z))}, -1)
}

// ComplexMul returns the elementwise product of the complex arrays a and
// b, broadcasting their complex shapes (torch's * of complex tensors):
// the product of two spectra is the spectrum of a circular convolution.
func ComplexMul(a, b *nd.NDArray) *nd.NDArray {
	checkComplex("fft.ComplexMul", a)
	checkComplex("fft.ComplexMul", b)
	ar, ai, br, bi := Real(a), Imag(a), Real(b), Imag(b)
	re := nd.Sub(nd.Mul(ar, br), nd.Mul(ai, bi))
	im := nd.Add(nd.Mul(ar, bi), nd.Mul(ai, br))
	return nd.Stack([]*nd.NDArray{re, im}, -1)
}

// Abs returns the moduli |z| of the complex array z (torch.abs). Its
// gradient is G·z/|z|, and zero where z = 0, as PyTorch's.
func Abs(z *nd.NDArray) *nd.NDArray {
	const op = "fft.Abs"
	checkComplex(op, z)
	zd := z.Detach()
	out := nd.Hypot(Real(zd), Imag(zd))
	grad := func(g, z, out *nd.NDArray) []*nd.NDArray {
		r := safeDiv(g, out) // G/|z|
		return []*nd.NDArray{nd.Mul(z, nd.ExpandDims(r, -1))}
	}
	nd.RecordDiff(op, out, []*nd.NDArray{z}, func(g *nd.NDArray, _ []bool) []*nd.NDArray {
		return grad(g, zd, out.Detach())
	}, func(g *nd.NDArray, _ []bool) []*nd.NDArray { return grad(g, z, out) })
	return out
}

// Angle returns the arguments of the complex array z, in [−π, π]
// (torch.angle). Its gradient is G·(−im, re)/|z|², and zero where z = 0,
// as PyTorch's.
func Angle(z *nd.NDArray) *nd.NDArray {
	const op = "fft.Angle"
	checkComplex(op, z)
	zd := z.Detach()
	out := nd.Atan2(Imag(zd), Real(zd))
	grad := func(g, z *nd.NDArray) []*nd.NDArray {
		re, im := Real(z), Imag(z)
		r := safeDiv(g, nd.Add(nd.Mul(re, re), nd.Mul(im, im))) // G/|z|²
		return []*nd.NDArray{nd.Stack([]*nd.NDArray{nd.Neg(nd.Mul(im, r)), nd.Mul(re, r)}, -1)}
	}
	nd.RecordDiff(op, out, []*nd.NDArray{z}, func(g *nd.NDArray, _ []bool) []*nd.NDArray { return grad(g, zd) },
		func(g *nd.NDArray, _ []bool) []*nd.NDArray { return grad(g, z) })
	return out
}

// safeDiv is g/d, and 0 where d = 0.
func safeDiv(g, d *nd.NDArray) *nd.NDArray {
	zero := nd.ZerosLike(d)
	return nd.Where(nd.Equal(d, zero), zero, nd.Div(g, d))
}

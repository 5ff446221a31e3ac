package fft

import "github.com/goluon/goluon/nd"

// FFT returns the discrete Fourier transform of the complex array x
// along axis dim (torch.fft.fft): X_k = Σ_j x_j e^{−2πijk/n}, of n points
// (0: x's length), x padded with zeros or truncated to n first. Its
// gradient is the adjoint transform.
func FFT(x *nd.NDArray, n, dim int, norm Norm) *nd.NDArray {
	const op = "fft.FFT"
	return c2cN(op, x, one(op, checkArray(op, x, true), n, dim, false), norm, true)
}

// IFFT returns the inverse discrete Fourier transform of the complex array
// x along axis dim (torch.fft.ifft): x_j = (1/n)·Σ_k X_k e^{+2πijk/n}
// under the Backward norm, of n points (0: x's length).
func IFFT(x *nd.NDArray, n, dim int, norm Norm) *nd.NDArray {
	const op = "fft.IFFT"
	return c2cN(op, x, one(op, checkArray(op, x, true), n, dim, false), norm, false)
}

// RFFT returns the n/2+1 non-negative-frequency bins of the Fourier
// transform of the real array x along axis dim (torch.fft.rfft), a
// complex array; n (0: x's length) pads or truncates x first. The other
// bins are the conjugates of these.
func RFFT(x *nd.NDArray, n, dim int, norm Norm) *nd.NDArray {
	const op = "fft.RFFT"
	return rN(op, x, one(op, checkArray(op, x, false), n, dim, false), norm)
}

// IRFFT returns the real signal of n points (0: 2·(m−1) for m bins along
// dim) whose Fourier transform has the complex half spectrum x along axis
// dim (torch.fft.irfft): RFFT's inverse. x is padded with zeros or
// truncated to n/2+1 bins, and the imaginary parts of its first bin and,
// for even n, of bin n/2 are ignored.
func IRFFT(x *nd.NDArray, n, dim int, norm Norm) *nd.NDArray {
	const op = "fft.IRFFT"
	return irN(op, x, one(op, checkArray(op, x, true), n, dim, true), norm)
}

// HFFT returns the real Fourier transform of n points (0: 2·(m−1) for m
// bins along dim) of a signal with Hermitian symmetry given by its first
// half, the complex array x (torch.fft.hfft): IRFFT of x's conjugate,
// scaled as a forward transform (unnormalised under Backward).
func HFFT(x *nd.NDArray, n, dim int, norm Norm) *nd.NDArray {
	const op = "fft.HFFT"
	return hN(op, x, one(op, checkArray(op, x, true), n, dim, true), norm)
}

// IHFFT returns the n/2+1 bins of the inverse Fourier transform of the
// real array x along axis dim (torch.fft.ihfft), a complex array: the
// conjugate of RFFT's, scaled as an inverse transform. HFFT inverts it.
func IHFFT(x *nd.NDArray, n, dim int, norm Norm) *nd.NDArray {
	const op = "fft.IHFFT"
	return ihN(op, x, one(op, checkArray(op, x, false), n, dim, false), norm)
}

// c2cN transforms the complex x along p's axes.
func c2cN(op string, x *nd.NDArray, p plan, norm Norm, forward bool) *nd.NDArray {
	scale(op, norm, true, 1) // checks norm when there is no axis
	return transform(op, x, true, true, c2cSteps(op, p, norm, forward, false))
}

// rN is RFFTN: r2c along the last axis of p, then c2c along the others.
func rN(op string, x *nd.NDArray, p plan, norm Norm) *nd.NDArray {
	needAxes(op, p)
	ax, n := last(p)
	steps := append([]step{{kind: r2c, axis: ax, n: n, scale: scale(op, norm, true, n)}},
		c2cSteps(op, p, norm, true, true)...)
	return transform(op, x, false, true, steps)
}

// irN is IRFFTN: c2c along all but the last axis of p, then c2r along it.
func irN(op string, x *nd.NDArray, p plan, norm Norm) *nd.NDArray {
	needAxes(op, p)
	ax, n := last(p)
	steps := append(c2cSteps(op, p, norm, false, true),
		step{kind: c2r, axis: ax, n: n, scale: scale(op, norm, false, n)})
	return transform(op, x, true, false, steps)
}

// hN is HFFTN: forward c2c along all but the last axis of p, conjugation,
// and c2r along the last axis, all scaled as forward transforms.
func hN(op string, x *nd.NDArray, p plan, norm Norm) *nd.NDArray {
	needAxes(op, p)
	ax, n := last(p)
	steps := append(c2cSteps(op, p, norm, true, true),
		step{kind: conj}, step{kind: c2r, axis: ax, n: n, scale: scale(op, norm, true, n)})
	return transform(op, x, true, false, steps)
}

// ihN is IHFFTN: r2c along the last axis of p, conjugation, and inverse
// c2c along the others, all scaled as inverse transforms.
func ihN(op string, x *nd.NDArray, p plan, norm Norm) *nd.NDArray {
	needAxes(op, p)
	ax, n := last(p)
	steps := append([]step{{kind: r2c, axis: ax, n: n, scale: scale(op, norm, false, n)}, {kind: conj}},
		c2cSteps(op, p, norm, false, true)...)
	return transform(op, x, false, true, steps)
}

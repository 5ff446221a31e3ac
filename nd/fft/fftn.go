package fft

import "github.com/goluon/goluon/nd"

// The two- and N-dimensional transforms take s, the lengths (nil: the
// input's; 0 or −1 in s: that axis' input length), and dims, the axes
// (nil: the last two for the 2-D forms; for the N-D forms every axis of
// the signal, or its last len(s) when s is given). The half-spectrum
// transforms (RFFTN, IRFFTN, HFFTN, IHFFTN) halve the last axis of dims,
// in the order given.

// FFT2 returns the two-dimensional Fourier transform of the complex array
// x over dims (default the last two; torch.fft.fft2).
func FFT2(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.FFT2"
	return c2cN(op, x, resolve(op, checkArray(op, x, true), s, two(dims), false), norm, true)
}

// IFFT2 returns the two-dimensional inverse Fourier transform of the
// complex array x over dims (default the last two; torch.fft.ifft2).
func IFFT2(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.IFFT2"
	return c2cN(op, x, resolve(op, checkArray(op, x, true), s, two(dims), false), norm, false)
}

// RFFT2 returns the two-dimensional Fourier transform of the real array x
// over dims (default the last two; torch.fft.rfft2), the last of them
// halved to n/2+1 bins.
func RFFT2(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.RFFT2"
	return rN(op, x, resolve(op, checkArray(op, x, false), s, two(dims), false), norm)
}

// IRFFT2 returns the real two-dimensional inverse of RFFT2
// (torch.fft.irfft2): the last axis of dims is a half spectrum, of
// 2·(m−1) points by default.
func IRFFT2(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.IRFFT2"
	return irN(op, x, resolve(op, checkArray(op, x, true), s, two(dims), true), norm)
}

// HFFT2 returns the real two-dimensional Fourier transform of a
// Hermitian-symmetric signal given by its half x (torch.fft.hfft2).
func HFFT2(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.HFFT2"
	return hN(op, x, resolve(op, checkArray(op, x, true), s, two(dims), true), norm)
}

// IHFFT2 returns the two-dimensional inverse Fourier transform of the real
// array x, the last axis of dims halved (torch.fft.ihfft2); HFFT2
// inverts it.
func IHFFT2(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.IHFFT2"
	return ihN(op, x, resolve(op, checkArray(op, x, false), s, two(dims), false), norm)
}

// FFTN returns the N-dimensional Fourier transform of the complex array x
// over dims (torch.fft.fftn).
func FFTN(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.FFTN"
	return c2cN(op, x, resolve(op, checkArray(op, x, true), s, dims, false), norm, true)
}

// IFFTN returns the N-dimensional inverse Fourier transform of the complex
// array x over dims (torch.fft.ifftn).
func IFFTN(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.IFFTN"
	return c2cN(op, x, resolve(op, checkArray(op, x, true), s, dims, false), norm, false)
}

// RFFTN returns the N-dimensional Fourier transform of the real array x
// over dims, the last of them halved to n/2+1 bins (torch.fft.rfftn).
func RFFTN(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.RFFTN"
	return rN(op, x, resolve(op, checkArray(op, x, false), s, dims, false), norm)
}

// IRFFTN returns the real N-dimensional inverse of RFFTN
// (torch.fft.irfftn): the last axis of dims is a half spectrum, of
// 2·(m−1) points by default.
func IRFFTN(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.IRFFTN"
	return irN(op, x, resolve(op, checkArray(op, x, true), s, dims, true), norm)
}

// HFFTN returns the real N-dimensional Fourier transform of a
// Hermitian-symmetric signal given by its half x (torch.fft.hfftn).
func HFFTN(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.HFFTN"
	return hN(op, x, resolve(op, checkArray(op, x, true), s, dims, true), norm)
}

// IHFFTN returns the N-dimensional inverse Fourier transform of the real
// array x, the last axis of dims halved (torch.fft.ihfftn); HFFTN inverts
// it.
func IHFFTN(x *nd.NDArray, s, dims []int, norm Norm) *nd.NDArray {
	const op = "fft.IHFFTN"
	return ihN(op, x, resolve(op, checkArray(op, x, false), s, dims, false), norm)
}

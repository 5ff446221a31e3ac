package fft

import (
	"math"
	"math/cmplx"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Plans. Gonum's FFTPACK port factors a length into 2, 3, 4, 5 and any
// other primes, and a prime factor p costs O(n·p): a length with a large
// prime factor (a prime length above all) would take O(n²). Such lengths
// go through Bluestein's algorithm instead, a convolution with a chirp
// done by power-of-two transforms of at least 2n−1 points, O(n log n). The
// port also keeps at most 13 factors, which very long lengths of small
// factors exceed; they take Bluestein's path too.
//
// A plan holds twiddle factors and scratch space, so one goroutine uses it
// at a time: plans of each length wait in a sync.Pool, and a worker takes
// one for the lines it transforms and puts it back.

const (
	// maxDirectPrime is the largest prime factor left to FFTPACK.
	maxDirectPrime = 61
	// maxFactors is how many factors FFTPACK's plans hold.
	maxFactors = 13
	// maxLength is the longest transform: Bluestein's power-of-two
	// length for it, 2²⁶, has 13 radix-4 factors.
	maxLength = 1 << 25
)

// cplan is an unnormalised complex DFT of one length: forward computes
// X_k = Σ x_j e^{−2πijk/n}, backward the same with e^{+2πijk/n}. Both
// write dst (len n) from src (len n) and may not alias them.
type cplan interface {
	forward(dst, src []complex128)
	backward(dst, src []complex128)
}

// rplan is an unnormalised real DFT of one length n: coefficients gives
// the n/2+1 bins of a real sequence, sequence the real sequence of n
// points whose spectrum is the Hermitian extension of n/2+1 bins (the
// imaginary parts of bin 0, and of bin n/2 when n is even, are not read).
type rplan interface {
	coefficients(dst []complex128, src []float64)
	sequence(dst []float64, src []complex128)
}

// direct reports whether FFTPACK handles length n well.
func direct(n int) bool {
	factors := 0
	twos := 0
	for n%2 == 0 {
		n /= 2
		twos++
	}
	factors += twos/2 + twos%2
	for p := 3; p*p <= n; p += 2 {
		for n%p == 0 {
			if p > maxDirectPrime {
				return false
			}
			n /= p
			factors++
		}
	}
	if n > 1 {
		if n > maxDirectPrime {
			return false
		}
		factors++
	}
	return factors <= maxFactors
}

// gonumC adapts fourier.CmplxFFT.
type gonumC struct{ t *fourier.CmplxFFT }

func (p gonumC) forward(dst, src []complex128)  { p.t.Coefficients(dst, src) }
func (p gonumC) backward(dst, src []complex128) { p.t.Sequence(dst, src) }

// gonumR adapts fourier.FFT.
type gonumR struct{ t *fourier.FFT }

func (p gonumR) coefficients(dst []complex128, src []float64) { p.t.Coefficients(dst, src) }
func (p gonumR) sequence(dst []float64, src []complex128)     { p.t.Sequence(dst, src) }

// bluestein computes a DFT of length n as a circular convolution of
// length m (a power of two ≥ 2n−1): with w_k = e^{−πik²/n},
// X_k = w_k · Σ_j (x_j w_j) · conj(w_{k−j}).
type bluestein struct {
	n    int
	w    []complex128 // the chirp w_k, k < n
	fb   []complex128 // the transform of the chirp's conjugate, wrapped
	work []complex128 // m points of scratch
	in   []complex128 // conjugated input for the backward direction
	t    *fourier.CmplxFFT
}

func newBluestein(n int) *bluestein {
	m := 1
	for m < 2*n-1 {
		m *= 2
	}
	b := &bluestein{n: n, w: make([]complex128, n), fb: make([]complex128, m),
		work: make([]complex128, m), in: make([]complex128, n), t: fourier.NewCmplxFFT(m)}
	for k := range n {
		// k² mod 2n keeps the angle's argument small and exact.
		q := (k * k) % (2 * n)
		b.w[k] = cmplx.Rect(1, -math.Pi*float64(q)/float64(n))
	}
	chirp := make([]complex128, m)
	chirp[0] = 1
	for k := 1; k < n; k++ {
		chirp[k] = cmplx.Conj(b.w[k])
		chirp[m-k] = chirp[k]
	}
	b.t.Coefficients(b.fb, chirp)
	scale := complex(1/float64(m), 0) // the inverse transform's 1/m, once
	for i := range b.fb {
		b.fb[i] *= scale
	}
	return b
}

func (b *bluestein) forward(dst, src []complex128) {
	for i := range b.work {
		b.work[i] = 0
	}
	for k, x := range src {
		b.work[k] = x * b.w[k]
	}
	b.t.Coefficients(b.work, b.work)
	for i := range b.work {
		b.work[i] *= b.fb[i]
	}
	b.t.Sequence(b.work, b.work)
	for k := range dst {
		dst[k] = b.work[k] * b.w[k]
	}
}

// backward uses Σ x_j e^{+…} = conj(Σ conj(x_j) e^{−…}).
func (b *bluestein) backward(dst, src []complex128) {
	for i, x := range src {
		b.in[i] = cmplx.Conj(x)
	}
	b.forward(dst, b.in)
	for i := range dst {
		dst[i] = cmplx.Conj(dst[i])
	}
}

// viaComplex is a real plan made of a complex one, for lengths FFTPACK
// handles badly.
type viaComplex struct {
	c        cplan
	in, full []complex128
}

func (v *viaComplex) coefficients(dst []complex128, src []float64) {
	for i, x := range src {
		v.in[i] = complex(x, 0)
	}
	v.c.forward(v.full, v.in)
	copy(dst, v.full)
}

func (v *viaComplex) sequence(dst []float64, src []complex128) {
	n := len(v.in)
	v.in[0] = complex(real(src[0]), 0)
	for k := 1; k < len(src); k++ {
		v.in[k] = src[k]
		v.in[n-k] = cmplx.Conj(src[k])
	}
	if n%2 == 0 {
		v.in[n/2] = complex(real(src[n/2]), 0)
	}
	v.c.backward(v.full, v.in)
	for i := range dst {
		dst[i] = real(v.full[i])
	}
}

// pools holds a *sync.Pool of plans per kind and length.
var pools sync.Map

type poolKey struct {
	n    int
	real bool
}

// getC returns a complex plan of length n; putC gives it back.
func getC(n int) cplan {
	p, _ := pools.LoadOrStore(poolKey{n, false}, &sync.Pool{New: func() any { return newC(n) }})
	return p.(*sync.Pool).Get().(cplan)
}

func putC(n int, c cplan) {
	p, _ := pools.Load(poolKey{n, false})
	p.(*sync.Pool).Put(c)
}

func newC(n int) cplan {
	if direct(n) {
		return gonumC{fourier.NewCmplxFFT(n)}
	}
	return newBluestein(n)
}

// getR returns a real plan of length n; putR gives it back.
func getR(n int) rplan {
	p, _ := pools.LoadOrStore(poolKey{n, true}, &sync.Pool{New: func() any { return newR(n) }})
	return p.(*sync.Pool).Get().(rplan)
}

func putR(n int, r rplan) {
	p, _ := pools.Load(poolKey{n, true})
	p.(*sync.Pool).Put(r)
}

func newR(n int) rplan {
	if direct(n) {
		return gonumR{fourier.NewFFT(n)}
	}
	return &viaComplex{c: newBluestein(n), in: make([]complex128, n), full: make([]complex128, n)}
}

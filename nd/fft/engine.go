package fft

import (
	"runtime"
	"sync"

	"github.com/goluon/goluon/nd"
)

// The engine. Every transform of this package is a short list of steps,
// each a one-dimensional transform along one axis of a complex host array
// (real arrays are held with zero imaginary parts): a complex DFT (c2c), a
// real-to-half-spectrum DFT (r2c), a half-spectrum-to-real DFT (c2r), or a
// conjugation. Each step first zero-pads or truncates its axis to the
// length it reads, as PyTorch does, and scales its result. Every step is
// a real-linear map, so the gradient of a list is the list of the steps'
// transposes (adjoints) in reverse order:
//
//   - c2c of scale s, Y = s·F·P(X) with P the padding or truncation: its
//     adjoint is s·Fᴴ·G, truncated or padded back (Pᵀ), and Fᴴ is the
//     unnormalised DFT of the other direction;
//   - r2c, Y_k = s·Σ_j x_j e^{−2πijk/n} for k ≤ n/2: its adjoint is
//     x̄_j = s·Re Σ_{k≤n/2} G_k e^{+2πijk/n}, a complex backward DFT of G
//     extended by zeros to n bins, of which the real part is kept;
//   - c2r, x_j = s·(Re Z₀ + 2·Σ Re(Z_k e^{+2πijk/n}) [+ Re Z_{n/2}·(−1)ʲ]):
//     its adjoint is s·w_k·Σ_j G_j e^{−2πijk/n}, an r2c of G with weights
//     w_k = 2 on the bins that stand for two (1 ≤ k ≤ n−(n/2+1)) and 1 on
//     bin 0 and, for even n, bin n/2. The imaginary parts of those bins,
//     which c2r ignores, get zero gradient, as PyTorch's;
//   - conjugation is its own adjoint.

// kind is a step's transform.
type kind uint8

const (
	c2c kind = iota
	r2c
	c2r
	conj
)

// step is one transform along axis (of the complex shape): c2c to n
// points (backward: e^{+…} direction), r2c of n points to n/2+1 bins, c2r
// of n/2+1 bins to n points, each scaled by scale.
type step struct {
	kind     kind
	axis     int
	n        int
	backward bool
	scale    float64
}

// writes is how many points of its axis a step writes.
func (s step) writes() int {
	if s.kind == r2c {
		return s.n/2 + 1
	}
	return s.n
}

// host is a complex array on the host, row-major.
type host struct {
	shape []int
	v     []complex128
}

// run applies the steps in order and returns the result and the axis
// length each step found (for the adjoint's padding or truncation).
func run(h host, steps []step) (host, []int) {
	lens := make([]int, len(steps))
	for i, s := range steps {
		if s.kind == conj {
			h = conjugate(h)
			continue
		}
		lens[i] = h.shape[s.axis]
		h = lines(h, s.axis, s.writes(), forwardLine(s))
	}
	return h, lens
}

// adjoint applies the steps' adjoints in reverse order to the gradient g,
// lens being what run returned.
func adjoint(g host, steps []step, lens []int) host {
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if s.kind == conj {
			g = conjugate(g)
			continue
		}
		g = lines(g, s.axis, lens[i], adjointLine(s))
	}
	return g
}

func conjugate(h host) host {
	out := host{shape: h.shape, v: make([]complex128, len(h.v))}
	for i, z := range h.v {
		out.v[i] = complex(real(z), -imag(z))
	}
	return out
}

// lineFunc transforms one line (in, of the axis' current length) into
// out (of the step's output length); done gives its plans back.
type lineFunc struct {
	do   func(out, in []complex128)
	done func()
}

// resize copies src into dst, truncating or padding with zeros.
func resize(dst, src []complex128) {
	n := copy(dst, src)
	clear(dst[n:])
}

func scaled(v []complex128, s float64) {
	if s != 1 {
		for i := range v {
			v[i] *= complex(s, 0)
		}
	}
}

// forwardLine returns a maker of s's line transform.
func forwardLine(s step) func() lineFunc {
	n := s.n
	switch s.kind {
	case c2c:
		return func() lineFunc {
			p, buf := getC(n), make([]complex128, n)
			return lineFunc{func(out, in []complex128) {
				resize(buf, in)
				if s.backward {
					p.backward(out, buf)
				} else {
					p.forward(out, buf)
				}
				scaled(out, s.scale)
			}, func() { putC(n, p) }}
		}
	case r2c:
		return func() lineFunc {
			p, re := getR(n), make([]float64, n)
			return lineFunc{func(out, in []complex128) {
				clear(re)
				for i := range min(n, len(in)) {
					re[i] = real(in[i])
				}
				p.coefficients(out, re)
				scaled(out, s.scale)
			}, func() { putR(n, p) }}
		}
	default: // c2r
		return func() lineFunc {
			p, buf, re := getR(n), make([]complex128, n/2+1), make([]float64, n)
			return lineFunc{func(out, in []complex128) {
				resize(buf, in)
				p.sequence(re, buf)
				for i, x := range re {
					out[i] = complex(x*s.scale, 0)
				}
			}, func() { putR(n, p) }}
		}
	}
}

// adjointLine returns a maker of the transpose of s's line transform.
func adjointLine(s step) func() lineFunc {
	n := s.n
	switch s.kind {
	case c2c:
		return func() lineFunc {
			p, buf := getC(n), make([]complex128, n)
			return lineFunc{func(out, in []complex128) {
				if s.backward {
					p.forward(buf, in)
				} else {
					p.backward(buf, in)
				}
				scaled(buf, s.scale)
				resize(out, buf)
			}, func() { putC(n, p) }}
		}
	case r2c:
		return func() lineFunc {
			p, ext, buf := getC(n), make([]complex128, n), make([]complex128, n)
			return lineFunc{func(out, in []complex128) {
				resize(ext, in)
				p.backward(buf, ext)
				for i := range buf {
					buf[i] = complex(real(buf[i])*s.scale, 0)
				}
				resize(out, buf)
			}, func() { putC(n, p) }}
		}
	default: // c2r
		return func() lineFunc {
			p, re, buf := getR(n), make([]float64, n), make([]complex128, n/2+1)
			return lineFunc{func(out, in []complex128) {
				for i, z := range in {
					re[i] = real(z)
				}
				p.coefficients(buf, re)
				scaled(buf, s.scale)
				for k := 1; k <= n-(n/2+1); k++ {
					buf[k] *= 2
				}
				resize(out, buf)
			}, func() { putR(n, p) }}
		}
	}
}

// parallelWork is the number of complex values a transform must touch
// before its lines are split among goroutines.
const parallelWork = 1 << 15

// lines applies a line transform along axis of h, making the axis m long.
// The lines are split among up to GOMAXPROCS goroutines when the work is
// large (one goroutine when nd.DedicateCores has claimed every core), each
// with its own plan and scratch.
func lines(h host, axis, m int, mk func() lineFunc) host {
	outer, inner := 1, 1
	for _, d := range h.shape[:axis] {
		outer *= d
	}
	for _, d := range h.shape[axis+1:] {
		inner *= d
	}
	l := h.shape[axis]
	shape := append([]int(nil), h.shape...)
	shape[axis] = m
	out := host{shape: shape, v: make([]complex128, outer*m*inner)}
	count := outer * inner
	if count == 0 || m == 0 {
		return out
	}
	work := func(lo, hi int) {
		f := mk()
		defer f.done()
		src, dst := make([]complex128, l), make([]complex128, m)
		for ln := lo; ln < hi; ln++ {
			o, i := ln/inner, ln%inner
			for k := range l {
				src[k] = h.v[(o*l+k)*inner+i]
			}
			f.do(dst, src)
			for k := range m {
				out.v[(o*m+k)*inner+i] = dst[k]
			}
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if nd.DedicatedCores() >= workers || count*max(l, m) < parallelWork {
		workers = 1
	}
	workers = min(workers, count)
	if workers == 1 {
		work(0, count)
		return out
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*count/workers, (w+1)*count/workers
		wg.Go(func() { work(lo, hi) })
	}
	wg.Wait()
	return out
}

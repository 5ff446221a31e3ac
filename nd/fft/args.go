package fft

import "github.com/goluon/goluon/nd"

// plan is what a transform's arguments resolve to: the axes of the
// signal it transforms and each one's length.
type plan struct {
	axes, n []int
}

// resolve checks and resolves PyTorch's (s, dim) arguments against the
// signal shape sig. Without dims the axes are all of sig's, or its last
// len(s) when s is given; dims may be negative and must be distinct; s,
// when given, names one length per axis, 0 or −1 meaning the input's
// (2·(m−1) for the last axis when halfLast: the input is half a spectrum).
func resolve(op string, sig, s, dims []int, halfLast bool) plan {
	r := len(sig)
	if dims == nil {
		start := 0
		if s != nil {
			if len(s) > r {
				nd.Panicf(op, nd.ErrArgument, "%d lengths for a signal of %d axes (shape %v)", len(s), r, sig)
			}
			start = r - len(s)
		}
		for i := start; i < r; i++ {
			dims = append(dims, i)
		}
	}
	if s != nil && len(s) != len(dims) {
		nd.Panicf(op, nd.ErrArgument, "%d lengths for %d axes %v", len(s), len(dims), dims)
	}
	p := plan{axes: make([]int, len(dims)), n: make([]int, len(dims))}
	seen := make([]bool, r)
	for i, d := range dims {
		if d < -r || d >= r {
			nd.Panicf(op, nd.ErrArgument, "dim %d out of range for a signal of %d axes (shape %v)", d, r, sig)
		}
		if d < 0 {
			d += r
		}
		if seen[d] {
			nd.Panicf(op, nd.ErrArgument, "dims %v repeat axis %d", dims, d)
		}
		seen[d] = true
		p.axes[i] = d
		m := sig[d]
		if halfLast && i == len(dims)-1 {
			m = 2 * (m - 1)
		}
		if s != nil && s[i] != 0 && s[i] != -1 {
			m = s[i]
		}
		if m < 1 {
			nd.Panicf(op, nd.ErrArgument, "invalid length %d along axis %d (signal shape %v, lengths %v)", m, d, sig, s)
		}
		if m > maxLength {
			nd.Panicf(op, nd.ErrArgument, "length %d along axis %d is above the largest supported, %d", m, d, maxLength)
		}
		p.n[i] = m
	}
	return p
}

// one resolves a one-dimensional transform's n (0: the input's length)
// and dim.
func one(op string, sig []int, n, dim int, halfLast bool) plan {
	if n < 0 {
		nd.Panicf(op, nd.ErrArgument, "invalid length %d", n)
	}
	return resolve(op, sig, []int{n}, []int{dim}, halfLast)
}

// two is the default axes of the two-dimensional transforms.
func two(dims []int) []int {
	if dims == nil {
		return []int{-2, -1}
	}
	return dims
}

// needAxes fails when a transform of half spectra is given no axis.
func needAxes(op string, p plan) {
	if len(p.axes) == 0 {
		nd.Panicf(op, nd.ErrArgument, "needs at least one axis to transform")
	}
}

// c2cSteps are complex transforms along every axis of p but the last
// when butLast.
func c2cSteps(op string, p plan, norm Norm, forward, butLast bool) []step {
	k := len(p.axes)
	if butLast {
		k--
	}
	steps := make([]step, 0, k+2)
	for i := range k {
		steps = append(steps, step{kind: c2c, axis: p.axes[i], n: p.n[i], backward: !forward, scale: scale(op, norm, forward, p.n[i])})
	}
	return steps
}

// last is p's last axis and length.
func last(p plan) (axis, n int) { return p.axes[len(p.axes)-1], p.n[len(p.n)-1] }

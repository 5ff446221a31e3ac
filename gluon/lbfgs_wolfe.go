package gluon

import "math"

// A strong-Wolfe line search for LBFGS (LineSearch "strong_wolfe", as
// PyTorch's line_search_fn): Nocedal and Wright's bracketing and zoom
// (Numerical Optimization, algorithms 3.5 and 3.6) with cubic
// interpolation, sufficient decrease c1 = 1e-4, curvature c2 = 0.9, at
// most 25 evaluations after the first, and the safeguard against slow
// progress in the zoom of PyTorch's line search (minFunc's), whose steps
// it takes (TestLBFGSGoldens).

// lsPoint is a trial step and what the closure gave there.
type lsPoint struct {
	t, f, gtd float64
	g         []float64
}

// wolfe searches along d from x0 (loss f0, gradient g0, slope gtd0 < 0)
// from the step t, and leaves the parameters at x0 + t·d for the step it
// returns, with the number of closure calls it made.
func (l *LBFGS) wolfe(closure func() (float64, error), x0 []float64, t float64, d []float64, f0 float64, g0 []float64, gtd0 float64) (lsPoint, int, error) {
	const c1, c2, maxIters = 1e-4, 0.9, 25
	evals := 0
	eval := func(t float64) (lsPoint, error) {
		evals++
		if err := l.set(x0, t, d); err != nil {
			return lsPoint{}, err
		}
		f, err := closure()
		if err != nil {
			return lsPoint{}, err
		}
		g, err := l.flat(true)
		if err != nil {
			return lsPoint{}, err
		}
		return lsPoint{t: t, f: f, g: g, gtd: dot(g, d)}, nil
	}
	strong := func(p lsPoint) bool { return math.Abs(p.gtd) <= -c2*gtd0 }
	armijo := func(p lsPoint) bool { return p.f <= f0+c1*p.t*gtd0 }
	// ordered returns a bracket's ends, the lower loss first.
	ordered := func(a, b lsPoint) (lo, hi lsPoint) {
		if a.f <= b.f {
			return a, b
		}
		return b, a
	}
	prev := lsPoint{t: 0, f: f0, g: g0, gtd: gtd0}
	cur, err := eval(t)
	if err != nil {
		return lsPoint{}, evals, err
	}
	// Bracketing: grow the step until the interval holds a Wolfe point.
	var lo, hi lsPoint
	iters, bracketed := 0, false
	for iters < maxIters {
		if !armijo(cur) || (iters > 1 && cur.f >= prev.f) {
			lo, hi = ordered(prev, cur)
			bracketed = true
			break
		}
		if strong(cur) {
			return cur, evals, nil
		}
		if cur.gtd >= 0 {
			lo, hi = ordered(prev, cur)
			bracketed = true
			break
		}
		next := cubicMin(prev, cur, cur.t+0.01*(cur.t-prev.t), 10*cur.t)
		prev = cur
		if cur, err = eval(next); err != nil {
			return lsPoint{}, evals, err
		}
		iters++
	}
	if !bracketed { // out of evaluations: the better of the start and the last step
		lo, _ = ordered(lsPoint{t: 0, f: f0, g: g0, gtd: gtd0}, cur)
	}
	// Zoom: shrink [lo, hi] (lo the lower loss) around a Wolfe point. A
	// trial within a tenth of the interval of an end is moved a tenth
	// inside when the previous trial made little progress too.
	dMax := maxAbs(d)
	stuck := false
	for bracketed && iters < maxIters && math.Abs(hi.t-lo.t)*dMax >= l.o.ToleranceChange {
		a, b := math.Min(lo.t, hi.t), math.Max(lo.t, hi.t)
		tt := cubicMin(lo, hi, a, b)
		if room := 0.1 * (b - a); math.Min(b-tt, tt-a) < room {
			if stuck || tt >= b || tt <= a {
				if math.Abs(tt-b) < math.Abs(tt-a) {
					tt = b - room
				} else {
					tt = a + room
				}
				stuck = false
			} else {
				stuck = true
			}
		} else {
			stuck = false
		}
		p, err := eval(tt)
		if err != nil {
			return lsPoint{}, evals, err
		}
		iters++
		if !armijo(p) || p.f >= lo.f {
			lo, hi = ordered(lo, p)
			continue
		}
		if strong(p) {
			return p, evals, nil
		}
		if p.gtd*(hi.t-lo.t) >= 0 {
			hi = lo
		}
		lo = p
	}
	// The best point found: the parameters move back to it.
	if err := l.set(x0, lo.t, d); err != nil {
		return lsPoint{}, evals, err
	}
	return lo, evals, nil
}

// cubicMin is the minimiser of the cubic through two points' values and
// slopes, within [lo, hi] (their midpoint when the cubic has none).
func cubicMin(p, q lsPoint, lo, hi float64) float64 {
	d1 := p.gtd + q.gtd - 3*(p.f-q.f)/(p.t-q.t)
	d2sq := d1*d1 - p.gtd*q.gtd
	if d2sq < 0 || math.IsNaN(d2sq) || p.t == q.t {
		return (lo + hi) / 2
	}
	d2 := math.Sqrt(d2sq)
	var t float64
	if p.t <= q.t {
		t = q.t - (q.t-p.t)*((q.gtd+d2-d1)/(q.gtd-p.gtd+2*d2))
	} else {
		t = p.t - (p.t-q.t)*((p.gtd+d2-d1)/(p.gtd-q.gtd+2*d2))
	}
	if math.IsNaN(t) {
		return (lo + hi) / 2
	}
	return math.Min(math.Max(t, lo), hi)
}

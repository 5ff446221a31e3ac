package gluon

import (
	"errors"
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// LBFGSOpts configures LBFGS; LBFGSDefaults gives PyTorch's.
type LBFGSOpts struct {
	LR              float64 // the step length after the first iteration (the first is scaled by the gradient's L1 norm)
	MaxIter         int     // iterations per Step
	MaxEval         int     // closure calls per Step
	ToleranceGrad   float64 // stop when every gradient element is at most this in magnitude
	ToleranceChange float64 // stop when the step or the loss changes by less
	HistorySize     int     // curvature pairs kept
	// LineSearch is "" for PyTorch's default fixed step, or "strong_wolfe"
	// for a line search satisfying the strong Wolfe conditions (see
	// lbfgs_wolfe.go), which converges where a fixed step diverges.
	LineSearch string
}

// LBFGSDefaults returns PyTorch's defaults: lr 1, 20 iterations and 25
// evaluations per step, tolerances 1e-7 (gradient) and 1e-9 (change), a
// history of 100.
func LBFGSDefaults() LBFGSOpts {
	return LBFGSOpts{LR: 1, MaxIter: 20, MaxEval: 25, ToleranceGrad: 1e-7, ToleranceChange: 1e-9, HistorySize: 100}
}

// LBFGS minimises a loss of a set of parameters with the limited-memory
// BFGS method, as PyTorch's torch.optim.LBFGS, with its default fixed step
// or its strong-Wolfe line search (LBFGSOpts.LineSearch): the full-batch
// optimiser of style transfer, small regressions and physics-informed
// networks. Each Step runs up to MaxIter quasi-Newton iterations and at
// most MaxEval evaluations of the closure, which computes the loss and its
// gradients (once per iteration with the fixed step, as often as the line
// search needs with it); its state (the direction, the step
// and the curvature history) carries over to the next Step, as PyTorch's
// does. The parameters must live on one context; those whose gradient
// request is null are left alone. The search runs on the host in float64.
type LBFGS struct {
	params []*Parameter
	dev    ctx.Context
	o      LBFGSOpts

	iters    int // iterations so far, over every Step
	evals    int
	d        []float64 // the last direction
	t        float64   // the last step length
	dirs     [][]float64
	steps    [][]float64
	rho      []float64
	hDiag    float64
	prevGrad []float64
	prevLoss float64
}

// NewLBFGS returns an LBFGS over the initialised parameters ps (a
// ParamDict's List), or an error naming the first invalid option or
// parameter.
func NewLBFGS(ps []*Parameter, o LBFGSOpts) (*LBFGS, error) {
	switch {
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return nil, fmt.Errorf("gluon.LBFGS: learning rate %g must be positive", o.LR)
	case o.MaxIter < 1 || o.MaxEval < 1 || o.HistorySize < 1:
		return nil, fmt.Errorf("gluon.LBFGS: MaxIter %d, MaxEval %d and HistorySize %d must be positive (LBFGSDefaults gives PyTorch's)", o.MaxIter, o.MaxEval, o.HistorySize)
	case !(o.ToleranceGrad >= 0) || !(o.ToleranceChange >= 0):
		return nil, fmt.Errorf("gluon.LBFGS: tolerances %g and %g must be >= 0", o.ToleranceGrad, o.ToleranceChange)
	case o.LineSearch != "" && o.LineSearch != "strong_wolfe":
		return nil, fmt.Errorf("gluon.LBFGS: line search %q: want \"\" or \"strong_wolfe\"", o.LineSearch)
	}
	l := &LBFGS{o: o}
	for _, p := range ps {
		if p.GradReq() == nd.GradNull {
			continue
		}
		devs := p.Contexts()
		if len(devs) != 1 {
			return nil, fmt.Errorf("gluon.LBFGS: parameter %s has %d contexts; LBFGS runs on one", p.Name(), len(devs))
		}
		if l.params != nil && devs[0] != l.dev {
			return nil, fmt.Errorf("gluon.LBFGS: parameter %s is on %v, the others on %v", p.Name(), devs[0], l.dev)
		}
		l.params, l.dev = append(l.params, p), devs[0]
	}
	if l.params == nil {
		return nil, errors.New("gluon.LBFGS: no parameters that take a gradient")
	}
	return l, nil
}

// flat gathers the parameters' values (or gradients) into one vector.
func (l *LBFGS) flat(grads bool) ([]float64, error) {
	var v []float64
	for _, p := range l.params {
		a := p.Data(l.dev)
		if grads {
			if a = p.Grad(l.dev); a == nil {
				return nil, fmt.Errorf("gluon.LBFGS: parameter %s has no gradient: the closure must run a backward pass", p.Name())
			}
		}
		v = append(v, a.Float64s()...)
	}
	return v, nil
}

// move adds t·d to the parameters, each element rounded once.
func (l *LBFGS) move(t float64, d []float64) error {
	x, err := l.flat(false)
	if err != nil {
		return err
	}
	return l.set(x, t, d)
}

// set sets the parameters to x + t·d.
func (l *LBFGS) set(x []float64, t float64, d []float64) error {
	off := 0
	for _, p := range l.params {
		cur := p.Data(l.dev)
		n := cur.Size()
		v := make([]float64, n)
		for i := range v {
			v[i] = math.FMA(t, d[off+i], x[off+i])
		}
		off += n
		next := nd.FromSliceShaped(l.dev, v, cur.Shape()) // a 0-d parameter stays 0-d
		if cur.DType() != nd.Float64 {
			next = next.AsType(cur.DType())
		}
		p.SetData(next)
		next.Release()
	}
	return nil
}

// Step runs up to MaxIter iterations and returns the loss the closure gave
// at the start. The closure runs the forward and backward passes (with the
// default GradWrite the gradients are overwritten each time) and returns
// the loss.
func (l *LBFGS) Step(closure func() (float64, error)) (float64, error) {
	o := l.o
	loss, err := closure()
	if err != nil {
		return 0, err
	}
	first := loss
	evals := 1
	l.evals++
	g, err := l.flat(true)
	if err != nil {
		return 0, err
	}
	if maxAbs(g) <= o.ToleranceGrad {
		return first, nil
	}
	for n := 1; n <= o.MaxIter; n++ {
		l.iters++
		l.direction(g)
		l.prevGrad, l.prevLoss = g, loss
		l.t = o.LR
		if l.iters == 1 {
			l.t = math.Min(1, 1/sumAbs(g)) * o.LR
		}
		gtd := dot(g, l.d)
		if gtd > -o.ToleranceChange { // not a descent direction
			break
		}
		done := false
		if o.LineSearch == "strong_wolfe" {
			x0, err := l.flat(false)
			if err != nil {
				return 0, err
			}
			p, ls, err := l.wolfe(closure, x0, l.t, l.d, loss, g, gtd)
			if err != nil {
				return 0, err
			}
			loss, g, l.t = p.f, p.g, p.t
			evals += ls
			l.evals += ls
			done = maxAbs(g) <= o.ToleranceGrad
		} else if err := l.move(l.t, l.d); err != nil {
			return 0, err
		} else if n != o.MaxIter {
			if loss, err = closure(); err != nil {
				return 0, err
			}
			if g, err = l.flat(true); err != nil {
				return 0, err
			}
			evals++
			l.evals++
			done = maxAbs(g) <= o.ToleranceGrad
		}
		if n == o.MaxIter || evals >= o.MaxEval || done ||
			math.Abs(l.t)*maxAbs(l.d) <= o.ToleranceChange || math.Abs(loss-l.prevLoss) < o.ToleranceChange {
			break
		}
	}
	return first, nil
}

// direction sets l.d, the quasi-Newton direction for the gradient g, after
// adding the last step's curvature pair to the history (the two-loop
// recursion; the first direction is −g).
func (l *LBFGS) direction(g []float64) {
	if l.iters == 1 {
		l.d = scaled(g, -1)
		l.dirs, l.steps, l.rho, l.hDiag = nil, nil, nil, 1
		return
	}
	y := make([]float64, len(g))
	for i := range y {
		y[i] = g[i] - l.prevGrad[i]
	}
	s := scaled(l.d, l.t)
	if ys := dot(y, s); ys > 1e-10 {
		if len(l.dirs) == l.o.HistorySize {
			l.dirs, l.steps, l.rho = l.dirs[1:], l.steps[1:], l.rho[1:]
		}
		l.dirs, l.steps, l.rho = append(l.dirs, y), append(l.steps, s), append(l.rho, 1/ys)
		l.hDiag = ys / dot(y, y)
	}
	q := scaled(g, -1)
	alpha := make([]float64, len(l.dirs))
	for i := len(l.dirs) - 1; i >= 0; i-- {
		alpha[i] = dot(l.steps[i], q) * l.rho[i]
		axpy(-alpha[i], l.dirs[i], q)
	}
	r := scaled(q, l.hDiag)
	for i := range l.dirs {
		beta := dot(l.dirs[i], r) * l.rho[i]
		axpy(alpha[i]-beta, l.steps[i], r)
	}
	l.d = r
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// axpy adds a·x to y, each element rounded once (as PyTorch's add_ with
// alpha, which its CPU kernels fuse).
func axpy(a float64, x, y []float64) {
	for i := range y {
		y[i] = math.FMA(a, x[i], y[i])
	}
}

func scaled(x []float64, a float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = a * v
	}
	return out
}

func maxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

func sumAbs(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += math.Abs(v)
	}
	return s
}

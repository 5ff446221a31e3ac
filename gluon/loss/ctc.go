package loss

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/nd"
)

// CTC is Gluon's CTCLoss, PyTorch's CTCLoss with reduction "none": the
// connectionist temporal classification loss, −log p(label | pred) summed
// over every alignment of the label sequence to the time steps, for
// sequence models whose output and target lengths differ (speech and
// handwriting recognition).
//
// Pred holds unnormalised scores, shape [N, T, C] with Layout "NTC" or
// [T, N, C] with "TNC"; log_softmax over the C classes (the alphabet and
// the blank) is applied here, so the gradient is with respect to the
// scores. Labels are [N, S]: the class indices of each target sequence,
// padded at the end. Without label lengths a sequence ends at its first
// element that is negative or equal to the blank (Gluon pads with −1).
// Pred lengths (nil: T for every sample) and label lengths are [N] arrays
// of any dtype. They, and the labels, may live on any context: they are
// read back to the host.
//
// The loss of a sample is not divided by its length (PyTorch's "mean"
// reduction divides by the target length; do so on the result if wanted).
// A target that no alignment fits (too long for its pred length, counting
// a blank between repeated labels) has an infinite loss and a NaN gradient
// over its time steps, as in PyTorch, or a loss and gradient of 0 with
// ZeroInfinity.
//
// The forward and backward recursions run on the host in float64, on one
// core per sample; the result is in pred's dtype on pred's context.
type CTC struct {
	// Layout is "NTC" (Gluon's default; "" means it) or "TNC" (PyTorch's).
	Layout string
	// Blank is the blank class: an index in [0, C), or −1 for the last
	// class C−1 (Gluon's blank_label "last"). PyTorch's default is 0.
	Blank int
	// ZeroInfinity gives a loss and gradient of 0 to samples whose target
	// no alignment fits (PyTorch's zero_infinity).
	ZeroInfinity bool
	// Weight scales the loss; 0 means 1.
	Weight float64
}

// NewCTC returns a CTC loss with Gluon's defaults: layout NTC, the last
// class is the blank, no weighting.
func NewCTC() CTC { return CTC{Layout: "NTC", Blank: -1, Weight: 1} }

// Name returns "CTCLoss".
func (CTC) Name() string { return "CTCLoss" }

// Forward returns the per-sample loss, shape [N]. predLengths and
// labelLengths may be nil.
func (l CTC) Forward(pred, label, predLengths, labelLengths *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, predLengths, labelLengths, nil)
}

// ForwardWeighted is Forward with per-sample weights ([N] or [N, 1]; nil
// for none).
func (l CTC) ForwardWeighted(pred, label, predLengths, labelLengths, sampleWeight *nd.NDArray) *nd.NDArray {
	const op = "loss.CTC"
	pred, _, sampleWeight = autocastInputs(pred, nil, sampleWeight)
	if pred == nil || label == nil {
		nd.Panicf(op, nd.ErrArgument, "nil predictions or labels")
	}
	if sampleWeight != nil {
		check(op, pred, pred, sampleWeight)
	}
	if pred.NDim() != 3 {
		nd.Panicf(op, nd.ErrShape, "predictions of shape %v: want 3 axes (%s)", pred.Shape(), l.layout())
	}
	if !pred.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "predictions are %v, want a floating dtype", pred.DType())
	}
	x := pred
	switch l.layout() {
	case "NTC":
	case "TNC":
		x = nd.SwapAxes(pred, 0, 1)
	default:
		nd.Panicf(op, nd.ErrArgument, "layout %q: want \"NTC\" or \"TNC\"", l.Layout)
	}
	s := x.Shape()
	n, t, c := s[0], s[1], s[2]
	blank := l.Blank
	if blank == -1 {
		blank = c - 1
	}
	if blank < 0 || blank >= c {
		nd.Panicf(op, nd.ErrArgument, "blank %d outside [0, %d) for %d classes (−1 means the last)", l.Blank, c, c)
	}
	if label.NDim() != 2 || label.Shape()[0] != n {
		nd.Panicf(op, nd.ErrShape, "labels of shape %v for predictions of shape %v (%s): want [%d, S]", label.Shape(), pred.Shape(), l.layout(), n)
	}
	f := &ctcFunc{n: n, t: t, c: c, blank: blank, zeroInf: l.ZeroInfinity}
	f.targets, f.tlen = ctcTargets(op, label, labelLengths, blank, c)
	f.plen = ctcLengths(op, "pred lengths", predLengths, n, t)
	loss := autograd.Apply("CTCLoss", f, nd.LogSoftmax(x, 2))
	return finish(op, loss, sampleWeight, scale(l.Weight))
}

func (l CTC) layout() string {
	if l.Layout == "" {
		return "NTC"
	}
	return l.Layout
}

// ctcLengths reads an [N] array of lengths at most max (nil: max each).
func ctcLengths(op, what string, a *nd.NDArray, n, max int) []int {
	out := make([]int, n)
	if a == nil {
		for i := range out {
			out[i] = max
		}
		return out
	}
	if a.Size() != n || a.NDim() > 2 {
		nd.Panicf(op, nd.ErrShape, "%s of shape %v: want [%d]", what, a.Shape(), n)
	}
	for i, v := range a.Float64s() {
		if v != math.Trunc(v) || v < 0 || v > float64(max) {
			nd.Panicf(op, nd.ErrArgument, "%s[%d] = %g outside [0, %d]", what, i, v, max)
		}
		out[i] = int(v)
	}
	return out
}

// ctcTargets reads the target sequences of labels [N, S] and their lengths.
func ctcTargets(op string, label, lengths *nd.NDArray, blank, c int) ([][]int, []int) {
	n, width := label.Shape()[0], label.Shape()[1]
	vals := label.Float64s()
	var tlen []int
	if lengths != nil {
		tlen = ctcLengths(op, "label lengths", lengths, n, width)
	}
	targets := make([][]int, n)
	for i := range targets {
		row := vals[i*width : (i+1)*width]
		end := width
		if tlen != nil {
			end = tlen[i]
		} else {
			for j, v := range row {
				if v < 0 || v == float64(blank) {
					end = j
					break
				}
			}
			for j, v := range row[end:] {
				if !(v < 0 || v == float64(blank)) {
					nd.Panicf(op, nd.ErrArgument, "label[%d][%d] = %g follows the padding at %d (a negative value or the blank %d ends a target): give label lengths to use the blank's value inside a target", i, end+j, v, end, blank)
				}
			}
		}
		seq := make([]int, end)
		for j, v := range row[:end] {
			if v != math.Trunc(v) || v < 0 || v >= float64(c) || v == float64(blank) {
				nd.Panicf(op, nd.ErrArgument, "label[%d][%d] = %g: want a class in [0, %d) other than the blank %d", i, j, v, c, blank)
			}
			seq[j] = int(v)
		}
		targets[i] = seq
	}
	if tlen == nil {
		tlen = make([]int, n)
		for i, s := range targets {
			tlen[i] = len(s)
		}
	}
	return targets, tlen
}

// ctcFunc is the CTC loss of log-probabilities [N, T, C] as an
// autograd.Function: Forward runs the forward recursion (kept for
// Backward), Backward the backward recursion.
type ctcFunc struct {
	n, t, c, blank int
	zeroInf        bool
	targets        [][]int
	tlen, plen     []int

	logp  *nd.NDArray
	lp    []float64   // log-probabilities, read back
	alpha [][]float64 // per sample, [plen][2·tlen+1]
	nll   []float64
}

// ext returns the extended label l' of a target: blanks around and
// between its labels.
func (f *ctcFunc) ext(i int) []int {
	e := make([]int, 2*len(f.targets[i])+1)
	for s := range e {
		e[s] = f.blank
		if s%2 == 1 {
			e[s] = f.targets[i][s/2]
		}
	}
	return e
}

func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

func (f *ctcFunc) Forward(in ...*nd.NDArray) *nd.NDArray {
	f.logp = in[0]
	f.lp = in[0].Float64s()
	f.alpha = make([][]float64, f.n)
	f.nll = make([]float64, f.n)
	parallelSamples(f.n, func(i int) {
		e := f.ext(i)
		tn, sn := f.plen[i], len(e)
		if tn == 0 {
			f.nll[i] = math.Inf(1)
			if f.tlen[i] == 0 {
				f.nll[i] = 0
			}
			return
		}
		a := make([]float64, tn*sn)
		for k := range a {
			a[k] = math.Inf(-1)
		}
		row := func(t int) []float64 { return f.lp[(i*f.t+t)*f.c : (i*f.t+t+1)*f.c] }
		lp := row(0)
		a[0] = lp[e[0]]
		if sn > 1 {
			a[1] = lp[e[1]]
		}
		for t := 1; t < tn; t++ {
			lp, prev, cur := row(t), a[(t-1)*sn:t*sn], a[t*sn:(t+1)*sn]
			for s := range sn {
				v := prev[s]
				if s > 0 {
					v = logAdd(v, prev[s-1])
				}
				if s > 1 && e[s] != f.blank && e[s] != e[s-2] {
					v = logAdd(v, prev[s-2])
				}
				if !math.IsInf(v, -1) {
					cur[s] = v + lp[e[s]]
				}
			}
		}
		last := a[(tn-1)*sn:]
		ll := last[sn-1]
		if sn > 1 {
			ll = logAdd(ll, last[sn-2])
		}
		f.alpha[i] = a
		f.nll[i] = -ll
	})
	out := make([]float64, f.n)
	for i, v := range f.nll {
		if f.zeroInf && math.IsInf(v, 1) {
			v = 0
		}
		out[i] = v
	}
	return sessionOf(in[0]).FromSlice(in[0].Context(), out, f.n).AsType(in[0].DType())
}

func (f *ctcFunc) Backward(g *nd.NDArray) []*nd.NDArray {
	gv := g.Float64s()
	grad := make([]float64, len(f.lp))
	parallelSamples(f.n, func(i int) {
		nll := f.nll[i]
		if math.IsInf(nll, 1) && f.zeroInf || gv[i] == 0 || f.alpha[i] == nil {
			return
		}
		if math.IsInf(nll, 1) { // no alignment: undefined, NaN as PyTorch
			for k := range grad[i*f.t*f.c : (i*f.t+f.plen[i])*f.c] {
				grad[i*f.t*f.c+k] = math.NaN()
			}
			return
		}
		e := f.ext(i)
		tn, sn := f.plen[i], len(e)
		a := f.alpha[i]
		row := func(t int) []float64 { return f.lp[(i*f.t+t)*f.c : (i*f.t+t+1)*f.c] }
		// beta over two rows; occupancy lse_s(α+β) accumulated per class.
		next := make([]float64, sn)
		cur := make([]float64, sn)
		occ := make([]float64, f.c)
		for t := tn - 1; t >= 0; t-- {
			lp := row(t)
			for s := range sn {
				var v float64
				if t == tn-1 {
					v = math.Inf(-1)
					if s >= sn-2 {
						v = 0
					}
				} else {
					v = next[s]
					if s+1 < sn {
						v = logAdd(v, next[s+1])
					}
					if s+2 < sn && e[s] != f.blank && e[s] != e[s+2] {
						v = logAdd(v, next[s+2])
					}
				}
				cur[s] = math.Inf(-1)
				if !math.IsInf(v, -1) {
					cur[s] = v + lp[e[s]]
				}
			}
			for k := range occ {
				occ[k] = math.Inf(-1)
			}
			for s := range sn {
				occ[e[s]] = logAdd(occ[e[s]], a[t*sn+s]+cur[s])
			}
			out := grad[(i*f.t+t)*f.c : (i*f.t+t+1)*f.c]
			for k, o := range occ {
				if math.IsInf(o, -1) {
					continue
				}
				// d(−log p)/d log y[t,k] = −Σ_{s: l'_s=k} α·β / (y·p).
				out[k] = -gv[i] * math.Exp(o-lp[k]+nll)
			}
			next, cur = cur, next
		}
	})
	return []*nd.NDArray{sessionOf(f.logp).FromSlice(f.logp.Context(), grad, f.logp.Shape()...).AsType(f.logp.DType())}
}

// parallelSamples runs f(i) for i in [0, n), on up to GOMAXPROCS
// goroutines.
func parallelSamples(n int, f func(i int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if w <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

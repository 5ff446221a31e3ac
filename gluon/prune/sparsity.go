package prune

import (
	"fmt"
	"strings"

	"github.com/goluon/goluon/gluon"
)

// ParamSparsity is how sparse one pruned parameter is: the zeros of the
// weight as the layer uses it (weight_orig · weight_mask), as PyTorch's
// pruning tutorial counts them, torch.sum(module.weight == 0).
type ParamSparsity struct {
	// Name is the weight's full name ("conv0.weight").
	Name string
	// Zeros counts its entries equal to zero (pruned or not) out of
	// Total.
	Zeros, Total int
}

// Fraction is Zeros / Total.
func (s ParamSparsity) Fraction() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Zeros) / float64(s.Total)
}

// Report is the sparsity of a network's pruned parameters (Sparsity).
type Report struct {
	// Params lists the pruned parameters in the network's order.
	Params []ParamSparsity
	// Zeros and Total sum theirs.
	Zeros, Total int
}

// Global is the fraction of zeros over all the pruned parameters
// together: the tutorial's "global sparsity".
func (r Report) Global() float64 {
	return ParamSparsity{Zeros: r.Zeros, Total: r.Total}.Fraction()
}

// String prints one line per parameter and a global line, as
// percentages:
//
//	conv0.weight  37.04% (20 of 54)
//	global        37.04% (20 of 54)
func (r Report) String() string {
	width := len("global")
	for _, p := range r.Params {
		width = max(width, len(p.Name))
	}
	var b strings.Builder
	line := func(name string, s ParamSparsity) {
		fmt.Fprintf(&b, "%-*s %6.2f%% (%d of %d)\n", width, name, 100*s.Fraction(), s.Zeros, s.Total)
	}
	for _, p := range r.Params {
		line(p.Name, p)
	}
	line("global", ParamSparsity{Zeros: r.Zeros, Total: r.Total})
	return b.String()
}

// Sparsity reports the zeros of every pruned parameter of b and the
// blocks under it, named by their path from b, and over all of them
// (parameters not pruned are not counted; a pruned one without values
// yet is left out). It reads the first replica: the Trainer keeps the
// replicas equal.
func Sparsity(b gluon.Component) Report {
	var r Report
	walk(b, "", func(p *Pruning, full string) {
		if !p.Orig.Initialized() {
			return
		}
		s := ParamSparsity{Name: full}
		for _, v := range effective(p) {
			s.Total++
			if v == 0 {
				s.Zeros++
			}
		}
		r.Params = append(r.Params, s)
		r.Zeros += s.Zeros
		r.Total += s.Total
	})
	return r
}

package prune

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Identity prunes b's parameter name without removing anything (torch's
// prune.identity): weight_orig and a weight_mask of ones take its place.
// It is how a network is made ready to load a pruned state dict, and the
// one method that accepts a parameter whose shape is still to be inferred
// (its mask then starts at ones when the shape is known). On a pruned
// parameter it changes nothing.
func Identity(b gluon.Component, name string) *Pruning {
	const op = "prune.Identity"
	t := resolve(op, b, name, false)
	return t.commit(op, t.mask, "identity")
}

// CustomFromMask prunes b's parameter name with a mask of the parameter's
// shape (torch's prune.custom_from_mask), combined with the mask already
// there: entries where mask is 0 are pruned. The mask may have any dtype;
// its values must be 0 or 1.
func CustomFromMask(b gluon.Component, name string, mask *nd.NDArray) *Pruning {
	const op = "prune.CustomFromMask"
	t := resolve(op, b, name, true)
	if mask == nil {
		nd.Panicf(op, nd.ErrArgument, "no mask")
	}
	if !slices.Equal(mask.Shape(), t.shape) {
		nd.Panicf(op, nd.ErrShape, "mask of shape %v for %s of shape %v", mask.Shape(), t.name, t.shape)
	}
	vals := host(mask)
	out := slices.Clone(t.mask)
	for i, v := range vals {
		if v != 0 && v != 1 {
			nd.Panicf(op, nd.ErrArgument, "mask entry %d is %g: a mask holds 0 and 1", i, v)
		}
		out[i] *= v
	}
	return t.commit(op, out, "custom_from_mask")
}

// L1Unstructured prunes amount of the still unpruned entries of b's
// parameter name, those of smallest absolute value (torch's
// prune.l1_unstructured): of scores when given (any floating-point array
// of the parameter's shape, on any context: the importance of each
// entry), else of the weight as the layer uses it. Ties: see the package
// documentation.
func L1Unstructured(b gluon.Component, name string, amount Amount, scores *nd.NDArray) *Pruning {
	const op = "prune.L1Unstructured"
	amount.check(op)
	t := resolve(op, b, name, true)
	t.useScores(op, scores)
	return t.commit(op, pruneEntries(op, L1, amount, t.scores, t.mask), fmt.Sprintf("l1_unstructured(amount=%v)", amount))
}

// RandomUnstructured prunes amount of the still unpruned entries of b's
// parameter name, chosen at random (torch's prune.random_unstructured):
// one uniform draw per entry from nd's generator for cpu(0), the entries
// of the largest draws pruned. nd.Seed makes it reproducible; the draws
// are not torch's.
func RandomUnstructured(b gluon.Component, name string, amount Amount) *Pruning {
	const op = "prune.RandomUnstructured"
	amount.check(op)
	t := resolve(op, b, name, true)
	return t.commit(op, pruneEntries(op, Random, amount, nil, t.mask), fmt.Sprintf("random_unstructured(amount=%v)", amount))
}

// LnStructured prunes amount of the channels along dim of b's parameter
// name that are not yet entirely zero: those of smallest Ln norm
// (torch's prune.ln_structured), the norm of each channel taken over
// every other axis, of scores when given (as L1Unstructured's), else of
// the weight as the layer uses it. n is torch.norm's p: 1, 2 (torch's
// "fro"), any other positive or negative power, 0 (the count of non-zero
// entries), math.Inf(1) (the largest absolute value) or math.Inf(-1) (the
// smallest); "nuc" is not supported. dim may count from the end (-1 is
// the last axis). The parameter must have two or more dimensions. Ties:
// see the package documentation.
func LnStructured(b gluon.Component, name string, amount Amount, n float64, dim int, scores *nd.NDArray) *Pruning {
	const op = "prune.LnStructured"
	amount.check(op)
	if math.IsNaN(n) {
		nd.Panicf(op, nd.ErrArgument, "norm order n is NaN")
	}
	t := resolve(op, b, name, true)
	t.useScores(op, scores)
	mask := pruneChannels(op, amount, t.shape, dim, t.mask, func(size, inner int, live []int, k int) []int {
		norms := channelNorms(t.scores, size, inner, n)
		vals := make([]float64, len(live))
		for j, c := range live {
			vals[j] = norms[c]
		}
		keep := len(live) - k
		return pick(live, rank(vals, true)[keep:]) // the largest are kept
	})
	return t.commit(op, mask, fmt.Sprintf("ln_structured(amount=%v, n=%v, dim=%d)", amount, n, dim))
}

// RandomStructured prunes amount of the channels along dim of b's
// parameter name that are not yet entirely zero, chosen at random
// (torch's prune.random_structured): one uniform draw per such channel
// from nd's generator for cpu(0), the channels of the smallest draws
// pruned. The parameter must have two or more dimensions.
func RandomStructured(b gluon.Component, name string, amount Amount, dim int) *Pruning {
	const op = "prune.RandomStructured"
	amount.check(op)
	t := resolve(op, b, name, true)
	mask := pruneChannels(op, amount, t.shape, dim, t.mask, func(_, _ int, live []int, k int) []int {
		return pick(live, rank(draws(len(live)), false)[:k])
	})
	return t.commit(op, mask, fmt.Sprintf("random_structured(amount=%v, dim=%d)", amount, dim))
}

// Method is the rule GlobalUnstructured ranks entries by.
type Method string

// The methods of GlobalUnstructured: torch's L1Unstructured and
// RandomUnstructured.
const (
	L1     Method = "l1_unstructured"
	Random Method = "random_unstructured"
)

// Target is a parameter GlobalUnstructured prunes: Block's own parameter
// Name ("" means "weight"), ranked by Scores when set (as
// L1Unstructured's scores).
type Target struct {
	Block  gluon.Component
	Name   string
	Scores *nd.NDArray
}

// GlobalUnstructured prunes amount of the still unpruned entries of all
// the targets together (torch's prune.global_unstructured): with L1, the
// entries of smallest absolute value (or score) over all of them, so that
// each parameter loses what it holds of the smallest; with Random, a
// random choice. A Fraction counts the unpruned entries of all targets.
// It returns the targets' Prunings, in order. A parameter named twice
// panics with ErrArgument.
func GlobalUnstructured(targets []Target, method Method, amount Amount) []*Pruning {
	const op = "prune.GlobalUnstructured"
	if method != L1 && method != Random {
		nd.Panicf(op, nd.ErrArgument, "method %q: want prune.L1 or prune.Random (unstructured methods)", method)
	}
	amount.check(op)
	if len(targets) == 0 {
		nd.Panicf(op, nd.ErrArgument, "no parameters to prune")
	}
	ts := make([]*target, len(targets))
	var scores, mask []float64
	for i, tg := range targets {
		t := resolve(op, tg.Block, tg.Name, true)
		for _, u := range ts[:i] {
			if u.w == t.w || u.meta == t.meta && u.name == t.name {
				nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q is named twice", t.name, t.meta.Name())
			}
		}
		t.useScores(op, tg.Scores)
		ts[i] = t
		scores, mask = append(scores, t.scores...), append(mask, t.mask...)
	}
	final := pruneEntries(op, method, amount, scores, mask)
	what := fmt.Sprintf("global_unstructured(%s, amount=%v)", method, amount)
	out := make([]*Pruning, len(ts))
	at := 0
	for i, t := range ts {
		n := len(t.mask)
		out[i] = t.commit(op, final[at:at+n], what)
		at += n
	}
	return out
}

// pruneEntries returns mask with amount of its entries that are 1 set to
// 0 (torch's unstructured methods on the slice mask == 1): those of
// smallest |scores| for L1, of the largest uniform draws for Random.
func pruneEntries(op string, method Method, amount Amount, scores, mask []float64) []float64 {
	var live []int
	for i, v := range mask {
		if v == 1 {
			live = append(live, i)
		}
	}
	k := amount.of(op, len(live), "unpruned entries")
	out := slices.Clone(mask)
	if k == 0 {
		return out
	}
	var order []int
	if method == Random {
		order = rank(draws(len(live)), true)
	} else {
		vals := make([]float64, len(live))
		for j, i := range live {
			vals[j] = math.Abs(scores[i])
		}
		order = rank(vals, false)
	}
	for _, j := range order[:k] {
		out[live[j]] = 0
	}
	return out
}

// pruneChannels returns mask with the channels along dim that choose
// picks set to 0: choose gets the axis's size and the row-major stride of
// its index (inner), the channels not yet entirely zero (live, in order)
// and how many of them to prune, and returns those channels.
func pruneChannels(op string, amount Amount, shape []int, dim int, mask []float64, choose func(size, inner int, live []int, k int) []int) []float64 {
	if len(shape) < 2 {
		nd.Panicf(op, nd.ErrArgument, "structured pruning needs a parameter of two or more dimensions; this one has shape %v", shape)
	}
	if dim < -len(shape) || dim >= len(shape) {
		nd.Panicf(op, nd.ErrArgument, "dim %d is not an axis of a parameter of shape %v", dim, shape)
	}
	if dim < 0 {
		dim += len(shape)
	}
	size, inner := shape[dim], 1
	for _, d := range shape[dim+1:] {
		inner *= d
	}
	alive := make([]bool, size)
	for i, v := range mask {
		if v != 0 {
			alive[(i/inner)%size] = true
		}
	}
	var live []int
	for c, a := range alive {
		if a {
			live = append(live, c)
		}
	}
	k := amount.of(op, len(live), fmt.Sprintf("channels along dim %d", dim))
	out := slices.Clone(mask)
	if k == 0 {
		return out
	}
	pruned := make([]bool, size)
	for _, c := range choose(size, inner, live, k) {
		pruned[c] = true
	}
	for i := range out {
		if pruned[(i/inner)%size] {
			out[i] = 0
		}
	}
	return out
}

// channelNorms returns the Ln norm of each of the size channels of vals
// (channel (i/inner)%size holds entry i), as torch.norm(t, p=n) over the
// other axes.
func channelNorms(vals []float64, size, inner int, n float64) []float64 {
	acc := make([]float64, size)
	if math.IsInf(n, -1) {
		for c := range acc {
			acc[c] = math.Inf(1)
		}
	}
	for i, v := range vals {
		c, a := (i/inner)%size, math.Abs(v)
		switch {
		case math.IsNaN(v):
			acc[c] = math.NaN()
		case math.IsInf(n, 1):
			acc[c] = math.Max(acc[c], a)
		case math.IsInf(n, -1):
			acc[c] = math.Min(acc[c], a)
		case n == 0:
			if a != 0 {
				acc[c]++
			}
		case n == 1:
			acc[c] += a
		case n == 2:
			acc[c] += a * a
		default:
			acc[c] += math.Pow(a, n)
		}
	}
	for c, s := range acc {
		switch {
		case n == 2:
			acc[c] = math.Sqrt(s)
		case n != 0 && n != 1 && !math.IsInf(n, 0):
			acc[c] = math.Pow(s, 1/n)
		}
	}
	return acc
}

// rank returns the indices of vals ordered by value, ascending or
// (largestFirst) descending, NaN counting as the largest value and equal
// values in index order.
func rank(vals []float64, largestFirst bool) []int {
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := vals[i], vals[j]
		var c int
		switch an, bn := math.IsNaN(a), math.IsNaN(b); {
		case an && bn:
			c = 0
		case an:
			c = 1
		case bn:
			c = -1
		case a < b:
			c = -1
		case a > b:
			c = 1
		}
		if largestFirst {
			c = -c
		}
		return c
	})
	return idx
}

// pick returns the elements of from at the positions at.
func pick(from, at []int) []int {
	out := make([]int, len(at))
	for i, j := range at {
		out[i] = from[j]
	}
	return out
}

// draws returns n uniform draws in [0, 1) from nd's generator for cpu(0)
// (nd.Seed), as torch.rand draws from torch's.
func draws(n int) []float64 {
	a := nd.RandomUniform(ctx.CPU(0), nd.Float64, 0, 1, n)
	defer a.Release()
	return a.Float64s()
}

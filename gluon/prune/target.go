package prune

import (
	"slices"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// target is the parameter one pruning call acts on, read before anything
// changes: its mask now (ones when it is not pruned yet) and the values
// that rank its entries.
type target struct {
	meta   *gluon.BlockMeta
	name   string
	prev   *Pruning         // its pruning, or nil
	w      *gluon.Parameter // the block's parameter (derived when prev is set)
	shape  []int
	mask   []float64 // nil for a parameter whose values do not exist yet
	scores []float64 // the weight as the layer uses it: orig · mask
}

// resolve finds b's parameter name (default "weight") and reads it. With
// needValues, a parameter without values (its shape to be inferred) is an
// error.
func resolve(op string, b gluon.Component, name string, needValues bool) *target {
	if isNil(b) {
		nd.Panicf(op, nd.ErrArgument, "no block")
	}
	if name == "" {
		name = "weight"
	}
	m := b.Meta()
	for _, q := range m.Params() { // a pruning's own orig or mask is not pruned again
		if mi, ok := q.Init.(maskInit); ok && !mi.p.Removed() && (name == mi.p.name+"_orig" || name == mi.p.name+"_mask") {
			nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q belongs to the pruning of %q: prune %q itself", name, m.Name(), mi.p.name, mi.p.name)
		}
	}
	t := &target{meta: m, name: name}
	if t.prev = Of(b, name); t.prev != nil {
		t.w = t.prev.weight
		t.shape = t.prev.Orig.Shape()
		if !t.prev.Orig.Initialized() {
			if needValues {
				nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q (shape %v) has no values yet: initialise the network (and run a forward pass to infer its shape) before pruning it further", name, m.Name(), t.shape)
			}
			return t
		}
		t.scores = effective(t.prev)
		t.mask = host(t.prev.Mask.ListData()[0])
		return t
	}
	w := m.Param(name)
	if w == nil {
		var names []string
		for _, p := range m.Params() {
			names = append(names, p.LocalName())
		}
		nd.Panicf(op, nd.ErrArgument, "block %q has no parameter %q (its parameters: %s)", m.Name(), name, strings.Join(names, ", "))
	}
	if w.Derivation() != nil {
		nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q is derived (%v); prune the parameters it is made from", name, m.Name(), w.Derivation())
	}
	if n := w.Owners(); n > 1 {
		nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q is tied (%d blocks register it): pruning it through one block would leave the others holding a derived weight; untie it first", name, m.Name(), n)
	}
	if !w.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "parameter %q of block %q is %v: only floating-point parameters are pruned", name, m.Name(), w.DType())
	}
	t.w, t.shape = w, w.Shape()
	if !w.Initialized() {
		if needValues {
			nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q (shape %v) has no values yet: initialise the network (and run a forward pass to infer its shape) before pruning it, or prune it with Identity", name, m.Name(), t.shape)
		}
		return t
	}
	t.scores = host(w.ListData()[0])
	t.mask = make([]float64, len(t.scores))
	for i := range t.mask {
		t.mask[i] = 1
	}
	return t
}

// useScores makes scores, when given, rank the entries instead of the
// weight.
func (t *target) useScores(op string, scores *nd.NDArray) {
	if scores == nil {
		return
	}
	if !slices.Equal(scores.Shape(), t.shape) {
		nd.Panicf(op, nd.ErrShape, "importance scores of shape %v for %s of shape %v", scores.Shape(), t.name, t.shape)
	}
	if !scores.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "importance scores are %v: want a floating-point array", scores.DType())
	}
	t.scores = host(scores)
}

// commit gives the parameter mask as its pruning's mask, pruning it when
// it was not (with a nil mask, one of ones once its shape is known), and
// records the method. Everything that could fail was checked before.
func (t *target) commit(op string, mask []float64, method string) *Pruning {
	p := t.prev
	if p == nil {
		p = t.install(op, mask)
	} else if mask != nil {
		src := nd.FromSliceShaped(ctx.CPU(0), mask, t.shape) // 0-d stays 0-d
		p.Mask.SetData(src)
		src.Release()
	}
	p.mu.Lock()
	p.methods = append(p.methods, method)
	p.mu.Unlock()
	return p
}

// install puts <name>_orig (the weight's values, or initialised like it)
// and <name>_mask (mask, or ones once the shape is known) in the weight's
// place among the block's parameters and makes the weight their product.
func (t *target) install(op string, mask []float64) *Pruning {
	w := t.w
	p := &Pruning{meta: t.meta, weight: w, name: t.name}
	p.Orig = gluon.NewParameter(t.name+"_orig", t.shape...)
	p.Orig.Init = w.Init
	p.Orig.InitName = w.InitName
	if p.Orig.InitName == "" { // a pruned bias starts at zeros, as it would have
		p.Orig.InitName = w.LocalName()
	}
	p.Orig.SetDType(w.DType())
	p.Orig.SetGradReq(w.GradReq())
	p.Orig.LRMult, p.Orig.WDMult = w.LRMult, w.WDMult
	p.Orig.KeepFloat32 = w.KeepFloat32
	if w.Alias != "" { // a norm layer's gamma: torch's weight_orig and weight_mask
		p.Orig.Alias = w.Alias + "_orig"
	}
	p.Mask = gluon.NewParameter(t.name+"_mask", t.shape...)
	p.Mask.Init = maskInit{p}
	p.Mask.SetDType(w.DType())
	p.Mask.SetGradReq(nd.GradNull)
	p.Mask.Statistic = true
	p.Mask.LRMult, p.Mask.WDMult = 0, 0
	p.Mask.KeepFloat32 = w.KeepFloat32
	if w.Alias != "" {
		p.Mask.Alias = w.Alias + "_mask"
	}
	if w.Initialized() {
		initOrPanic(op, p.Orig.InitializeWith(w.ListData()[0], w.Contexts()))
		src := nd.FromSliceShaped(ctx.CPU(0), mask, t.shape)
		initOrPanic(op, p.Mask.InitializeWith(src, w.Contexts()))
		src.Release()
	} else {
		initOrPanic(op, p.Orig.InitializeLike(w))
		initOrPanic(op, p.Mask.InitializeLike(w))
	}
	w.SetDerivation(p)                     // before ReplaceParam: the block goes on naming w
	t.meta.ReplaceParam(w, p.Orig, p.Mask) // torch's order: <name>_orig, then <name>_mask
	return p
}

// effective returns orig · mask (the weight as the layer uses it) on the
// host, from the first replicas.
func effective(p *Pruning) []float64 {
	v := host(p.Orig.ListData()[0])
	for i, m := range host(p.Mask.ListData()[0]) {
		v[i] *= m
	}
	return v
}

// host returns a's values as float64 on the host.
func host(a *nd.NDArray) []float64 {
	if dt := a.DType(); dt == nd.Float64 || dt == nd.Float32 {
		return a.Float64s()
	}
	c := a.Detach().AsType(nd.Float64)
	defer c.Release()
	return c.Float64s()
}

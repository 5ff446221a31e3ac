// Package prune is PyTorch's torch.nn.utils.prune (1.13) for Goluon's
// blocks: magnitude, norm and random pruning of a layer's parameters,
// one parameter at a time or globally over several, in rounds that only
// ever take away more.
//
// Pruning a parameter "weight" of a block reparameterises it as PyTorch
// does: the block's parameters weight_orig (the values, trained by the
// optimizer) and weight_mask (0 and 1, a buffer the optimizer never
// touches) take the weight's place, and the layer's weight becomes a
// derived parameter (gluon.Derivation) whose value, computed at every read
// in the session of the layer's input, is
//
//	weight = weight_orig · weight_mask
//
// so that gradients reach weight_orig through the unmasked entries only,
// on every context, recorded or not, hybridized or not, and the pruned
// entries of the weight the layer uses stay exactly zero however
// weight_orig is trained. Remove makes the pruning permanent: the weight
// becomes a stored parameter again holding weight_orig · weight_mask.
//
// Every function names the parameter by the block and its local name, as
// torch's take a module and a name ("" means "weight"); the block is any
// gluon.Component that reads the parameter through Parameter.DataFor or
// Data (every layer of gluon/nn does).
//
// The names are torch's, so that the state dict of a network pruned in
// PyTorch (…weight_orig, …weight_mask) loads into the same network pruned
// here (with Identity, as torch's own recipe for loading one does), and
// the other way round; gluon's Save and Load keep the masks, and an ONNX
// export writes the weight as the layers use it, masked.
//
// # Amounts, rounding and order
//
// Amount is a Fraction in [0, 1] of the entries (or channels) still
// unpruned, rounded half to even as Python's round (round(0.5·5) = 2), or
// a Count of them. L1Unstructured prunes the entries of smallest |score|,
// LnStructured keeps the channels of largest Ln norm, as torch.topk picks
// them. Where importance values tie, torch's choice depends on its
// selection algorithm and is not documented; here it is fixed: among equal
// |scores| the entries of lower flat (row-major) index are pruned first,
// and among equal channel norms the channels of lower index are kept (NaN
// counts as the largest value, as in torch.topk). Inputs without ties give
// torch's masks exactly. Channel norms are computed in float64 on the
// host; torch computes them in the weight's dtype, so for float32 weights
// two channels whose norms agree to float32 rounding may be ordered
// differently.
//
// # Iterative pruning
//
// A second call on a pruned parameter combines its mask with the one
// there, as torch's PruningContainer does: unstructured methods choose
// among the entries whose mask is still 1, structured methods among the
// channels not yet entirely zero (a Fraction counts those), and both rank
// by the weight as the layer uses it (weight_orig · weight_mask) unless
// importance scores are given. Torch ranks by the weight its last forward
// pass computed, which is the same unless weight_orig changed since.
//
// # Errors
//
// As in gluon and gluon/nn (nn.ApplyWeightNorm), mistakes in a call panic
// with an *nd.Error before anything changes: an amount outside [0, 1] or
// negative (ErrArgument), a count above what is left to prune
// (ErrArgument), a parameter the block does not have (ErrArgument), a
// parameter or importance scores that are not floating-point (ErrDType;
// gluon makes every parameter floating-point, so in practice the scores),
// scores or masks of another shape (ErrShape), a mask holding other values
// than 0 and 1 (ErrArgument), a dim outside the weight's axes or
// structured pruning of a 0- or 1-D parameter (ErrArgument), a parameter
// whose values do not exist yet (ErrArgument: its shape is inferred at the
// first forward pass; only Identity prunes it before). nd.Catch turns them
// into errors. Remove returns an error for a parameter that is not pruned,
// as nn.WeightNorm.Remove does for one removed twice.
//
// # Training
//
// Prune a parameter for the first time before making the Trainer (or
// make a new one afterwards, as after nn.ApplyWeightNorm): the Trainer
// trains weight_orig. Later rounds only rewrite the mask, on every
// context, and need no new Trainer; a hybridized network sees them at its
// next call. Prune between training steps, not while another goroutine
// runs a pass through the block. A parameter tied to several blocks
// (Parameter.Owners above one) is refused with ErrArgument: the others
// would hold a derived weight they do not own; untie it first.
package prune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Amount is how much one pruning call takes away: a Fraction of the
// entries (or channels) still unpruned, or a Count of them (torch's float
// and int amounts). The zero Amount is Fraction(0), which prunes nothing.
type Amount struct {
	frac    float64
	count   int
	isCount bool
}

// Fraction is an Amount of f times the entries (or channels) still
// unpruned, rounded half to even as Python's round: f must be in [0, 1].
func Fraction(f float64) Amount { return Amount{frac: f} }

// Count is an Amount of n entries (or channels): n must be non-negative
// and at most the number still unpruned.
func Count(n int) Amount { return Amount{count: n, isCount: true} }

// String writes the amount as torch's argument: "0.3" for a Fraction
// (always with a decimal point or exponent), "7" for a Count.
func (a Amount) String() string {
	if a.isCount {
		return strconv.Itoa(a.count)
	}
	s := strconv.FormatFloat(a.frac, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") { // 0 and 1 read as fractions, not counts
		s += ".0"
	}
	return s
}

// check panics unless a is a valid amount (torch's
// _validate_pruning_amount_init).
func (a Amount) check(op string) {
	if a.isCount && a.count < 0 {
		nd.Panicf(op, nd.ErrArgument, "amount Count(%d): a count must be non-negative", a.count)
	}
	if !a.isCount && !(a.frac >= 0 && a.frac <= 1) {
		nd.Panicf(op, nd.ErrArgument, "amount Fraction(%g): a fraction must be in [0, 1]", a.frac)
	}
}

// of returns the number of units to prune out of n (torch's
// _compute_nparams_toprune and _validate_pruning_amount); what names the
// units in the error.
func (a Amount) of(op string, n int, what string) int {
	if !a.isCount {
		return int(math.RoundToEven(a.frac * float64(n)))
	}
	if a.count > n {
		nd.Panicf(op, nd.ErrArgument, "amount Count(%d) is more than the %d %s left to prune", a.count, n, what)
	}
	return a.count
}

// Pruning is the pruning of one parameter of a block, the
// gluon.Derivation of the block's weight: its value is Orig · Mask. It is
// what torch keeps as a forward pre-hook (a PruningContainer after several
// rounds); the pruning functions return it, Of finds it, and the layer's
// weight returns it from Derivation.
type Pruning struct {
	// Orig holds the values (torch's <name>_orig): trainable, as the
	// weight was. Mask is the mask (<name>_mask): 0 and 1 in the weight's
	// dtype, without gradient, marked gluon.Parameter.Statistic so that
	// nothing unfreezes or trains it.
	Orig, Mask *gluon.Parameter

	meta   *gluon.BlockMeta
	weight *gluon.Parameter // the block's own, now derived
	name   string

	mu      sync.Mutex
	methods []string
	removed bool
}

// InferShape completes Orig's and Mask's shapes from the weight's, as the
// layer infers it at the first forward pass (gluon.Derivation); only a
// parameter pruned with Identity before that has any to infer.
func (p *Pruning) InferShape(shape []int) {
	p.Orig.InferShape(shape...)
	p.Mask.InferShape(shape...)
}

// Value returns Orig · Mask on dev, computed in session s
// (gluon.Derivation: the session of the layer's input), recorded when it
// records, so that Orig's gradient is the weight's times the mask.
func (p *Pruning) Value(dev ctx.Context, s *nd.Session) *nd.NDArray {
	return nd.Mul(p.Orig.DataIn(dev, s), p.Mask.DataIn(dev, s))
}

// DType returns the weight's dtype, Orig's (it follows a gluon.Cast of the
// network).
func (p *Pruning) DType() nd.DType { return p.Orig.DType() }

// Name returns the pruned parameter's local name ("weight").
func (p *Pruning) Name() string { return p.name }

// String describes the derivation: "weight_orig * weight_mask".
func (p *Pruning) String() string { return p.name + "_orig * " + p.name + "_mask" }

// Methods returns the pruning rounds applied so far, oldest first, as
// torch's PruningContainer lists them: "l1_unstructured(amount=0.3)",
// "ln_structured(amount=2, n=2, dim=0)", ...
func (p *Pruning) Methods() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.methods...)
}

// Removed reports whether Remove made the pruning permanent.
func (p *Pruning) Removed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.removed
}

// Remove makes the pruning permanent (torch's prune.remove): the block's
// weight becomes a stored parameter again, holding Orig · Mask on Orig's
// contexts, in Orig's place among the block's parameters; Orig and Mask
// leave the block. The pruned entries stay zero but are trainable again.
// When Orig has no values yet the weight is left to be initialised as Orig
// would have been. Make a new Trainer afterwards. Removing twice is an
// error.
func (p *Pruning) Remove() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.removed {
		return fmt.Errorf("prune: Remove: parameter %q of block %q was already removed", p.name, p.meta.Name())
	}
	if own := p.meta.Params(); !slices.Contains(own, p.Orig) || !slices.Contains(own, p.Mask) {
		return fmt.Errorf("prune: Remove: parameter %q of block %q: %s or %s is no longer among the block's parameters", p.name, p.meta.Name(), p.Orig.LocalName(), p.Mask.LocalName())
	}
	w := p.weight
	err := nd.Catch(func() {
		var baked *nd.NDArray
		if p.Orig.Initialized() {
			baked = nd.FromSliceShaped(ctx.CPU(0), effective(p), p.Orig.Shape()) // 0-d stays 0-d
			defer baked.Release()
		}
		w.SetDerivation(nil)
		w.SetDType(p.Orig.DType())
		w.SetGradReq(p.Orig.GradReq())
		w.LRMult, w.WDMult = p.Orig.LRMult, p.Orig.WDMult
		if baked == nil {
			initOrPanic("prune.Remove", w.InitializeLike(p.Orig))
		} else {
			initOrPanic("prune.Remove", w.InitializeWith(baked, p.Orig.Contexts()))
		}
	})
	if err != nil {
		return fmt.Errorf("prune: Remove: parameter %q of block %q: %w", p.name, p.meta.Name(), err)
	}
	p.meta.ReplaceParam(p.Orig, w)
	p.meta.ReplaceParam(p.Mask)
	p.removed = true
	return nil
}

// Remove makes the pruning of b's parameter name permanent
// (Pruning.Remove). A parameter that is not pruned is an error.
func Remove(b gluon.Component, name string) error {
	if isNil(b) {
		return fmt.Errorf("prune: Remove: no block")
	}
	p := Of(b, name)
	if p == nil {
		return fmt.Errorf("prune: Remove: parameter %q of block %q is not pruned", name, b.Meta().Name())
	}
	return p.Remove()
}

// Of returns the pruning of b's own parameter name, or nil when it is not
// pruned (or its pruning was removed).
func Of(b gluon.Component, name string) *Pruning {
	if isNil(b) {
		return nil
	}
	if name == "" {
		name = "weight"
	}
	if m := b.Meta().Param(name + "_mask"); m != nil {
		if mi, ok := m.Init.(maskInit); ok && mi.p.name == name && mi.p.Mask == m && !mi.p.Removed() {
			return mi.p
		}
	}
	return nil
}

// IsPruned reports whether b or any block under it has a pruned parameter
// (torch's prune.is_pruned).
func IsPruned(b gluon.Component) bool {
	found := false
	walk(b, "", func(*Pruning, string) { found = true })
	return found
}

// walk calls f with every active pruning of b and the blocks under it,
// and the full name of its weight ("conv0.weight").
func walk(b gluon.Component, prefix string, f func(p *Pruning, full string)) {
	if isNil(b) {
		return
	}
	m := b.Meta()
	for _, q := range m.Params() {
		if mi, ok := q.Init.(maskInit); ok && mi.p.Mask == q && !mi.p.Removed() {
			f(mi.p, prefix+mi.p.name)
		}
	}
	for _, c := range m.Children() {
		walk(c, prefix+c.Meta().Name()+".", f)
	}
}

// maskInit initialises a mask with ones (a parameter pruned with Identity
// before its shape was known, or initialised again with force); it also
// leads from a block's mask parameter to its Pruning.
type maskInit struct{ p *Pruning }

// InitWeight fills data with ones.
func (maskInit) InitWeight(_ []int, data []float64, _ *rand.Rand) {
	for i := range data {
		data[i] = 1
	}
}

// initOrPanic turns an initialisation error into a panic.
func initOrPanic(op string, err error) {
	if err != nil {
		nd.Panicf(op, nd.ErrArgument, "%v", err)
	}
}

// isNil reports whether b is nil, or a nil pointer in an interface.
func isNil(b gluon.Component) bool {
	if b == nil {
		return true
	}
	v := reflect.ValueOf(b)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

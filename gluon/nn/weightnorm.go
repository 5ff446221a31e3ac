package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// WeightNormOpts configures ApplyWeightNorm.
type WeightNormOpts struct {
	// Name is the parameter to reparameterise (default "weight").
	Name string
	// Dim is the axis whose slices keep a magnitude each: 0 (the default)
	// gives one per output unit of a Dense or output channel of a
	// convolution (its weight's axis 0); -1 (PyTorch's dim=None) one for
	// the whole tensor.
	Dim int
}

// WeightNorm is the weight normalisation of one parameter of a layer
// (Salimans and Kingma, 2016; PyTorch's torch.nn.utils.weight_norm and
// parametrizations.weight_norm): the layer's weight w is computed at
// every read as
//
//	w = g · v / ‖v‖
//
// from a magnitude G and a direction V, the norm taken over every axis but
// Dim (over all of them for Dim -1), under autograd, so that the
// optimizer trains G and V. G has the weight's shape with every axis but
// Dim of size 1 (0-d for Dim -1), V the weight's shape.
//
// Parameter names. G and V take the weight's place among the layer's
// parameters as "<name>_g" and "<name>_v" (PyTorch's weight_norm state
// dict: dense0.weight_g, dense0.weight_v). Their Aliases are the names
// torch.nn.utils.parametrizations.weight_norm (PyTorch 2.1 and later)
// saves, "parametrizations.<name>.original0" (g) and ".original1" (v), so
// gluon's Load takes either kind of file.
type WeightNorm struct {
	// G is the magnitude and V the direction.
	G, V *gluon.Parameter

	meta   *gluon.BlockMeta
	weight *gluon.Parameter // the layer's own, now derived
	dim    int

	mu      sync.Mutex
	removed bool
}

// ApplyWeightNorm reparameterises the parameter o.Name of b (any block
// that reads its weight through Parameter.DataFor, or Data: Dense, the
// convolutions, Embedding, a block of one's own) as g·v/‖v‖ and returns the
// WeightNorm, which b's weight also returns from Derivation. b keeps its
// name and its other parameters; the weight is replaced by G and V (see
// WeightNorm).
//
// When the weight is initialised, V starts as its values and G as their
// norms, so that the layer computes what it did. When it is not, V is
// initialised as the weight would have been (its Init, or the network's
// initializer by the weight's name: a gamma's V starts at ones, a bias's
// at zeros) and G as V's norms, also for shapes inferred at
// the first forward pass. Apply it before making a Trainer for the
// network. The weight must be b's alone (not tied to another
// block's parameters, which would go on listing it). A name b does not have, a parameter already reparameterised
// or a Dim outside [-1, rank) panics with ErrArgument.
func ApplyWeightNorm(b gluon.Component, o WeightNormOpts) *WeightNorm {
	const op = "nn.ApplyWeightNorm"
	m := b.Meta()
	w, name := reparamFind(op, m, o.Name)
	shape := w.Shape()
	if o.Dim < -1 || o.Dim >= len(shape) {
		nd.Panicf(op, nd.ErrArgument, "dim %d for %s of shape %v: want -1 (the whole tensor) or an axis in [0, %d)", o.Dim, name, shape, len(shape))
	}
	wn := &WeightNorm{meta: m, weight: w, dim: o.Dim}
	wn.V = gluon.NewParameter(name+"_v", shape...)
	wn.V.Alias = "parametrizations." + name + ".original1"
	wn.V.Init = w.Init
	wn.V.InitName = reparamInitName(w)
	wn.G = gluon.NewParameter(name+"_g", wn.gShape(shape)...)
	wn.G.Alias = "parametrizations." + name + ".original0"
	wn.G.Init = wnNormInit{wn}
	for _, p := range []*gluon.Parameter{wn.V, wn.G} {
		p.SetDType(w.DType())
		p.LRMult, p.WDMult = w.LRMult, w.WDMult
	}
	reparamStart(op, wn.V, w)
	reparamInit(op, wn.G.InitializeLike(w)) // after V: its initializer reads V
	w.SetDerivation(wn)                     // before ReplaceParam: the block goes on naming w
	m.ReplaceParam(w, wn.V, wn.G)           // V first: G's initializer reads it
	return wn
}

// reparamFind finds the stored parameter called name (default "weight")
// among m's own.
func reparamFind(op string, m *gluon.BlockMeta, name string) (*gluon.Parameter, string) {
	if name == "" {
		name = "weight"
	}
	w := m.Param(name)
	if w == nil {
		nd.Panicf(op, nd.ErrArgument, "block %q has no parameter %q", m.Name(), name)
	}
	if w.Derivation() != nil {
		nd.Panicf(op, nd.ErrArgument, "parameter %q of block %q is already derived", name, m.Name())
	}
	return w, name
}

// reparamInitName is the name whose by-name initialisation rule the
// parameter taking w's place follows: w's own (its InitName when set), so
// that a reparameterised gamma starts at ones and a bias at zeros, as
// they would have.
func reparamInitName(w *gluon.Parameter) string {
	if w.InitName != "" {
		return w.InitName
	}
	return w.LocalName()
}

// reparamStart initialises p, which takes w's place, with w's values
// when it has them, else like w.
func reparamStart(op string, p, w *gluon.Parameter) {
	if w.Initialized() {
		reparamInit(op, p.InitializeWith(w.ListData()[0], w.Contexts()))
		return
	}
	reparamInit(op, p.InitializeLike(w))
}

// reparamInit turns an initialisation error into a panic.
func reparamInit(op string, err error) {
	if err != nil {
		nd.Panicf(op, nd.ErrArgument, "%v", err)
	}
}

// gShape is G's shape for a weight of the given shape.
func (w *WeightNorm) gShape(shape []int) []int {
	if w.dim < 0 {
		return []int{}
	}
	g := make([]int, len(shape))
	for i := range g {
		g[i] = 1
	}
	g[w.dim] = shape[w.dim]
	return g
}

// InferShape completes V's and G's shapes from the weight's, as the layer
// infers it (gluon.Derivation). When this materialises V, G is set to its
// norms.
func (w *WeightNorm) InferShape(shape []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ready := w.V.Initialized()
	w.V.InferShape(shape...)
	w.G.InferShape(w.gShape(shape)...)
	if !ready && w.V.Initialized() && w.G.Initialized() {
		reparamSetHost(w.G, wnSliceNorms(w.V.ListData()[0].Float64s(), shape, w.dim))
	}
}

// DType returns the weight's dtype, V's (the layer's weight reports it:
// gluon.Parameter.DType).
func (w *WeightNorm) DType() nd.DType { return w.V.DType() }

// Value returns g·v/‖v‖ on dev, computed in session s (gluon.Derivation:
// the session of the layer's input), recorded when it records.
func (w *WeightNorm) Value(dev ctx.Context, s *nd.Session) *nd.NDArray {
	v, g := w.V.DataIn(dev, s), w.G.DataIn(dev, s)
	return nd.Mul(v, nd.Div(g, wnNormExceptDim(v, w.dim)))
}

// wnNormExceptDim is v's L2 norm over every axis but dim, keeping them with
// size 1 (over all of them, 0-d, for dim -1).
func wnNormExceptDim(v *nd.NDArray, dim int) *nd.NDArray {
	if dim < 0 {
		return nd.Norm(v, 2)
	}
	var axes []int
	for i := range v.NDim() {
		if i != dim {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 { // a 1-D weight: each element is its own slice
		return nd.Abs(v)
	}
	return nd.NormKeepDims(v, 2, axes...)
}

// Remove bakes the weight back in (PyTorch's remove_weight_norm): the
// layer's weight becomes a stored parameter again, holding g·v/‖v‖ on
// G's and V's contexts, in their place among the layer's parameters. When
// V is not materialised yet, the weight is left to be initialised like V
// would have been. Make a new Trainer afterwards. Removing twice is an
// error.
func (w *WeightNorm) Remove() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.removed {
		return fmt.Errorf("nn: WeightNorm.Remove: %s of %q was already removed", w.weight.LocalName(), w.meta.Name())
	}
	var baked *nd.NDArray
	if w.V.Initialized() {
		if err := nd.Catch(func() {
			v, g := w.V.ListData()[0].Detach(), w.G.ListData()[0].Detach()
			baked = nd.Mul(v, nd.Div(g, wnNormExceptDim(v, w.dim)))
		}); err != nil {
			return fmt.Errorf("nn: WeightNorm.Remove: %w", err)
		}
	}
	if err := reparamRestore(w.meta, w.weight, baked, w.V, w.G); err != nil {
		return err
	}
	w.removed = true
	return nil
}

// reparamRestore makes weight a stored parameter again, in the place of params
// (the first of which it is initialised like), holding baked; when baked
// is nil the weight is left to be initialised as params[0] would have
// been.
func reparamRestore(m *gluon.BlockMeta, weight *gluon.Parameter, baked *nd.NDArray, params ...*gluon.Parameter) error {
	like := params[0]
	weight.SetDerivation(nil)
	err := nd.Catch(func() {
		if baked == nil {
			weight.SetDType(like.DType()) // a Cast since: its dtype is like's
			reparamInit("nn.Remove", weight.InitializeLike(like))
			return
		}
		weight.SetDType(baked.DType())
		reparamInit("nn.Remove", weight.InitializeWith(baked, like.Contexts()))
	})
	if err != nil {
		return fmt.Errorf("nn: removing the derivation of %s: %w", weight.LocalName(), err)
	}
	m.ReplaceParam(like, weight)
	for _, p := range params[1:] {
		m.ReplaceParam(p)
	}
	return nil
}

// reparamSetHost writes float64 host values into every replica of p.
func reparamSetHost(p *gluon.Parameter, vals []float64) {
	src := nd.FromSliceShaped(ctx.CPU(0), vals, p.Shape()) // 0-d stays 0-d
	p.SetData(src)
	src.Release()
}

// wnNormInit initialises G as the norms of V's values (ones while V has
// none).
type wnNormInit struct{ w *WeightNorm }

// InitWeight fills data with the norms of V's first replica.
func (i wnNormInit) InitWeight(shape []int, data []float64, _ *rand.Rand) {
	v := i.w.V
	if !v.Initialized() {
		for j := range data {
			data[j] = 1
		}
		return
	}
	copy(data, wnSliceNorms(v.ListData()[0].Float64s(), v.Shape(), i.w.dim))
}

// wnSliceNorms returns the L2 norms, in float64, of vals (row-major, of the
// given shape) over every axis but dim: one per index of dim, or one for
// dim -1.
func wnSliceNorms(vals []float64, shape []int, dim int) []float64 {
	if dim < 0 {
		var s float64
		for _, x := range vals {
			s += x * x
		}
		return []float64{math.Sqrt(s)}
	}
	inner := 1
	for _, d := range shape[dim+1:] {
		inner *= d
	}
	n := shape[dim]
	out := make([]float64, n)
	for j, x := range vals {
		out[(j/inner)%n] += x * x
	}
	for j := range out {
		out[j] = math.Sqrt(out[j])
	}
	return out
}

package gluon

import (
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Derivation computes a parameter's value from other parameters each time
// a layer reads it, the way PyTorch's parametrizations recompute
// module.weight: nn.ApplyWeightNorm and nn.ApplySpectralNorm install one
// on a layer's weight. InferShape learns the shape the layer infers from
// its first input, so that the parameters it is made from can be
// materialised.
//
// Value runs the ops that make the value on dev for the ops of session s:
// the session of the input the layer reads the parameter for
// (Parameter.DataFor), or nil for a read without one (Parameter.Data),
// which means the session ops on neutral arrays run in on the calling
// goroutine. It reads the parameters it is made from with
// Parameter.DataIn(dev, s), so that its ops run in s — recorded when s
// records, so that gradients reach those parameters — and takes its mode
// (training or predict) from s, as Dropout and BatchNorm take theirs from
// their input's session.
type Derivation interface {
	InferShape(shape []int)
	Value(dev ctx.Context, s *nd.Session) *nd.NDArray
}

// DataFor returns the parameter's value for a layer's input x: the
// replica on x's context, or, for a derived parameter (SetDerivation),
// its Derivation's value computed on x's context in x's session. Layers
// read their parameters with it, so that a goroutine working on the
// arrays of a session of its own (nd.NewSession; a plain go statement
// inside s.Record, say) derives the weight in that session: recorded when
// it records, in its training or predict mode. Data(dev) serves reads
// without an input.
func (p *Parameter) DataFor(x *nd.NDArray) *nd.NDArray {
	if d := p.Derivation(); d != nil {
		return d.Value(x.Context(), x.Session())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replica("gluon.Parameter.DataFor", x.Context())
}

// DataIn returns the parameter's value on dev for the ops of session s,
// as a Derivation reads the parameters it is made from: a derived
// parameter's Value(dev, s); a stored parameter's replica, as a view that
// belongs to s (nd.Session.Use, through which gradients reach the
// replica) when s is a session of its own, since ops on parameters alone
// would otherwise run in the default session. With a nil s, or the
// default or persistent session, it is Data(dev).
func (p *Parameter) DataIn(dev ctx.Context, s *nd.Session) *nd.NDArray {
	if d := p.Derivation(); d != nil {
		return d.Value(dev, s)
	}
	a := p.Data(dev)
	if s == nil || s == nd.DefaultSession() || s == nd.PersistentSession() {
		return a
	}
	return s.Use(a)
}

// derivationBox holds a Derivation in an atomic pointer.
type derivationBox struct{ d Derivation }

// SetDerivation makes p a derived parameter: from now on Data(dev)
// returns d.Value(dev, nil), DataFor(x) d.Value(x.Context(), x.Session())
// and InferShape passes the shape to d.InferShape.
// Its own replicas, if it had any, are released: copy their values
// first. A derived parameter is not meant to be collected (take it out of
// its block with BlockMeta.ReplaceParam): the Trainer, Save and the
// other users of ListData see stored parameters only. SetDerivation(nil)
// makes p a stored parameter again, without replicas (Initialize it).
func (p *Parameter) SetDerivation(d Derivation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d == nil {
		p.derive.Store(nil)
		return
	}
	for _, a := range p.data {
		a.Release()
	}
	p.data, p.devs, p.deferred, p.pending = nil, nil, false, nil
	p.replicas.Add(1)
	p.derive.Store(&derivationBox{d})
}

// Derivation returns p's Derivation, or nil for a stored parameter. A
// program that did not keep the handle nn.ApplyWeightNorm returned finds
// it here: layer.Weight.Derivation().(*nn.WeightNorm).Remove().
func (p *Parameter) Derivation() Derivation {
	if b := p.derive.Load(); b != nil {
		return b.d
	}
	return nil
}

// inferDerived records the shape a layer infers for a derived parameter
// and passes it on to its Derivation.
func (p *Parameter) inferDerived(d Derivation, shape []int) {
	p.mu.Lock()
	if len(shape) != len(p.shape) || !shapeFits(p.shape, shape) {
		p.mu.Unlock()
		nd.Panicf("gluon.Parameter.InferShape", nd.ErrShape, "parameter %s has shape %v but the input needs %v", p.name, p.shape, shape)
	}
	p.shape = slices.Clone(shape)
	p.mu.Unlock()
	d.InferShape(shape)
}

// LocalName returns the parameter's name within its block ("weight"),
// which CollectParams prefixes with the block's path.
func (p *Parameter) LocalName() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.local
}

// InitializeLike initialises p like src, a parameter it takes the place
// of: on the contexts src was initialised on, with the initializer src was
// given (p's own Init, when set, wins), deferred while p's shape is
// unknown. When src was never initialised it does nothing: p is
// initialised with the rest of its network. (To start from src's values
// instead, use InitializeWith.)
func (p *Parameter) InitializeLike(src *Parameter) error {
	src.mu.Lock()
	devs, init := slices.Clone(src.devs), src.pending
	src.mu.Unlock()
	if len(devs) == 0 {
		return nil
	}
	return p.Initialize(init, devs, true)
}

// InitializeWith creates p's replicas on devs as copies of src (on any
// context; converted to p's dtype) instead of drawing initial values,
// replacing any it had. src's shape must fit p's (unknown dimensions
// take src's); anything else is an error, as are bad contexts.
func (p *Parameter) InitializeWith(src *nd.NDArray, devs []ctx.Context) error {
	if len(devs) == 0 {
		return errorf("parameter %s: no contexts to initialise on", p.Name())
	}
	if err := ctx.Check(devs...); err != nil {
		return errorf("parameter %s: %v", p.Name(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	shape := src.Shape()
	if len(shape) != len(p.shape) || !shapeFits(p.shape, shape) {
		return errorf("parameter %s has shape %v, cannot initialise it with %v", p.name, p.shape, shape)
	}
	data := make([]*nd.NDArray, len(devs))
	if err := nd.Catch(func() {
		for i, d := range devs {
			a := nd.PersistentSession().Zeros(d, p.dtype, shape...)
			nd.Assign(a, src)
			a.AttachGrad(p.gradReq)
			data[i] = a
		}
	}); err != nil {
		for _, a := range data {
			a.Release()
		}
		return errorf("parameter %s: %v", p.name, err)
	}
	for _, a := range p.data {
		a.Release()
	}
	p.shape, p.devs, p.data, p.deferred = slices.Clone(shape), slices.Clone(devs), data, false
	p.version.Add(1)
	p.replicas.Add(1)
	return nil
}

// Param returns the block's own parameter with the given local name, or
// nil.
func (m *BlockMeta) Param(local string) *Parameter {
	for _, p := range m.params {
		if p.LocalName() == local {
			return p
		}
	}
	return nil
}

// ReplaceParam puts with in the place of old among the block's own
// parameters, in that order (with none, old is removed), and returns
// with. It panics with ErrArgument when old is not one of them. A
// hybridized network collects its parameters again at its next call.
// When old is derived (SetDerivation before ReplaceParam), CollectParams
// goes on giving it its full name ("dense0.weight"), which an ONNX export
// writes its value under, without listing it, while it stays derived.
func (m *BlockMeta) ReplaceParam(old *Parameter, with ...*Parameter) []*Parameter {
	i := slices.Index(m.params, old)
	if i < 0 {
		nd.Panicf("gluon.ReplaceParam", nd.ErrArgument, "%s has no parameter %s", m.name, old.Name())
	}
	m.params = slices.Concat(m.params[:i:i], with, m.params[i+1:])
	old.owners.Add(-1)
	for _, p := range with {
		p.owners.Add(1)
	}
	m.replaced = slices.DeleteFunc(m.replaced, func(p *Parameter) bool {
		return p == old || slices.Contains(with, p) || p.Derivation() == nil
	})
	if old.Derivation() != nil && !slices.Contains(with, old) {
		m.replaced = append(m.replaced, old)
	}
	structureGen.Add(1)
	return with
}

package gluon

import (
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// Parameter is a learnable (or, with GradNull, tracked) array with one
// replica per context. Replicas start equal and are kept equal by the
// Trainer. Dimensions given as 0 are unknown until the first forward pass
// infers them (deferred initialisation, as in Gluon).
type Parameter struct {
	// LRMult and WDMult scale the optimizer's learning rate and weight
	// decay for this parameter. NewParameter sets both to 1; 0 freezes the
	// parameter or disables its weight decay (as Gluon's lr_mult/wd_mult).
	LRMult, WDMult float64
	// Init, when set, initialises this parameter instead of the
	// initializer passed to Initialize (layers set it for biases).
	Init initializer.Initializer
	// InitName, when set, is the name the by-name initialisation rules
	// read instead of the parameter's own (initializer.Fill: a name
	// ending in bias or beta starts at zeros, gamma at ones) when Init is
	// not set: a parameter that takes another's place starts as that one
	// would have (nn.ApplyWeightNorm on a LayerNorm's gamma makes gamma_v,
	// which starts at ones as gamma does).
	InitName string
	// Alias is another local name the parameter goes by in other
	// frameworks' files: a norm layer's gamma and beta are PyTorch's
	// weight and bias. Load falls back to it when a file lacks the
	// parameter's own name, so a torch state_dict loads as it is.
	Alias string
	// KeepFloat32 keeps the parameter in float32 when Cast asks for a
	// half-precision dtype: BatchNorm's scale, shift and running
	// statistics, as Gluon's BatchNorm.cast keeps them.
	KeepFloat32 bool
	// Statistic marks a value that forward passes compute rather than a
	// weight that is learned (BatchNorm's running statistics; Gluon's
	// differentiable=False): it keeps GradNull, and a Trainer does not
	// count workers holding different values of it as an error, since it
	// enters no gradient of a training-mode pass.
	Statistic bool

	mu       sync.Mutex
	local    string // name within its block ("weight")
	name     string // full name once collected ("conv0.weight")
	shape    []int
	dtype    nd.DType
	gradReq  nd.GradReq
	devs     []ctx.Context
	data     []*nd.NDArray // aligned with devs
	pending  initializer.Initializer
	explicit bool // pending is the parameter's own Init: no by-name rules
	deferred bool // Initialize was called but the shape is not known yet

	// version counts the writes of the replicas' values through the
	// Parameter (initialisation, SetData, Cast, ResetContext): a Trainer
	// re-seeds the float32 master copies of half-precision weights when
	// it changed since their last update.
	version atomic.Uint64
	// replicas counts the replacements of the replica arrays themselves
	// (p.data and p.devs): a HybridBlock reuses the arrays it looked up
	// while it is unchanged.
	replicas atomic.Uint64

	// bucketOwner is the Trainer whose gradient buckets hold the
	// parameter's gradients now (the last one to pack them, at its
	// creation or its step); the hooks of any other Trainer leave the
	// parameter alone.
	bucketOwner atomic.Pointer[Trainer]

	// derive, when set, computes the parameter's value (derived.go).
	derive atomic.Pointer[derivationBox]
	// owners counts the blocks that register the parameter as their own
	// (AddParam, ReplaceParam): more than one for tied weights.
	owners atomic.Int32
}

// Owners returns how many blocks register p as their own parameter (more
// than one: a weight tied between layers).
func (p *Parameter) Owners() int { return int(p.owners.Load()) }

// NewParameter returns a float32 parameter of the given shape (0 marks a
// dimension to be inferred) that wants gradients written (GradWrite).
func NewParameter(name string, shape ...int) *Parameter {
	return &Parameter{LRMult: 1, WDMult: 1, local: name, name: name, shape: slices.Clone(shape), dtype: nd.Float32, gradReq: nd.GradWrite}
}

// Name returns the parameter's name: its local name ("weight") until a
// ParamDict collects it, then its full name ("conv0.weight").
func (p *Parameter) Name() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.name
}

// Rename changes the parameter's local name (its last name component)
// before CollectParams names it, keeping the old one as its Alias so that
// files with either name load: a model that follows another framework's
// names (PyTorch calls a norm layer's gamma "weight") renames them.
func (p *Parameter) Rename(local string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if local == p.local {
		return
	}
	p.Alias, p.local = p.local, local
}

func (p *Parameter) setName(n string) {
	p.mu.Lock()
	p.name = n
	p.mu.Unlock()
}

// Shape returns the shape, with 0 for dimensions not inferred yet.
func (p *Parameter) Shape() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.shape)
}

// DType returns the element type. A derived parameter (SetDerivation)
// returns its Derivation's when that has a DType method (nn.WeightNorm's
// is V's, so it follows a Cast of the network).
func (p *Parameter) DType() nd.DType {
	if d, ok := p.Derivation().(interface{ DType() nd.DType }); ok {
		return d.DType()
	}
	return p.dtype
}

// SetDType changes the element type; it must be called before Initialize.
func (p *Parameter) SetDType(dt nd.DType) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.data != nil {
		nd.Panicf("gluon.Parameter.SetDType", nd.ErrArgument, "parameter %s is already initialised", p.name)
	}
	if !dt.IsFloat() {
		nd.Panicf("gluon.Parameter.SetDType", nd.ErrDType, "parameter %s: %v; parameters have a floating-point dtype", p.name, dt)
	}
	p.dtype = dt
}

// GradReq returns how gradients are stored (write, add or null).
func (p *Parameter) GradReq() nd.GradReq {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gradReq
}

// SetGradReq changes how gradients are stored on every replica.
func (p *Parameter) SetGradReq(req nd.GradReq) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gradReq = req
	for _, d := range p.data {
		d.SetGradReq(req)
	}
}

func known(shape []int) bool {
	for _, s := range shape {
		if s <= 0 {
			return false
		}
	}
	return true
}

// Initialize creates one replica on each context, all with the same
// initial values. When the shape is not fully known yet, initialisation
// is deferred to the first forward pass. Initialising an initialised
// parameter is an error unless force is set.
func (p *Parameter) Initialize(init initializer.Initializer, devs []ctx.Context, force bool) error {
	if len(devs) == 0 {
		return errorf("parameter %s: no contexts to initialise on", p.Name())
	}
	if err := ctx.Check(devs...); err != nil {
		return errorf("parameter %s: %v", p.Name(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if (p.data != nil || p.deferred) && !force {
		return errorf("parameter %s is already initialised; pass force to re-initialise", p.name)
	}
	p.explicit = p.Init != nil
	if p.explicit {
		init = p.Init
	}
	if init == nil {
		init = initializer.Uniform{Scale: 0.07}
	}
	p.devs = slices.Clone(devs)
	p.pending = init
	p.data = nil
	p.replicas.Add(1)
	p.deferred = !known(p.shape)
	if !p.deferred {
		if err := nd.Catch(p.materialise); err != nil {
			p.devs, p.deferred = nil, false
			p.replicas.Add(1)
			return errorf("parameter %s: %v", p.name, err)
		}
	}
	return nil
}

// materialise computes the initial values on the host and creates the
// replicas. p.mu must be held.
func (p *Parameter) materialise() {
	n := 1
	for _, s := range p.shape {
		n *= s
	}
	vals := make([]float64, n)
	if p.explicit { // a parameter's own initializer applies as it is (MXNet)
		p.pending.InitWeight(p.shape, vals, initRNG(p.name))
	} else {
		name := p.name
		if p.InitName != "" {
			name = p.InitName
		}
		initializer.Fill(p.pending, name, p.shape, vals, initRNG(p.name))
	}
	var host any = vals
	if p.dtype != nd.Float64 { // float32, or through float32 to half precision
		f := make([]float32, n)
		for i, v := range vals {
			f[i] = float32(v)
		}
		host = f
	}
	p.data = make([]*nd.NDArray, len(p.devs))
	for i, d := range p.devs {
		a := nd.PersistentSession().FromSliceShaped(d, host, p.shape) // 0-d stays 0-d (a whole-tensor norm's scale)
		if p.dtype.IsHalf() {
			h := nd.PersistentSession().Zeros(d, p.dtype, p.shape...)
			nd.Assign(h, a)
			a.Release()
			a = h
		}
		a.AttachGrad(p.gradReq)
		p.data[i] = a
	}
	p.deferred = false
	p.version.Add(1)
	p.replicas.Add(1)
}

// initRNG derives the generator of one parameter from the global seed and
// its name.
func initRNG(name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(nd.CurrentSeed(), h.Sum64()))
}

// InferShape completes a deferred parameter once a layer knows its
// shape from the first input: dimensions that were 0 take the given
// values, and the replicas are created, with initial values derived from
// the seed in force now (nd.Seed) and the parameter's full name. It is
// safe to call from several
// goroutines; only the first call initialises. A shape that contradicts a
// known dimension panics. A derived parameter (SetDerivation) records the
// shape and passes it to its Derivation.
func (p *Parameter) InferShape(shape ...int) {
	if d := p.Derivation(); d != nil {
		p.inferDerived(d, shape)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(shape) != len(p.shape) {
		nd.Panicf("gluon.Parameter.InferShape", nd.ErrShape, "parameter %s has shape %v, cannot infer %v", p.name, p.shape, shape)
	}
	for i, s := range p.shape {
		if s > 0 && s != shape[i] {
			nd.Panicf("gluon.Parameter.InferShape", nd.ErrShape, "parameter %s has shape %v but the input needs %v", p.name, p.shape, shape)
		}
	}
	if !p.deferred {
		return
	}
	p.shape = slices.Clone(shape)
	p.materialise()
}

// Initialized reports whether the replicas exist.
func (p *Parameter) Initialized() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.data != nil
}

// Data returns the replica on dev. It panics with a context error naming
// the parameter and its contexts when the parameter does not live on dev,
// and with an argument error when it is not initialised. A derived
// parameter (SetDerivation) returns its Derivation's value instead,
// computed in the session ops on neutral arrays run in on the calling
// goroutine; a layer reads its parameters with DataFor, which computes it
// in its input's session.
func (p *Parameter) Data(dev ctx.Context) *nd.NDArray {
	if d := p.Derivation(); d != nil {
		return d.Value(dev, nil)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replica("gluon.Parameter.Data", dev)
}

// mustInit panics unless the replicas exist. p.mu must be held.
func (p *Parameter) mustInit(op string) {
	if p.data != nil {
		return
	}
	if p.deferred {
		nd.Panicf(op, nd.ErrArgument, "parameter %s (shape %v) is not initialised yet: its shape is inferred at the first forward pass", p.name, p.shape)
	}
	nd.Panicf(op, nd.ErrArgument, "parameter %s is not initialised: call Initialize first", p.name)
}

func (p *Parameter) replica(op string, dev ctx.Context) *nd.NDArray {
	p.mustInit(op)
	for i, d := range p.devs {
		if d == dev {
			return p.data[i]
		}
	}
	nd.Panicf(op, nd.ErrContext, "parameter %s lives on %v, not on %v; initialise it on every context the batch is split over", p.name, p.devs, dev)
	return nil
}

// replicaIfReady returns the replica on dev, or false when the parameter
// is not initialised or does not live on dev.
func (p *Parameter) replicaIfReady(dev ctx.Context) (*nd.NDArray, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.data == nil {
		return nil, false
	}
	for i, d := range p.devs {
		if d == dev {
			return p.data[i], true
		}
	}
	return nil, false
}

// Grad returns the gradient of the replica on dev (nil with GradNull).
func (p *Parameter) Grad(dev ctx.Context) *nd.NDArray {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replica("gluon.Parameter.Grad", dev).Grad()
}

// Contexts returns the contexts the parameter lives on, in order.
func (p *Parameter) Contexts() []ctx.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.devs)
}

// ListData returns the replicas in context order.
func (p *Parameter) ListData() []*nd.NDArray {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mustInit("gluon.Parameter.ListData")
	return slices.Clone(p.data)
}

// ListGrad returns the replicas' gradients in context order.
func (p *Parameter) ListGrad() []*nd.NDArray {
	data := p.ListData()
	out := make([]*nd.NDArray, len(data))
	for i, d := range data {
		out[i] = d.Grad()
	}
	return out
}

// ZeroGrad sets every replica's gradient to zero.
func (p *Parameter) ZeroGrad() {
	t := p.bucketOwner.Load()
	if t != nil {
		t.waitSumOf(p)
	}
	p.mu.Lock()
	for _, d := range p.data {
		if g := d.Grad(); g != nil {
			nd.FillInPlace(g, 0)
		}
	}
	p.mu.Unlock()
	if t != nil {
		t.zeroed(p)
	}
}

// SetData copies src (on any context) into every replica. On a deferred
// parameter it also fixes the unknown dimensions from src's shape. Using
// it before Initialize, or with a shape that contradicts a known
// dimension, panics.
func (p *Parameter) SetData(src *nd.NDArray) {
	const op = "gluon.Parameter.SetData"
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.data == nil && !p.deferred {
		nd.Panicf(op, nd.ErrArgument, "parameter %s is not initialised: call Initialize (with its contexts) first", p.name)
	}
	if !shapeFits(p.shape, src.Shape()) || !known(src.Shape()) {
		nd.Panicf(op, nd.ErrShape, "parameter %s has shape %v, cannot set it from %v", p.name, p.shape, src.Shape())
	}
	if p.data == nil {
		p.shape = src.Shape()
		p.materialise()
	}
	for _, d := range p.data {
		nd.Assign(d, src)
	}
	p.version.Add(1)
}

// ResetContext moves the parameter to another set of contexts, keeping
// its values (taken from the first replica). A Trainer that has stepped
// the parameter refuses to go on after the move: make a new one (its
// SaveStates and LoadStates carry the optimizer state over).
func (p *Parameter) ResetContext(devs []ctx.Context) error {
	if err := ctx.Check(devs...); err != nil {
		return errorf("parameter %s: %v", p.Name(), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(devs) == 0 {
		return errorf("parameter %s: no contexts", p.name)
	}
	if p.data == nil {
		p.devs = slices.Clone(devs)
		p.replicas.Add(1)
		return nil
	}
	src := p.data[0]
	data := make([]*nd.NDArray, len(devs))
	for i, d := range devs {
		data[i] = nd.PersistentSession().CopyOf(src, d)
		data[i].AttachGrad(p.gradReq)
	}
	p.devs, p.data = slices.Clone(devs), data
	p.version.Add(1)
	p.replicas.Add(1)
	return nil
}

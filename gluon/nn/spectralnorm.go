package nn

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// SpectralNormOpts configures ApplySpectralNorm. Zero values take
// PyTorch's defaults.
type SpectralNormOpts struct {
	// Name is the parameter to normalise (default "weight").
	Name string
	// Iterations is the number of power iterations each training-mode
	// read runs (default 1).
	Iterations int
	// Eps keeps the normalisations of the power iteration finite
	// (default 1e-12).
	Eps float64
	// Dim is the axis of the weight that becomes the rows of the matrix
	// whose largest singular value is divided out; nil means 1 for the
	// transposed convolutions (whose weights are [in, out, ...]) and 0
	// otherwise, as PyTorch's spectral_norm chooses.
	Dim *int
}

// SpectralNorm is the spectral normalisation of one parameter of a layer
// (Miyato et al., 2018; PyTorch's
// torch.nn.utils.parametrizations.spectral_norm): the layer's weight is
// computed at every read as
//
//	w = W / σ,  σ = uᵀ·M·v
//
// where M is W as a matrix (axis Dim first, the others flattened) and u
// and v approximate its first left and right singular vectors. In
// training mode each read first runs Iterations steps of the power method
// (u ← normalize(M·v), then v ← normalize(Mᵀ·u)), updating U and V in
// place on the read's context; in predict mode they are used as they are.
// The gradient flows to W through both W and σ, with u and v held
// constant, as in PyTorch. A one-dimensional weight is divided by its
// norm instead, without U and V.
//
// U and V are statistics, like a BatchNorm's running mean: GradNull,
// saved and loaded with the weights, one replica per context, each
// updated by the reads on its own context. Their replicas stay equal
// across contexts as long as every context runs the same number of
// training-mode passes (as data-parallel training does), since their
// update depends on the weight alone.
//
// Initial values: U and V are drawn from a normal distribution with a
// generator derived from nd's seed (nd.Seed) and the weight's full name,
// normalised, and refined by 15 power iterations on the initial weight,
// as PyTorch does at registration. SetData on U and V sets them exactly.
//
// Parameter names. The weight's place among the layer's parameters is
// taken by "<name>_orig", "<name>_u" and "<name>_v", the names of
// PyTorch's torch.nn.utils.spectral_norm state dict; their Aliases are
// those of torch.nn.utils.parametrizations.spectral_norm,
// "parametrizations.<name>.original", "parametrizations.<name>.0._u" and
// "parametrizations.<name>.0._v", so that gluon's Load takes either kind
// of file. (The older spectral_norm iterates v before u; the values mean
// the same.)
type SpectralNorm struct {
	// Orig is the weight before normalisation; U ([rows]) and V
	// ([columns]) are the power method's vectors (nil for a
	// one-dimensional weight).
	Orig, U, V *gluon.Parameter

	meta   *gluon.BlockMeta
	weight *gluon.Parameter // the layer's own, now derived
	dim    int
	iters  int
	eps    float64
	ndim   int

	mu      sync.Mutex
	removed bool
}

// ApplySpectralNorm normalises the parameter o.Name of b (any block that
// reads its weight through Parameter.DataFor, or Data) by its largest
// singular value and returns the SpectralNorm, which b's weight also
// returns from Derivation. The weight is replaced by Orig, U and V (see
// SpectralNorm); an initialised weight's values move to Orig, and an
// uninitialised one's place is taken by an Orig initialised as it would
// have been (its Init, or the network's initializer by its name's rule).
// The power method runs when the session of the layer's input trains
// (Parameter.DataFor). Apply it before making a Trainer for the network.
// The weight must be b's alone (not tied to another block's parameters,
// which would go on listing it). A name b does not have, a parameter
// already derived, a Dim outside the weight's axes or a negative
// Iterations or Eps panics with ErrArgument.
func ApplySpectralNorm(b gluon.Component, o SpectralNormOpts) *SpectralNorm {
	const op = "nn.ApplySpectralNorm"
	m := b.Meta()
	w, name := reparamFind(op, m, o.Name)
	shape := w.Shape()
	sn := &SpectralNorm{meta: m, weight: w, iters: o.Iterations, eps: o.Eps, ndim: len(shape)}
	if sn.iters == 0 {
		sn.iters = 1
	}
	if sn.eps == 0 {
		sn.eps = 1e-12
	}
	if o.Dim != nil {
		sn.dim = *o.Dim
	} else if transposedConv(b) {
		sn.dim = 1
	}
	if sn.dim < 0 {
		sn.dim += len(shape)
	}
	if sn.iters < 0 || sn.eps < 0 || len(shape) == 0 || sn.dim < 0 || sn.dim >= len(shape) {
		nd.Panicf(op, nd.ErrArgument, "%s of shape %v with dim %d, %d iterations, eps %g: want an axis of the weight and positive counts", name, shape, sn.dim, o.Iterations, o.Eps)
	}
	sn.Orig = gluon.NewParameter(name+"_orig", shape...)
	sn.Orig.Alias = "parametrizations." + name + ".original"
	sn.Orig.Init = w.Init
	sn.Orig.InitName = reparamInitName(w)
	sn.Orig.SetDType(w.DType())
	sn.Orig.LRMult, sn.Orig.WDMult = w.LRMult, w.WDMult
	reparamStart(op, sn.Orig, w)
	params := []*gluon.Parameter{sn.Orig}
	if sn.ndim > 1 {
		rows, cols := sn.matrixShape(shape)
		sn.U = gluon.NewParameter(name+"_u", rows)
		sn.U.Alias = "parametrizations." + name + ".0._u"
		sn.V = gluon.NewParameter(name+"_v", cols)
		sn.V.Alias = "parametrizations." + name + ".0._v"
		for i, p := range []*gluon.Parameter{sn.U, sn.V} {
			p.Init = powerInit{sn, i == 1}
			p.SetDType(w.DType())
			p.SetGradReq(nd.GradNull)
			p.Statistic = true
			reparamInit(op, p.InitializeLike(w))
		}
		params = append(params, sn.U, sn.V)
	}
	w.SetDerivation(sn) // before ReplaceParam: the block goes on naming w
	m.ReplaceParam(w, params...)
	return sn
}

// transposedConv reports whether b is a transposed convolution (seen
// through wrappers such as a HybridBlock).
func transposedConv(b gluon.Component) bool {
	for {
		switch t := b.(type) {
		case *Conv2DTranspose, *Conv3DTranspose:
			return true
		case interface{ Unwrap() gluon.Component }:
			b = t.Unwrap()
		default:
			return false
		}
	}
}

// matrixShape is the number of rows (the size of axis dim) and columns of
// the weight's matrix; 0 where a dimension is unknown.
func (s *SpectralNorm) matrixShape(shape []int) (rows, cols int) {
	cols = 1
	for i, d := range shape {
		if i != s.dim {
			cols *= d
		}
	}
	return shape[s.dim], cols
}

// matrix returns w as the matrix M: axis dim first, the rest flattened.
func (s *SpectralNorm) matrix(w *nd.NDArray) *nd.NDArray {
	for a := s.dim; a > 0; a-- { // (dim, 0, 1, ..., dim-1, dim+1, ...)
		w = nd.SwapAxes(w, a, a-1)
	}
	return nd.Reshape(w, w.Shape()[0], -1)
}

// InferShape completes the shapes of Orig, U and V from the weight's, as
// the layer infers it (gluon.Derivation). When this materialises Orig, U
// and V start again from it.
func (s *SpectralNorm) InferShape(shape []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ready := s.Orig.Initialized()
	s.Orig.InferShape(shape...)
	if s.U != nil {
		rows, cols := s.matrixShape(shape)
		s.U.InferShape(rows)
		s.V.InferShape(cols)
		if !ready && s.Orig.Initialized() && s.U.Initialized() && s.V.Initialized() {
			u, v := s.start(rows, cols)
			reparamSetHost(s.U, u)
			reparamSetHost(s.V, v)
		}
	}
}

// DType returns the weight's dtype, Orig's (the layer's weight reports it:
// gluon.Parameter.DType).
func (s *SpectralNorm) DType() nd.DType { return s.Orig.DType() }

// Value returns W/σ on dev, computed in session sess (gluon.Derivation:
// the session of the layer's input), after the power iteration when sess
// is in training mode; recorded when it records.
func (s *SpectralNorm) Value(dev ctx.Context, sess *nd.Session) *nd.NDArray {
	w := s.Orig.DataIn(dev, sess)
	if s.U == nil {
		return nd.Normalize(w, 2, 0, s.eps)
	}
	if sess == nil { // read without an input: the session w's ops run in
		sess = w.Session()
	}
	u, v := s.U.Data(dev), s.V.Data(dev)
	if sess.IsTraining() {
		s.mu.Lock()
		s.power(s.matrix(w.Detach()), u, v, s.iters)
		s.mu.Unlock()
	}
	// Copies: a later pass's update must not change what this one's
	// backward pass reads.
	return s.normalized(w, u.Copy(), v.Copy())
}

// normalized is w / (uᵀ·M·v).
func (s *SpectralNorm) normalized(w, u, v *nd.NDArray) *nd.NDArray {
	mv := nd.Dot(s.matrix(w), nd.ExpandDims(v, 1), false, false) // [rows, 1]
	sigma := nd.Sum(nd.Mul(nd.Reshape(mv, -1), u))
	return nd.Div(w, sigma)
}

// power runs n steps of the power method on the matrix m, writing u and v
// in place.
func (s *SpectralNorm) power(m, u, v *nd.NDArray, n int) {
	for range n {
		nu := nd.Normalize(nd.Reshape(nd.Dot(m, nd.ExpandDims(v, 1), false, false), -1), 2, 0, s.eps)
		nd.Assign(u, nu)
		nv := nd.Normalize(nd.Reshape(nd.Dot(m, nd.ExpandDims(u, 1), true, false), -1), 2, 0, s.eps)
		nd.Assign(v, nv)
		nu.Release()
		nv.Release()
	}
}

// Sigma returns σ = uᵀ·M·v on dev with the current U and V (no power
// iteration): the spectral norm the layer divides by. For a
// one-dimensional weight it is the weight's norm.
func (s *SpectralNorm) Sigma(dev ctx.Context) float64 {
	w := s.Orig.Data(dev).Detach()
	if s.U == nil {
		return nd.Norm(w, 2).Scalar()
	}
	u, v := s.U.Data(dev).Detach(), s.V.Data(dev).Detach()
	return nd.Sum(nd.Mul(nd.Reshape(nd.Dot(s.matrix(w), nd.ExpandDims(v, 1), false, false), -1), u)).Scalar()
}

// Remove bakes the normalised weight back in (PyTorch's
// remove_parametrizations with leave_parametrized): the layer's weight
// becomes a stored parameter again, holding W/σ with the current U and V
// (no power iteration), on Orig's contexts, in the place of Orig, U and
// V. When Orig is not materialised yet the weight is left to be
// initialised as Orig would have been. Make a new Trainer afterwards.
// Removing twice is an error.
func (s *SpectralNorm) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return fmt.Errorf("nn: "+"SpectralNorm.Remove: %s of %q was already removed", s.weight.LocalName(), s.meta.Name())
	}
	var baked *nd.NDArray
	if s.Orig.Initialized() {
		if err := nd.Catch(func() {
			w := s.Orig.ListData()[0].Detach()
			if s.U == nil {
				baked = nd.Normalize(w, 2, 0, s.eps)
				return
			}
			baked = s.normalized(w, s.U.ListData()[0].Detach(), s.V.ListData()[0].Detach())
		}); err != nil {
			return fmt.Errorf("nn: "+"SpectralNorm.Remove: %v", err)
		}
	}
	params := []*gluon.Parameter{s.Orig}
	if s.U != nil {
		params = append(params, s.U, s.V)
	}
	if err := reparamRestore(s.meta, s.weight, baked, params...); err != nil {
		return err
	}
	s.removed = true
	return nil
}

// start returns U's and V's initial values, of the given lengths, for
// Orig's current values (in float64, on the host): normal draws from a
// generator derived from nd's seed and Orig's name, normalised, then 15
// power iterations (none when Orig has no values of that shape yet).
func (s *SpectralNorm) start(rows, cols int) (u, v []float64) {
	h := fnv.New64a()
	h.Write([]byte(s.Orig.Name()))
	rng := rand.New(rand.NewPCG(nd.CurrentSeed(), h.Sum64()))
	u, v = make([]float64, rows), make([]float64, cols)
	for i := range u {
		u[i] = rng.NormFloat64()
	}
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	hostNormalize(u, s.eps)
	hostNormalize(v, s.eps)
	if !s.Orig.Initialized() {
		return u, v
	}
	w := s.Orig.ListData()[0].Detach()
	m := s.matrix(w).Float64s()
	if len(m) != rows*cols {
		return u, v
	}
	for range 15 {
		for r := range rows {
			var acc float64
			for c := range cols {
				acc += m[r*cols+c] * v[c]
			}
			u[r] = acc
		}
		hostNormalize(u, s.eps)
		for c := range cols {
			var acc float64
			for r := range rows {
				acc += m[r*cols+c] * u[r]
			}
			v[c] = acc
		}
		hostNormalize(v, s.eps)
	}
	return u, v
}

// hostNormalize divides x by max(‖x‖, eps) in place.
func hostNormalize(x []float64, eps float64) {
	var n float64
	for _, a := range x {
		n += a * a
	}
	n = max(math.Sqrt(n), eps)
	for i := range x {
		x[i] /= n
	}
}

// powerInit initialises U (or V, when right is set) from the power
// method's start on Orig.
type powerInit struct {
	s     *SpectralNorm
	right bool
}

// InitWeight fills data with U's or V's initial values.
func (i powerInit) InitWeight(_ []int, data []float64, _ *rand.Rand) {
	// U's or V's own lock is held: their lengths come from data and Orig.
	rows, cols := i.s.matrixShape(i.s.Orig.Shape())
	if i.right {
		cols = len(data)
		_, v := i.s.start(rows, cols)
		copy(data, v)
		return
	}
	u, _ := i.s.start(len(data), cols)
	copy(data, u)
}

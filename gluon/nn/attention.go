package nn

import (
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// AttentionOpts configures MultiHeadAttention. The zero value is PyTorch's
// nn.MultiheadAttention default: biases, no dropout, the TNC layout
// (sequence, batch, features; PyTorch's batch_first=False) and no causal
// mask.
type AttentionOpts struct {
	Dropout float64 // dropout on the attention weights, in training mode
	NoBias  bool    // no input or output projection biases
	Layout  string  // "TNC" (default) or "NTC" (PyTorch's batch_first=True)
	Causal  bool    // each query position attends only to key positions ≤ its own
}

// MultiHeadAttention is scaled dot-product attention over NumHeads heads
// (PyTorch's nn.MultiheadAttention, with its parameter names and shapes:
// in_proj_weight [3E, E] holding the query, key and value projections one
// above the other, in_proj_bias [3E] and the child out_proj, a Dense
// [E, E], so a PyTorch state_dict loads).
//
// ForwardMulti takes query [T, N, E], key and value [S, N, E] (NTC: batch
// first), a key-padding mask [N, S] and an attention mask [T, S]. Key and
// value may be nil (self-attention: both are the query) and so may the
// masks. A Bool mask marks with true the positions not attended to; a
// floating mask is added to the scores (−Inf also excludes). It returns
// the output, shaped like the query, and the attention weights averaged
// over the heads, [N, T, S]. Forward is self-attention returning the
// output alone.
//
// The heads run as batched GEMMs: scores for all N·heads pairs in one Dot,
// and one more for the weighted values. A query row whose keys are all
// masked gives NaN, as in PyTorch.
type MultiHeadAttention struct {
	gluon.BlockMeta
	EmbedDim, NumHeads int
	opts               AttentionOpts
	InProjWeight       *gluon.Parameter
	InProjBias         *gluon.Parameter
	OutProj            *Dense
}

// NewMultiHeadAttention returns attention of width embedDim split over
// numHeads heads; embedDim must be a multiple of numHeads.
func NewMultiHeadAttention(embedDim, numHeads int, o AttentionOpts) *MultiHeadAttention {
	const op = "nn.NewMultiHeadAttention"
	if o.Layout == "" {
		o.Layout = "TNC"
	}
	switch {
	case embedDim < 1 || numHeads < 1 || embedDim%numHeads != 0:
		nd.Panicf(op, nd.ErrArgument, "embed dim %d and heads %d: both must be positive and heads must divide the embed dim", embedDim, numHeads)
	case o.Dropout < 0 || o.Dropout >= 1:
		nd.Panicf(op, nd.ErrArgument, "dropout %g outside [0, 1)", o.Dropout)
	case o.Layout != "TNC" && o.Layout != "NTC":
		nd.Panicf(op, nd.ErrArgument, "layout %q: want TNC or NTC", o.Layout)
	}
	a := &MultiHeadAttention{BlockMeta: gluon.NewBlockMeta("multiheadattention"), EmbedDim: embedDim, NumHeads: numHeads, opts: o}
	a.InProjWeight = a.AddParam(gluon.NewParameter("in_proj_weight", 3*embedDim, embedDim))
	a.InProjWeight.Init = initializer.Xavier{} // PyTorch's xavier_uniform_
	if !o.NoBias {
		a.InProjBias = a.AddParam(gluon.NewParameter("in_proj_bias", 3*embedDim))
		a.InProjBias.Init = initializer.Zero()
	}
	a.OutProj = NewDense(embedDim, DenseOpts{NoBias: o.NoBias, InUnits: embedDim, NoFlatten: true})
	a.OutProj.SetName("out_proj")
	a.AddChild(a.OutProj)
	return a
}

// Opts returns the options with defaults filled in.
func (a *MultiHeadAttention) Opts() AttentionOpts { return a.opts }

// Forward is self-attention on x; it returns the output alone.
func (a *MultiHeadAttention) Forward(x *nd.NDArray) *nd.NDArray { return a.ForwardMulti(x)[0] }

// ForwardMulti runs attention; see MultiHeadAttention for the inputs
// (query, key, value, key-padding mask, attention mask) and the outputs
// (output, head-averaged weights).
func (a *MultiHeadAttention) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.MultiHeadAttention"
	in := takeInputs(op, inputs, 5, "query, key, value, key-padding mask, attention mask")
	q, k, v, pad, mask := in[0], in[1], in[2], in[3], in[4]
	self := k == nil && v == nil
	if k == nil {
		k = q
	}
	if v == nil {
		v = k
	}
	e := a.EmbedDim
	for i, x := range []*nd.NDArray{q, k, v} {
		if x.NDim() != 3 || x.Shape()[2] != e {
			nd.Panicf(op, nd.ErrShape, "%s has shape %v, want 3-D (%s) with %d features", [...]string{"query", "key", "value"}[i], x.Shape(), a.opts.Layout, e)
		}
	}
	if a.opts.Layout == "TNC" {
		q, k, v = nd.SwapAxes(q, 0, 1), nd.SwapAxes(k, 0, 1), nd.SwapAxes(v, 0, 1)
	}
	n, t, s := q.Shape()[0], q.Shape()[1], k.Shape()[1]
	if k.Shape()[0] != n || v.Shape()[0] != n || v.Shape()[1] != s {
		nd.Panicf(op, nd.ErrShape, "query %v, key %v and value %v disagree on batch or key length", inputs[0].Shape(), k.Shape(), v.Shape())
	}
	qp, kp, vp := a.project(q, k, v, self)
	h, d := a.NumHeads, e/a.NumHeads
	// [N, L, E] → [N·h, L, d]
	heads := func(x *nd.NDArray, l int) *nd.NDArray {
		return nd.Reshape(nd.Transpose(nd.Reshape(x, n, l, h, d), 0, 2, 1, 3), n*h, l, d)
	}
	scores := nd.Dot(heads(nd.MulScalar(qp, 1/math.Sqrt(float64(d))), t), heads(kp, s), false, true)
	scores = a.masked(nd.Reshape(scores, n, h, t, s), pad, mask)
	w := nd.Softmax(scores, -1) // [N, h, T, S]
	att := w
	if a.opts.Dropout > 0 {
		att = nd.Dropout(w, a.opts.Dropout)
	}
	out := nd.Dot(nd.Reshape(att, n*h, t, s), heads(vp, s), false, false) // [N·h, T, d]
	out = nd.Reshape(nd.Transpose(nd.Reshape(out, n, h, t, d), 0, 2, 1, 3), n, t, e)
	out = a.OutProj.Forward(out)
	if a.opts.Layout == "TNC" {
		out = nd.SwapAxes(out, 0, 1)
	}
	return []*nd.NDArray{out, nd.Mean(w, 1)}
}

// project applies the input projections: one GEMM for self-attention,
// three with row blocks of in_proj_weight otherwise.
func (a *MultiHeadAttention) project(q, k, v *nd.NDArray, self bool) (qp, kp, vp *nd.NDArray) {
	e := a.EmbedDim
	w := a.InProjWeight.DataFor(q)
	var b *nd.NDArray
	if a.InProjBias != nil {
		b = a.InProjBias.DataFor(q)
	}
	lin := func(x *nd.NDArray, i, j int) *nd.NDArray {
		sh := x.Shape()
		var bb *nd.NDArray
		if b != nil {
			bb = nd.SliceAxis(b, i*e, j*e, 0)
		}
		y := nd.FullyConnected(nd.Reshape(x, -1, e), nd.SliceAxis(w, i*e, j*e, 0), bb)
		return nd.Reshape(y, sh[0], sh[1], (j-i)*e)
	}
	if self {
		p := nd.Split(lin(q, 0, 3), 3, 2)
		return p[0], p[1], p[2]
	}
	return lin(q, 0, 1), lin(k, 1, 2), lin(v, 2, 3)
}

// masked applies the causal, key-padding and attention masks to scores
// [N, h, T, S].
func (a *MultiHeadAttention) masked(scores, pad, mask *nd.NDArray) *nd.NDArray {
	const op = "nn.MultiHeadAttention"
	sh := scores.Shape()
	n, t, s := sh[0], sh[2], sh[3]
	if a.opts.Causal {
		scores = nd.MaskedFill(scores, CausalMask(scores, t, s), math.Inf(-1))
	}
	if pad != nil {
		if pad.NDim() != 2 || pad.Shape()[0] != n || pad.Shape()[1] != s {
			nd.Panicf(op, nd.ErrShape, "key-padding mask has shape %v, want [%d %d] (batch, key length)", pad.Shape(), n, s)
		}
		scores = applyMask(scores, nd.Reshape(pad, n, 1, 1, s))
	}
	if mask != nil {
		if mask.NDim() != 2 || mask.Shape()[0] != t || mask.Shape()[1] != s {
			nd.Panicf(op, nd.ErrShape, "attention mask has shape %v, want [%d %d] (query length, key length)", mask.Shape(), t, s)
		}
		scores = applyMask(scores, mask)
	}
	return scores
}

// applyMask excludes the true entries of a Bool mask or adds a floating
// one.
func applyMask(scores, mask *nd.NDArray) *nd.NDArray {
	if mask.DType() == nd.Bool {
		return nd.MaskedFill(scores, mask, math.Inf(-1))
	}
	return nd.Add(scores, mask)
}

// CausalMask returns a Bool [t, s] mask, true above the diagonal (key
// position after the query position), on like's context and session: the
// mask a decoder uses so that each position sees only its past. With
// s > t the diagonal is aligned to the end, as when t new queries follow
// s−t cached keys.
func CausalMask(like *nd.NDArray, t, s int) *nd.NDArray {
	m := make([]bool, t*s)
	off := s - t
	for i := range t {
		for j := range s {
			m[i*s+j] = j > i+off
		}
	}
	return like.Session().FromSlice(like.Context(), m, t, s)
}

package nn

import (
	"math/rand/v2"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// Embedding maps integer indices to learnt vectors: an input of indices
// (Int64, Int32 or Uint8, any shape) gives an output of that shape plus a
// last axis of OutputDim (Gluon's nn.Embedding, PyTorch's nn.Embedding).
// The weight is [InputDim, OutputDim]; its gradient is a deterministic
// scatter-add of the output gradient into the rows used. An index outside
// [0, InputDim) is an error (checked on the host, which waits for the
// device); in a hybridized network (gluon.Hybridize), whose replays cannot
// read values on the host, it is clipped into the range instead.
//
// WithPadding makes one index the padding (PyTorch's padding_idx): its
// vector starts at zero and gets no gradient, so padded positions of a
// batch of sequences neither train nor move it.
type Embedding struct {
	gluon.BlockMeta
	InputDim, OutputDim int
	Weight              *gluon.Parameter
	// Padding is the padding index, or −1 for none (see WithPadding).
	Padding int
}

// NewEmbedding returns an embedding of inputDim vectors of size outputDim,
// initialised from N(0, 1) as PyTorch does (set Weight.Init to change it).
func NewEmbedding(inputDim, outputDim int) *Embedding {
	if inputDim < 1 || outputDim < 1 {
		nd.Panicf("nn.NewEmbedding", nd.ErrArgument, "dimensions %d×%d must be positive", inputDim, outputDim)
	}
	e := &Embedding{BlockMeta: gluon.NewBlockMeta("embedding"), InputDim: inputDim, OutputDim: outputDim, Padding: -1}
	e.Weight = e.AddParam(gluon.NewParameter("weight", inputDim, outputDim))
	e.Weight.Init = initializer.Normal{Sigma: 1}
	return e
}

// Forward looks up the vectors of the indices in x.
func (e *Embedding) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "nn.Embedding"
	if x.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "indices must be an integer array, got %v (convert with AsType(nd.Int64))", x.DType())
	}
	if x.Size() > 0 && !nd.Tracing() {
		if lo := scalarOf(nd.Min(x)); lo < 0 {
			nd.Panicf(op, nd.ErrArgument, "index %d outside [0, %d)", lo, e.InputDim)
		}
		if hi := scalarOf(nd.Max(x)); hi >= int64(e.InputDim) {
			nd.Panicf(op, nd.ErrArgument, "index %d outside [0, %d)", hi, e.InputDim)
		}
	}
	out := nd.Take(e.Weight.DataFor(x), x, 0, nd.TakeClip)
	if e.Padding >= 0 && x.Session().IsRecording() {
		// The padding positions' output without a gradient: the same
		// values, and nothing flows back to the padding row.
		pad := nd.ExpandDims(nd.NotEqual(x, nd.FullLike(x, float64(e.Padding))), -1)
		out = nd.Where(pad, out, out.Detach())
	}
	return out
}

// WithPadding makes index idx the padding (PyTorch's padding_idx): its
// row of the weight is initialised to zero (whatever Weight.Init, which it
// wraps: set Init before calling it) and gets no gradient. It returns e.
// An index outside [0, InputDim) panics.
func (e *Embedding) WithPadding(idx int) *Embedding {
	if idx < 0 || idx >= e.InputDim {
		nd.Panicf("nn.Embedding.WithPadding", nd.ErrArgument, "padding index %d outside [0, %d)", idx, e.InputDim)
	}
	e.Padding = idx
	e.Weight.Init = zeroRow{base: e.Weight.Init, row: idx}
	return e
}

// zeroRow is an initializer that zeroes one row of base's values.
type zeroRow struct {
	base initializer.Initializer
	row  int
}

// InitWeight runs the base initializer and zeroes the row.
func (z zeroRow) InitWeight(shape []int, data []float64, rng *rand.Rand) {
	if z.base != nil {
		z.base.InitWeight(shape, data, rng)
	}
	cols := len(data) / shape[0]
	clear(data[z.row*cols : (z.row+1)*cols])
}

// scalarOf reads a one-element integer array as int64 and releases it.
func scalarOf(a *nd.NDArray) int64 {
	defer a.Release()
	b := a.AsType(nd.Int64)
	defer b.Release()
	return b.Int64s()[0]
}

package nn

import (
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
type Embedding struct {
	gluon.BlockMeta
	InputDim, OutputDim int
	Weight              *gluon.Parameter
}

// NewEmbedding returns an embedding of inputDim vectors of size outputDim,
// initialised from N(0, 1) as PyTorch does (set Weight.Init to change it).
func NewEmbedding(inputDim, outputDim int) *Embedding {
	if inputDim < 1 || outputDim < 1 {
		nd.Panicf("nn.NewEmbedding", nd.ErrArgument, "dimensions %d×%d must be positive", inputDim, outputDim)
	}
	e := &Embedding{BlockMeta: gluon.NewBlockMeta("embedding"), InputDim: inputDim, OutputDim: outputDim}
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
	return nd.Take(e.Weight.Data(x.Context()), x, 0, nd.TakeClip)
}

// scalarOf reads a one-element integer array as int64 and releases it.
func scalarOf(a *nd.NDArray) int64 {
	defer a.Release()
	b := a.AsType(nd.Int64)
	defer b.Release()
	return b.Int64s()[0]
}

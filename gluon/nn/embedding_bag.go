package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// EmbeddingBag reduces bags of embedding vectors without making the
// vectors of every index (PyTorch's nn.EmbeddingBag): each bag, a group
// of indices, gives the sum, the mean or the element-wise maximum of its
// rows of the weight [InputDim, OutputDim]. The bags are either the rows
// of a 2-D index array [B, L] (Forward, or ForwardMulti with nil
// offsets), or runs of a 1-D index array [L] starting at Offsets [B]
// (ForwardMulti). The output is [B, OutputDim]; an empty bag gives zeros.
//
// In "sum" mode per-sample weights (of the indices' shape) multiply each
// row before the sum, and receive a gradient. The weight's gradient is a
// deterministic scatter-add into the rows used; in "max" mode each output
// element's gradient goes to the row that holds the maximum (the first
// such row of the bag on ties, as in PyTorch).
//
// WithPadding makes one index the padding (PyTorch's padding_idx): its
// row starts at zero, is left out of every bag (of the mean's count and
// of the maximum too) and gets no gradient.
//
// Indices outside [0, InputDim) are an error (checked on the host, as
// Embedding's). Offsets are read on the host, so a hybridized network
// (gluon.Hybridize) must give 2-D bags; the ONNX form too takes 2-D bags
// (and per-sample weights) only.
type EmbeddingBag struct {
	gluon.BlockMeta
	InputDim, OutputDim int
	// Mode is "sum", "mean" or "max".
	Mode   string
	Weight *gluon.Parameter
	// Padding is the padding index, or −1 for none (see WithPadding).
	Padding int
	// IncludeLastOffset says the offsets hold B+1 entries, the last the
	// number of indices (the CSR form; PyTorch's include_last_offset).
	IncludeLastOffset bool
}

// NewEmbeddingBag returns an embedding bag of inputDim vectors of size
// outputDim reducing by mode ("sum", "mean", PyTorch's default, or
// "max"), its weight initialised from N(0, 1) as PyTorch does. Sizes
// below 1 or another mode panic.
func NewEmbeddingBag(inputDim, outputDim int, mode string) *EmbeddingBag {
	const op = "nn.NewEmbeddingBag"
	if inputDim < 1 || outputDim < 1 {
		nd.Panicf(op, nd.ErrArgument, "dimensions %d×%d must be positive", inputDim, outputDim)
	}
	checkBagMode(op, mode)
	e := &EmbeddingBag{BlockMeta: gluon.NewBlockMeta("embeddingbag"), InputDim: inputDim, OutputDim: outputDim, Mode: mode, Padding: -1}
	e.Weight = e.AddParam(gluon.NewParameter("weight", inputDim, outputDim))
	e.Weight.Init = initializer.Normal{Sigma: 1}
	return e
}

func checkBagMode(op, mode string) {
	if mode != "sum" && mode != "mean" && mode != "max" {
		nd.Panicf(op, nd.ErrArgument, "mode %q: want sum, mean or max", mode)
	}
}

// WithPadding makes index idx the padding (PyTorch's padding_idx): its
// row of the weight is initialised to zero (whatever Weight.Init, which
// it wraps: set Init before calling it), left out of the bags and gets no
// gradient. It returns e. An index outside [0, InputDim) panics.
func (e *EmbeddingBag) WithPadding(idx int) *EmbeddingBag {
	if idx < 0 || idx >= e.InputDim {
		nd.Panicf("nn.EmbeddingBag.WithPadding", nd.ErrArgument, "padding index %d outside [0, %d)", idx, e.InputDim)
	}
	e.Padding = idx
	e.Weight.Init = zeroRow{base: e.Weight.Init, row: idx}
	return e
}

// Forward reduces the bags of a 2-D index array [B, L].
func (e *EmbeddingBag) Forward(x *nd.NDArray) *nd.NDArray { return e.ForwardMulti(x)[0] }

// ForwardMulti takes the indices, the offsets (nil for 2-D indices) and
// the per-sample weights (nil for none; "sum" mode only), and returns the
// bags' vectors [B, OutputDim].
func (e *EmbeddingBag) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "nn.EmbeddingBag"
	if len(inputs) == 0 || len(inputs) > 3 || inputs[0] == nil {
		nd.Panicf(op, nd.ErrArgument, "takes indices, offsets and per-sample weights (the first required), got %d inputs", len(inputs))
	}
	in := append(slices.Clone(inputs), nil, nil)
	x, offsets, psw := in[0], in[1], in[2]
	checkBagMode(op, e.Mode)
	isIndex := func(a *nd.NDArray) bool {
		return a.DType() == nd.Int64 || a.DType() == nd.Int32 || a.DType() == nd.Uint8
	}
	if !isIndex(x) {
		nd.Panicf(op, nd.ErrDType, "indices must be an integer array, got %v (convert with AsType(nd.Int64))", x.DType())
	}
	w := e.Weight.DataFor(x)
	if psw != nil {
		if e.Mode != "sum" {
			nd.Panicf(op, nd.ErrArgument, "per-sample weights need mode sum, not %q", e.Mode)
		}
		if psw.Context() != x.Context() {
			nd.Panicf(op, nd.ErrContext, "indices on %v, per-sample weights on %v", x.Context(), psw.Context())
		}
		if psw.DType() != w.DType() {
			nd.Panicf(op, nd.ErrDType, "per-sample weights are %v, the weight %v", psw.DType(), w.DType())
		}
		if !slices.Equal(psw.Shape(), x.Shape()) {
			nd.Panicf(op, nd.ErrShape, "per-sample weights of shape %v for indices of shape %v: want the same shape", psw.Shape(), x.Shape())
		}
	}
	var valid *nd.NDArray // [B, M]: false where a bag of offsets is shorter than M
	if offsets == nil {
		if x.NDim() != 2 {
			nd.Panicf(op, nd.ErrShape, "indices of shape %v without offsets: want [B, L] (or 1-D indices with offsets)", x.Shape())
		}
	} else {
		if x.NDim() != 1 {
			nd.Panicf(op, nd.ErrShape, "indices of shape %v with offsets: want 1-D indices", x.Shape())
		}
		if !isIndex(offsets) || offsets.NDim() != 1 {
			nd.Panicf(op, nd.ErrArgument, "offsets of shape %v and dtype %v: want a 1-D integer array", offsets.Shape(), offsets.DType())
		}
		if offsets.Context() != x.Context() {
			nd.Panicf(op, nd.ErrContext, "indices on %v, offsets on %v", x.Context(), offsets.Context())
		}
		if nd.Tracing() {
			nd.Panicf(op, nd.ErrTrace, "offsets are read on the host, which a hybridized network cannot do: give bags as a 2-D index array [B, L]")
		}
		var pos *nd.NDArray
		pos, valid = e.bagPositions(op, offsets, x.Shape()[0])
		if pos == nil { // no bag holds an index
			return []*nd.NDArray{emptyBags(x, w, valid.Shape()[0])}
		}
		xs := x.Int64s()
		idx := make([]int64, pos.Size())
		for i, p := range pos.Int64s() {
			idx[i] = xs[p]
		}
		if psw != nil {
			psw = nd.Take(psw, pos, 0)
		}
		x = x.Session().FromSlice(x.Context(), idx, pos.Shape()...)
	}
	b, m := x.Shape()[0], x.Shape()[1]
	if m == 0 || b == 0 {
		return []*nd.NDArray{emptyBags(x, w, b)}
	}
	if !nd.Tracing() {
		if lo := scalarOf(nd.Min(x)); lo < 0 {
			nd.Panicf(op, nd.ErrArgument, "index %d outside [0, %d)", lo, e.InputDim)
		}
		if hi := scalarOf(nd.Max(x)); hi >= int64(e.InputDim) {
			nd.Panicf(op, nd.ErrArgument, "index %d outside [0, %d)", hi, e.InputDim)
		}
	}
	keep := valid // [B, M] Bool: the positions that count
	if e.Padding >= 0 {
		notPad := nd.NotEqual(x, nd.FullLike(x, float64(e.Padding)))
		if keep == nil {
			keep = notPad
		} else {
			keep = nd.LogicalAnd(keep, notPad)
		}
	}
	rows := nd.Take(w, x, 0, nd.TakeClip) // [B, M, D]
	return []*nd.NDArray{e.reduce(rows, keep, psw)}
}

// emptyBags returns the zeros [b, D] of b bags that hold no index,
// computed from the weight w (a sum over no rows of it) so that, as in
// PyTorch, a loss on them has a backward pass and gives the weight a zero
// gradient rather than none.
func emptyBags(x, w *nd.NDArray, b int) *nd.NDArray {
	none := x.Session().Zeros(x.Context(), nd.Int64, b, 0)
	return nd.Sum(nd.Take(w, none, 0, nd.TakeClip), 1)
}

// reduce reduces rows [B, M, D] over axis 1, counting only the positions
// keep marks (nil: all), with per-sample weights psw [B, M] (or nil).
func (e *EmbeddingBag) reduce(rows, keep, psw *nd.NDArray) *nd.NDArray {
	var keep3 *nd.NDArray
	if keep != nil {
		keep3 = nd.ExpandDims(keep, -1)
	}
	zeros := func() *nd.NDArray { return nd.ZerosLike(rows) }
	switch e.Mode {
	case "sum", "mean":
		v := rows
		if psw != nil {
			v = nd.Mul(v, nd.ExpandDims(psw, -1))
		}
		if keep3 != nil {
			v = nd.Where(keep3, v, zeros())
		}
		s := nd.Sum(v, 1)
		if e.Mode == "sum" {
			return s
		}
		if keep == nil {
			return nd.DivScalar(s, float64(rows.Shape()[1]))
		}
		count := nd.Sum(keep.AsType(rows.DType()), 1)
		return nd.Div(s, nd.ExpandDims(nd.MaximumScalar(count, 1), -1))
	}
	// max: the first row holding each maximum, picked so that only it gets
	// the gradient; a bag with nothing kept gives zeros.
	v := rows
	if keep3 != nil {
		v = nd.Where(keep3, rows, nd.FullLike(rows, math.Inf(-1)))
	}
	at := nd.ArgMax(v.Detach(), 1) // [B, D]
	out := nd.Pick(rows, at, 1)
	if keep == nil {
		return out
	}
	some := nd.AnyTrueKeepDims(keep, 1) // [B, 1]
	return nd.Where(some, out, nd.ZerosLike(out))
}

// bagPositions reads the offsets on the host, checks them against n
// indices, and returns the positions [B, M] of each bag's indices (pos is
// nil when every bag is empty; padded positions hold 0) and which of them
// are real.
func (e *EmbeddingBag) bagPositions(op string, offsets *nd.NDArray, n int) (pos, valid *nd.NDArray) {
	offs := offsets.Int64s()
	dev, s := offsets.Context(), offsets.Session()
	if e.IncludeLastOffset {
		if len(offs) == 0 || offs[len(offs)-1] != int64(n) {
			nd.Panicf(op, nd.ErrArgument, "offsets %v with IncludeLastOffset: want B+1 entries, the last %d (the number of indices)", offs, n)
		}
		offs = offs[:len(offs)-1]
	}
	bags := len(offs)
	if bags > 0 && offs[0] != 0 {
		nd.Panicf(op, nd.ErrArgument, "offsets start at %d: the first bag must start at 0", offs[0])
	}
	ends := make([]int64, bags)
	m := int64(0)
	for i := range offs {
		end := int64(n)
		if i+1 < bags {
			end = offs[i+1]
		}
		if offs[i] > end || end > int64(n) {
			nd.Panicf(op, nd.ErrArgument, "offsets %v for %d indices: want non-decreasing offsets from 0 up to %d", offs, n, n)
		}
		ends[i] = end
		m = max(m, end-offs[i])
	}
	p := make([]int64, int64(bags)*m)
	ok := make([]bool, len(p))
	for i, start := range offs {
		for j := start; j < ends[i]; j++ {
			k := int64(i)*m + j - start
			p[k], ok[k] = j, true
		}
	}
	valid = s.FromSlice(dev, ok, bags, int(m))
	if m == 0 {
		return nil, valid
	}
	return s.FromSlice(dev, p, bags, int(m)), valid
}

// ExportONNX writes the form of 2-D bags: Gather of the rows and
// ReduceSum, ReduceMean or ReduceMax over the bag (the padding masked
// out with Where).
func (e *EmbeddingBag) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	outs, err := e.ExportONNXMulti(g, []string{x})
	if err != nil {
		return "", err
	}
	return outs[0], nil
}

// ExportONNXMulti writes the form of 2-D bags with optional per-sample
// weights; offsets have no ONNX form here (ONNX has no segment
// reduction): give 2-D bags.
func (e *EmbeddingBag) ExportONNXMulti(g gluon.ONNXGraph, inputs []string) ([]string, error) {
	in := append(slices.Clone(inputs), "", "")
	x, offsets, psw := in[0], in[1], in[2]
	if x == "" {
		return nil, fmt.Errorf("EmbeddingBag: no indices")
	}
	if offsets != "" {
		return nil, fmt.Errorf("EmbeddingBag with offsets has no ONNX form: give the bags as 2-D indices [B, L]")
	}
	op := func(name string, ins []string, attrs map[string]any) string { return g.Op(name, ins, attrs, 1)[0] }
	rows := op("Gather", []string{g.Param(e.Weight), x}, map[string]any{"axis": 0}) // [B, L, D]
	if psw != "" {
		rows = op("Mul", []string{rows, op("Unsqueeze", []string{psw, g.Const([]int64{-1}, 1)}, nil)}, nil)
	}
	if e.Padding < 0 {
		switch e.Mode {
		case "sum":
			return []string{op("ReduceSum", []string{rows, g.Const([]int64{1}, 1)}, map[string]any{"keepdims": 0})}, nil
		case "mean":
			return []string{op("ReduceMean", []string{rows}, map[string]any{"axes": []int{1}, "keepdims": 0})}, nil
		default:
			return []string{op("ReduceMax", []string{rows}, map[string]any{"axes": []int{1}, "keepdims": 0})}, nil
		}
	}
	keep := op("Not", []string{op("Equal", []string{x, g.Const([]int64{int64(e.Padding)})}, nil)}, nil)
	keep3 := op("Unsqueeze", []string{keep, g.Const([]int64{-1}, 1)}, nil) // [B, L, 1]
	count := op("ReduceSum", []string{op("CastLike", []string{keep3, rows}, nil), g.Const([]int64{1}, 1)},
		map[string]any{"keepdims": 0}) // [B, 1], float
	zero := g.Const([]float32{0})
	switch e.Mode {
	case "sum", "mean":
		s := op("ReduceSum", []string{op("Where", []string{keep3, rows, zero}, nil), g.Const([]int64{1}, 1)}, map[string]any{"keepdims": 0})
		if e.Mode == "sum" {
			return []string{s}, nil
		}
		return []string{op("Div", []string{s, op("Max", []string{count, g.Const([]float32{1})}, nil)}, nil)}, nil
	}
	masked := op("Where", []string{keep3, rows, g.Const([]float32{float32(math.Inf(-1))})}, nil)
	mx := op("ReduceMax", []string{masked}, map[string]any{"axes": []int{1}, "keepdims": 0})
	return []string{op("Where", []string{op("Greater", []string{count, zero}, nil), mx, zero}, nil)}, nil
}

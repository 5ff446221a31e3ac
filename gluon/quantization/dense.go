package quantization

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// Dense is the dynamically quantized form of nn.Dense, PyTorch's
// torch.ao.nn.quantized.dynamic.Linear: signed 8-bit weights with one
// scale (or one per output unit), float32 bias, and activations quantized
// to unsigned bytes on every call with the range of that call's input.
// It computes y = act(float32(float32(Σ (xq−z)·wq)·(sx·sw)) + b) with the
// sums in int32 (nd/cpu's GemmU8S8F32). NewDenseStatic makes one whose
// inputs are quantized with fixed parameters instead (static
// quantization). It runs in inference only, on
// CPU contexts, on float32 inputs; it has no gluon Parameters (its state
// is on the host, shared by every context), so save it with Save.
//
// A Dense may be called from several goroutines at once.
type Dense struct {
	gluon.BlockMeta
	units, in   int
	noFlatten   bool
	relu        bool           // ReLU fused into the host pass
	act         *nn.Activation // any other activation, or nil
	actName     string
	reduceRange bool
	fixed       *QParams  // static quantization's input parameters, or nil
	q           []int8    // units × in
	scales      []float32 // 1 or units
	bias        []float32 // nil or units
	packed      *nd.PackedInt8
}

// NewDense returns the quantized form of d, whose weights (and bias) must
// be initialised: the weights are quantized per tensor (PyTorch's
// default_dynamic_qconfig), or per output unit with o.PerChannel
// (per_channel_dynamic_qconfig). d itself is not changed. A weight with NaN or infinite values, a
// derived weight (weight norm) or one not initialised is an error.
func NewDense(d *nn.Dense, o Opts) (*Dense, error) {
	if d == nil {
		return nil, errors.New("quantization.NewDense: nil layer")
	}
	name := d.Name()
	if name == "" {
		name = "dense"
	}
	if d.Weight.Derivation() != nil {
		return nil, fmt.Errorf("quantization: %s: its weight is derived (weight or spectral norm); remove the derivation first", name)
	}
	if !d.Weight.Initialized() {
		return nil, fmt.Errorf("quantization: %s: its weight is not initialised (or its input size not inferred yet: run the network once)", name)
	}
	act, noFlatten, err := denseConfig(d)
	if err != nil {
		return nil, err
	}
	wa := d.Weight.ListData()[0]
	shape := wa.Shape()
	units, in := shape[0], shape[1]
	w := wa.Float32s()
	var bias []float32
	if d.Bias != nil {
		if d.Bias.Derivation() != nil || !d.Bias.Initialized() {
			return nil, fmt.Errorf("quantization: %s: its bias is derived or not initialised", name)
		}
		bias = d.Bias.ListData()[0].Float32s()
	}
	q, scales, err := quantizeWeights(w, units, in, o.PerChannel)
	if err != nil {
		return nil, fmt.Errorf("quantization: %s: %v", name, err)
	}
	qd, err := newDense(units, in, q, scales, bias, act, noFlatten, !o.FullRange)
	if err != nil {
		return nil, fmt.Errorf("quantization: %s: %v", name, err)
	}
	qd.SetName(d.Name())
	return qd, nil
}

// quantizeWeights quantizes the units×in weights w symmetrically to
// int8, with one scale or one per row.
func quantizeWeights(w []float32, units, in int, perChannel bool) ([]int8, []float32, error) {
	q := make([]int8, len(w))
	if !perChannel {
		s, err := SymmetricScale(w)
		if err != nil {
			return nil, nil, err
		}
		QuantizeInt8(q, w, s)
		return q, []float32{s}, nil
	}
	scales := make([]float32, units)
	for j := range units {
		row := w[j*in : (j+1)*in]
		s, err := SymmetricScale(row)
		if err != nil {
			return nil, nil, err
		}
		QuantizeInt8(q[j*in:(j+1)*in], row, s)
		scales[j] = s
	}
	return q, scales, nil
}

// newDense builds a quantized layer from its state, checking it.
func newDense(units, in int, q []int8, scales, bias []float32, act string, noFlatten, reduceRange bool) (*Dense, error) {
	if units < 1 || in < 1 || len(q) != units*in {
		return nil, fmt.Errorf("%d int8 weights for %d units of %d inputs", len(q), units, in)
	}
	if in > 1<<16 {
		return nil, fmt.Errorf("%d inputs: at most 65536 keep the int32 sums exact", in)
	}
	if len(scales) != 1 && len(scales) != units {
		return nil, fmt.Errorf("%d weight scales for %d units (want 1 or %d)", len(scales), units, units)
	}
	for _, s := range scales {
		if !(s > 0) || s > 3e38 {
			return nil, fmt.Errorf("weight scale %v is not a positive finite number", s)
		}
	}
	if bias != nil && len(bias) != units {
		return nil, fmt.Errorf("%d biases for %d units", len(bias), units)
	}
	d := &Dense{BlockMeta: gluon.NewBlockMeta("dense"), units: units, in: in, noFlatten: noFlatten,
		actName: act, reduceRange: reduceRange,
		q: slices.Clone(q), scales: slices.Clone(scales), bias: slices.Clone(bias)}
	switch act {
	case "":
	case "relu":
		d.relu = true
	default:
		if err := nd.Catch(func() { d.act = nn.NewActivation(act) }); err != nil {
			return nil, err
		}
	}
	d.packed = nd.PackInt8(d.q, units, in)
	return d, nil
}

// denseConfig reads d's activation and NoFlatten setting.
func denseConfig(d *nn.Dense) (act string, noFlatten bool, err error) {
	o := d.Options()
	return o.Act, o.NoFlatten, nil
}

// label names d in errors: its name, or "dense" for a root layer.
func (d *Dense) label() string {
	if n := d.Name(); n != "" {
		return n
	}
	return "dense"
}

// Units returns the number of outputs.
func (d *Dense) Units() int { return d.units }

// InUnits returns the number of inputs.
func (d *Dense) InUnits() int { return d.in }

// Weight returns a copy of the int8 weights (units × in, row-major) and
// their scales (one, or one per unit): w ≈ scale·q.
func (d *Dense) Weight() (q []int8, scales []float32) {
	return slices.Clone(d.q), slices.Clone(d.scales)
}

// Bias returns a copy of the float32 bias, or nil.
func (d *Dense) Bias() []float32 { return slices.Clone(d.bias) }

// PerChannel reports whether the weights have a scale per output unit.
func (d *Dense) PerChannel() bool { return len(d.scales) > 1 }

// EagerOnly makes gluon.Hybridize run a network holding d eagerly: d
// computes on the host, which a trace cannot replay.
func (d *Dense) EagerOnly() string { return "int8 dynamic quantization computes on the host" }

// scratch is the host memory of one call.
type scratch struct {
	x, y, s []float32
	a       []uint8
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Forward computes the layer on x, a float32 array on a CPU context: x is
// flattened to [batch, in] (with NoFlatten, the last axis is the input).
// The activations' scale and zero point come from the whole array's range
// (ChooseQParams), as in PyTorch; a static layer's are fixed (Input), and
// it does not check for NaN. Running inside autograd.Record panics
// with an *nd.Error of kind ErrGraph (a quantized layer has no gradient),
// an input with NaN or infinite values with ErrArgument.
func (d *Dense) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "quantization.Dense"
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "%s: nil input", d.label())
	}
	s := x.Session()
	if s.IsRecording() {
		nd.Panicf(op, nd.ErrGraph, "%s is an int8 layer for inference: it cannot be recorded for backward; run it outside autograd.Record (quantize a copy of the network to keep training the float one)", d.label())
	}
	dev := x.Context()
	if dev.Kind != ctx.KindCPU {
		nd.Panicf(op, nd.ErrContext, "%s runs on CPU contexts, the input is on %v", d.label(), dev)
	}
	if x.DType() != nd.Float32 {
		nd.Panicf(op, nd.ErrDType, "%s takes float32 inputs, got %v (cast with AsType)", d.label(), x.DType())
	}
	shape := x.Shape()
	rows, k, out := d.rows(op, shape)
	buf := scratchPool.Get().(*scratch)
	defer scratchPool.Put(buf)
	buf.x = grow(buf.x, rows*k)
	buf.y = grow(buf.y, rows*d.units)
	if rows > 0 {
		x.ReadInto(buf.x)
		d.compute(op, buf, rows)
	}
	y := s.FromSlice(dev, buf.y, out...)
	if d.act != nil {
		y = d.act.Forward(y)
	}
	return y
}

// rows returns the rows and inputs of the matrix x of the given shape is
// taken as, and the output's shape.
func (d *Dense) rows(op string, shape []int) (rows, k int, out []int) {
	if len(shape) == 0 {
		nd.Panicf(op, nd.ErrShape, "%s: a 0-d input", d.label())
	}
	if d.noFlatten {
		k = shape[len(shape)-1]
		rows = 1
		for _, v := range shape[:len(shape)-1] {
			rows *= v
		}
		out = append(slices.Clone(shape[:len(shape)-1]), d.units)
	} else {
		rows, k = shape[0], 1
		for _, v := range shape[1:] {
			k *= v
		}
		out = []int{rows, d.units}
	}
	if k != d.in {
		nd.Panicf(op, nd.ErrShape, "%s takes %d inputs, the input of shape %v has %d", d.label(), d.in, shape, k)
	}
	return rows, k, out
}

// compute quantizes buf.x (rows × in) and writes the layer's rows to buf.y.
func (d *Dense) compute(op string, buf *scratch, rows int) {
	var qp QParams
	if d.fixed != nil {
		qp = *d.fixed
	} else {
		lo, hi, ok := nd.MinMaxF32(buf.x)
		var err error
		qp, err = ChooseQParams(lo, hi, 0, 255, d.reduceRange)
		if !ok || err != nil {
			nd.Panicf(op, nd.ErrArgument, "%s: the input holds NaN or infinite values, which int8 quantization cannot represent", d.label())
		}
	}
	// Rows of a multiple of 4 bytes: the kernels read whole groups of 4.
	lda := (d.in + 3) &^ 3
	buf.a = grow(buf.a, rows*lda)
	inv := 1 / qp.Scale
	if lda == d.in {
		nd.QuantizeU8(buf.a, buf.x, inv, qp.Zero)
	} else {
		for i := range rows {
			row := buf.a[i*lda : (i+1)*lda]
			nd.QuantizeU8(row, buf.x[i*d.in:(i+1)*d.in], inv, qp.Zero)
			clear(row[d.in:])
		}
	}
	buf.s = grow(buf.s, len(d.scales))
	for j, sw := range d.scales {
		buf.s[j] = qp.Scale * sw
	}
	nd.GemmU8S8F32(rows, buf.a, lda, qp.Zero, d.packed, buf.s, d.bias, buf.y, d.units)
	if d.relu {
		for i, v := range buf.y {
			buf.y[i] = max(v, 0)
		}
	}
}

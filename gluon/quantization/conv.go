package quantization

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// Conv2D is the statically quantized form of nn.Conv2D, PyTorch's
// torch.ao.nn.quantized.Conv2d (ConvReLU2d with a fused ReLU) between a
// QuantStub and a DeQuantStub: signed 8-bit weights with one scale per
// output channel (or one per layer), float32 bias, and inputs quantized to
// unsigned bytes with a fixed scale and zero point found by calibration
// (Prepare, QuantizeStatic). It computes
//
//	y = act(float32(float32(Σ (xq−z)·wq)·(sx·sw[c])) + b[c])
//
// with the sums in int32 (the u8 unrolling of nd.Im2RowU8 times the
// packed weights, nd.GemmU8S8F32) and float32 outputs, straight from the
// sums (PyTorch's layer requantizes its output to bytes, which its
// DeQuantStub turns back into floats). Groups, stride,
// padding and dilation are nn.Conv2D's. It runs in inference only, on
// CPU contexts, on float32 NCHW inputs, and has no gluon Parameters (save
// it with Save). A Conv2D may be called from several goroutines at once.
type Conv2D struct {
	gluon.BlockMeta
	channels, inC, kh, kw int
	stride, pad, dilate   [2]int
	groups                int
	relu                  bool           // ReLU fused into the output pass
	act                   *nn.Activation // any other activation, or nil
	actName               string
	in                    QParams          // the inputs' quantization
	q                     []int8           // OIHW
	scales                []float32        // 1 or channels
	bias                  []float32        // nil or channels
	packed                []*nd.PackedInt8 // per group, [out][kh][kw][in] order
}

// NewConv2D returns the statically quantized form of c for inputs
// quantized with in (the parameters calibration chose: Calibration's
// Ranges and MinMaxQParams, or ones of your own): weights quantized
// symmetrically per output channel (PyTorch's per_channel_symmetric, its
// x86 default for static quantization), or per layer with o.PerTensor.
// c must be initialised; c itself is not changed.
func NewConv2D(c *nn.Conv2D, in QParams, o StaticOpts) (*Conv2D, error) {
	if c == nil {
		return nil, errors.New("quantization.NewConv2D: nil layer")
	}
	name := c.Name()
	if name == "" {
		name = "conv"
	}
	if c.Weight.Derivation() != nil {
		return nil, fmt.Errorf("quantization: %s: its weight is derived (weight or spectral norm); remove the derivation first", name)
	}
	if !c.Weight.Initialized() {
		return nil, fmt.Errorf("quantization: %s: its weight is not initialised (or its input channels not inferred yet: run the network once)", name)
	}
	wa := c.Weight.ListData()[0]
	shape := wa.Shape() // [channels, in/groups, kh, kw]
	opts := c.Options()
	var bias []float32
	if c.Bias != nil {
		if c.Bias.Derivation() != nil || !c.Bias.Initialized() {
			return nil, fmt.Errorf("quantization: %s: its bias is derived or not initialised", name)
		}
		bias = c.Bias.ListData()[0].Float32s()
	}
	k := shape[1] * shape[2] * shape[3]
	q, scales, err := quantizeWeights(wa.Float32s(), shape[0], k, !o.PerTensor)
	if err != nil {
		return nil, fmt.Errorf("quantization: %s: %v", name, err)
	}
	g := convGeom{channels: shape[0], inC: shape[1] * opts.Groups, kh: shape[2], kw: shape[3],
		stride: ones(opts.Stride), pad: opts.Pad, dilate: ones(opts.Dilate), groups: opts.Groups}
	qc, err := newConv2D(g, in, q, scales, bias, opts.Act)
	if err != nil {
		return nil, fmt.Errorf("quantization: %s: %v", name, err)
	}
	qc.SetName(c.Name())
	return qc, nil
}

// ones returns v with zeros (nn's defaults) replaced by 1.
func ones(v [2]int) [2]int { return [2]int{max(v[0], 1), max(v[1], 1)} }

// convGeom is a quantized convolution's shape.
type convGeom struct {
	channels, inC, kh, kw int
	stride, pad, dilate   [2]int
	groups                int
}

// newConv2D builds a quantized convolution from its state, checking it.
func newConv2D(g convGeom, in QParams, q []int8, scales, bias []float32, act string) (*Conv2D, error) {
	if g.groups < 1 || g.channels < 1 || g.inC < 1 || g.channels%g.groups != 0 || g.inC%g.groups != 0 || g.kh < 1 || g.kw < 1 {
		return nil, fmt.Errorf("%d channels from %d in %d groups with a %d×%d kernel", g.channels, g.inC, g.groups, g.kh, g.kw)
	}
	if min(g.stride[0], g.stride[1], g.dilate[0], g.dilate[1]) < 1 || min(g.pad[0], g.pad[1]) < 0 {
		return nil, fmt.Errorf("stride %v, padding %v, dilation %v", g.stride, g.pad, g.dilate)
	}
	k := g.inC / g.groups * g.kh * g.kw
	if len(q) != g.channels*k {
		return nil, fmt.Errorf("%d int8 weights for %d channels of %d", len(q), g.channels, k)
	}
	if k > 1<<16 {
		return nil, fmt.Errorf("%d inputs per output: at most 65536 keep the int32 sums exact", k)
	}
	if err := checkInput(in); err != nil {
		return nil, err
	}
	if len(scales) != 1 && len(scales) != g.channels {
		return nil, fmt.Errorf("%d weight scales for %d channels (want 1 or %d)", len(scales), g.channels, g.channels)
	}
	for _, s := range scales {
		if !(s > 0) || s > 3e38 {
			return nil, fmt.Errorf("weight scale %v is not a positive finite number", s)
		}
	}
	if bias != nil && len(bias) != g.channels {
		return nil, fmt.Errorf("%d biases for %d channels", len(bias), g.channels)
	}
	c := &Conv2D{BlockMeta: gluon.NewBlockMeta("conv"), channels: g.channels, inC: g.inC, kh: g.kh, kw: g.kw,
		stride: g.stride, pad: g.pad, dilate: g.dilate, groups: g.groups, actName: act, in: in,
		q: slices.Clone(q), scales: slices.Clone(scales), bias: slices.Clone(bias)}
	switch act {
	case "":
	case "relu":
		c.relu = true
	default:
		if err := nd.Catch(func() { c.act = nn.NewActivation(act) }); err != nil {
			return nil, err
		}
	}
	// Each group's weights in [out][kh][kw][in] order, Im2RowU8's.
	cg, ocg := g.inC/g.groups, g.channels/g.groups
	perm := make([]int8, ocg*k)
	for grp := range g.groups {
		for o := range ocg {
			src := c.q[(grp*ocg+o)*k:]
			for ci := range cg {
				for t := range g.kh * g.kw {
					perm[o*k+t*cg+ci] = src[ci*g.kh*g.kw+t]
				}
			}
		}
		c.packed = append(c.packed, nd.PackInt8(perm, ocg, k))
	}
	return c, nil
}

// checkInput checks an input quantization: a positive finite scale whose
// reciprocal is finite, a zero point in [0, 255].
func checkInput(in QParams) error {
	if !(in.Scale > 0) || math.IsInf(float64(in.Scale), 0) || math.IsInf(float64(1/in.Scale), 0) || in.Zero < 0 || in.Zero > 255 {
		return fmt.Errorf("input quantization %+v: want a positive finite scale and a zero point in [0, 255]", in)
	}
	return nil
}

// label names c in errors: its name, or "conv" for a root layer.
func (c *Conv2D) label() string {
	if n := c.Name(); n != "" {
		return n
	}
	return "conv"
}

// Channels returns the number of output channels.
func (c *Conv2D) Channels() int { return c.channels }

// InChannels returns the number of input channels.
func (c *Conv2D) InChannels() int { return c.inC }

// Weight returns a copy of the int8 weights ([channels, in/groups, kh,
// kw], row-major, nn.Conv2D's layout) and their scales (one, or one per
// output channel): w ≈ scale·q.
func (c *Conv2D) Weight() (q []int8, scales []float32) {
	return slices.Clone(c.q), slices.Clone(c.scales)
}

// Bias returns a copy of the float32 bias, or nil.
func (c *Conv2D) Bias() []float32 { return slices.Clone(c.bias) }

// Input returns the inputs' quantization: x_q = clamp(round(x/Scale) +
// Zero, 0, 255).
func (c *Conv2D) Input() QParams { return c.in }

// PerChannel reports whether the weights have a scale per output channel.
func (c *Conv2D) PerChannel() bool { return len(c.scales) > 1 }

// EagerOnly makes gluon.Hybridize run a network holding c eagerly: c
// computes on the host, which a trace cannot replay.
func (c *Conv2D) EagerOnly() string { return "int8 static quantization computes on the host" }

// convScratch is the host memory of one call.
type convScratch struct {
	x, c, y, s []float32
	xq, col    []uint8
}

var convPool = sync.Pool{New: func() any { return new(convScratch) }}

// colBytes is the size of unrolled activations a call stages at once:
// the images go through the product in chunks about this large.
const colBytes = 2 << 20

// Forward computes the layer on x, a float32 NCHW array on a CPU context.
// Inputs are quantized with the layer's fixed parameters (Input): values
// beyond the calibrated range are clamped to 0 or 255, and a NaN becomes
// 0. Running inside autograd.Record panics with an *nd.Error of kind
// ErrGraph (a quantized layer has no gradient).
func (c *Conv2D) Forward(x *nd.NDArray) *nd.NDArray {
	const op = "quantization.Conv2D"
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "%s: nil input", c.label())
	}
	s := x.Session()
	if s.IsRecording() {
		nd.Panicf(op, nd.ErrGraph, "%s is an int8 layer for inference: it cannot be recorded for backward; run it outside autograd.Record (quantize a copy of the network to keep training the float one)", c.label())
	}
	dev := x.Context()
	if dev.Kind != ctx.KindCPU {
		nd.Panicf(op, nd.ErrContext, "%s runs on CPU contexts, the input is on %v", c.label(), dev)
	}
	if x.DType() != nd.Float32 {
		nd.Panicf(op, nd.ErrDType, "%s takes float32 inputs, got %v (cast with AsType)", c.label(), x.DType())
	}
	shape := x.Shape()
	if len(shape) != 4 || shape[1] != c.inC {
		nd.Panicf(op, nd.ErrShape, "%s takes NCHW inputs of %d channels, got %v", c.label(), c.inC, shape)
	}
	g := nd.Im2RowGeom{N: shape[0], H: shape[2], W: shape[3], C: c.inC, KH: c.kh, KW: c.kw,
		StrideH: c.stride[0], StrideW: c.stride[1], PadH: c.pad[0], PadW: c.pad[1],
		DilateH: c.dilate[0], DilateW: c.dilate[1]}
	g.OutH = (g.H+2*g.PadH-g.DilateH*(g.KH-1)-1)/g.StrideH + 1
	g.OutW = (g.W+2*g.PadW-g.DilateW*(g.KW-1)-1)/g.StrideW + 1
	if g.H < 1 || g.W < 1 || g.OutH < 1 || g.OutW < 1 {
		nd.Panicf(op, nd.ErrShape, "%s: kernel %d×%d (dilation %v, padding %v) does not fit the input %v", c.label(), c.kh, c.kw, c.dilate, c.pad, shape)
	}
	buf := convPool.Get().(*convScratch)
	defer convPool.Put(buf)
	buf.y = grow(buf.y, g.N*c.channels*g.OutH*g.OutW)
	if g.N > 0 {
		buf.x = grow(buf.x, x.Size())
		x.ReadInto(buf.x)
		c.compute(buf, g)
	}
	y := s.FromSlice(dev, buf.y, g.N, c.channels, g.OutH, g.OutW)
	if c.act != nil {
		y = c.act.Forward(y)
	}
	return y
}

// compute quantizes buf.x and writes the layer's NCHW output to buf.y.
func (c *Conv2D) compute(buf *convScratch, g nd.Im2RowGeom) {
	hw, ohw := g.H*g.W, g.OutH*g.OutW
	// NHWC bytes, and 4 more: the kernels read rows in groups of 4.
	buf.xq = grow(buf.xq, g.N*hw*g.C+4)
	nd.QuantizeNHWCU8(buf.xq, g.C, buf.x, g.N, g.C, hw, 1/c.in.Scale, c.in.Zero)
	buf.s = grow(buf.s, len(c.scales))
	for j, sw := range c.scales {
		buf.s[j] = c.in.Scale * sw
	}
	cg, ocg := c.inC/c.groups, c.channels/c.groups
	k := cg * c.kh * c.kw
	lda := (k + 3) &^ 3
	direct := c.kh == 1 && c.kw == 1 && g.StrideH == 1 && g.StrideW == 1 && g.PadH == 0 && g.PadW == 0 && c.groups == 1
	per := g.N // images per chunk
	if !direct {
		per = min(g.N, max(1, colBytes/(ohw*lda)))
		buf.col = grow(buf.col, per*ohw*lda+4)
	}
	buf.c = grow(buf.c, per*ohw*c.channels)
	for i0 := 0; i0 < g.N; i0 += per {
		n := min(per, g.N-i0)
		part := g
		part.N = n
		rows := n * ohw
		xq := buf.xq[i0*hw*g.C:]
		for grp := range c.groups {
			a, ld := xq, g.C
			if !direct {
				nd.Im2RowU8(buf.col, lda, xq, g.C, part, grp*cg, cg, uint8(c.in.Zero))
				a, ld = buf.col, lda
			}
			sc := buf.s
			if len(sc) > 1 {
				sc = sc[grp*ocg : (grp+1)*ocg]
			}
			var b []float32
			if c.bias != nil {
				b = c.bias[grp*ocg : (grp+1)*ocg]
			}
			nd.GemmU8S8F32(rows, a, ld, c.in.Zero, c.packed[grp], sc, b, buf.c[grp*ocg:], c.channels)
		}
		nd.NHWCToNCHWF32(buf.y[i0*c.channels*ohw:], buf.c, c.channels, n, ohw, c.channels, c.relu)
	}
}

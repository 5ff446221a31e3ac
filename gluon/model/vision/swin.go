package vision

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// SwinOptions configure a SwinTransformer; zero values are Swin-T's
// (torchvision's swin_t). Options.Width is the patch embedding's width
// (default 96; the later stages are 2, 4 and 8 times as wide) and
// Options.StochasticDepth the last block's drop probability (default 0.2).
type SwinOptions struct {
	Options
	// PatchSize is the side of the patches the first convolution embeds
	// (default 4).
	PatchSize int
	// WindowSize is the side of the square attention windows (default 7).
	WindowSize int
	// Depths are the stages' numbers of blocks (default 2, 2, 6, 2).
	Depths [4]int
	// Heads are the stages' numbers of attention heads (default 3, 6, 12,
	// 24); each stage's width must be a multiple of its heads.
	Heads [4]int
	// MLPRatio is the blocks' MLP width over their width (default 4).
	MLPRatio float64
}

// SwinTransformer is torchvision's SwinTransformer (version 1), with its
// parameter names: features.0.{0,2} (the patch convolution and its
// LayerNorm), features.{1,3,5,7}.M (the blocks: norm1, attn.qkv,
// attn.proj, attn.relative_position_bias_table, norm2, mlp.0, mlp.3),
// features.{2,4,6} (patch merging: norm and reduction), norm and head.
// The blocks attend within windows, every second one shifted by half a
// window (a cyclic shift with torchvision's masks), with a learned bias
// per relative position; feature maps that are not a multiple of the
// window are padded, so that any input size of at least one patch works.
// torchvision's relative_position_index buffers are computed rather than
// stored: LoadStateDict skips them and SaveStateDict writes them.
// The LayerNorms have epsilon 1e-5; the residual branches have
// stochastic depth (Options.StochasticDepth, growing with the block's
// index to the last block's, as torchvision's).
type SwinTransformer struct {
	gluon.BlockMeta
	Features   *nn.Sequential
	Norm       *nn.LayerNorm
	Classifier *nn.Dense // "head"
	last       int
}

// SwinT returns Swin-T (width 96, 2-2-6-2 blocks of 3, 6, 12 and 24
// heads, windows of 7, stochastic depth 0.2).
func SwinT(o Options) *SwinTransformer {
	return newSwin("swin_t", SwinOptions{Options: o}, 96, [4]int{2, 2, 6, 2}, [4]int{3, 6, 12, 24}, 0.2)
}

// SwinS returns Swin-S (width 96, 2-2-18-2 blocks of 3, 6, 12 and 24
// heads, windows of 7, stochastic depth 0.3).
func SwinS(o Options) *SwinTransformer {
	return newSwin("swin_s", SwinOptions{Options: o}, 96, [4]int{2, 2, 18, 2}, [4]int{3, 6, 12, 24}, 0.3)
}

// SwinB returns Swin-B (width 128, 2-2-18-2 blocks of 4, 8, 16 and 32
// heads, windows of 7, stochastic depth 0.5).
func SwinB(o Options) *SwinTransformer {
	return newSwin("swin_b", SwinOptions{Options: o}, 128, [4]int{2, 2, 18, 2}, [4]int{4, 8, 16, 32}, 0.5)
}

// NewSwin returns a SwinTransformer of the given configuration (Swin-T
// with zero options).
func NewSwin(o SwinOptions) *SwinTransformer {
	return newSwin("swin", o, 96, [4]int{2, 2, 6, 2}, [4]int{3, 6, 12, 24}, 0.2)
}

func newSwin(kind string, o SwinOptions, width int, depths, heads [4]int, sd float64) *SwinTransformer {
	if o.Width <= 0 {
		o.Width = width
	}
	if o.Depths == [4]int{} {
		o.Depths = depths
	}
	if o.Heads == [4]int{} {
		o.Heads = heads
	}
	if o.PatchSize <= 0 {
		o.PatchSize = 4
	}
	if o.WindowSize <= 0 {
		o.WindowSize = 7
	}
	if o.MLPRatio <= 0 {
		o.MLPRatio = 4
	}
	o.Options = o.Options.withDefaults()
	op := "vision." + kind
	p := depthRate(op, o.Options, sd)
	drop := rate(o.Dropout, 0)
	w := o.Width
	total := 0
	for i, d := range o.Depths {
		if d <= 0 || o.Heads[i] <= 0 || (w<<i)%o.Heads[i] != 0 {
			nd.Panicf(op, nd.ErrArgument, "stage %d: %d blocks of width %d in %d heads", i, d, w<<i, o.Heads[i])
		}
		total += d
	}
	patch := nn.NewConv2D(w, o.PatchSize, nn.Conv2DOpts{
		Stride: [2]int{o.PatchSize, o.PatchSize}, InChannels: o.InChannels, WeightInit: torchLinear})
	features := []gluon.Block{seq(patch, permute(0, 2, 3, 1), swinNorm(w))}
	id := 0
	for i, n := range o.Depths {
		c := w << i
		var stage []gluon.Block
		for j := range n {
			shift := 0
			if j%2 == 1 {
				shift = o.WindowSize / 2
			}
			sdp := 0.0
			if total > 1 {
				sdp = p * float64(id) / float64(total-1)
			}
			stage = append(stage, newSwinBlock(c, o.Heads[i], o.WindowSize, shift, int(float64(c)*o.MLPRatio), sdp, drop))
			id++
		}
		features = append(features, seq(stage...))
		if i < len(o.Depths)-1 {
			features = append(features, newPatchMerging(c))
		}
	}
	last := w << 3
	m := &SwinTransformer{BlockMeta: gluon.NewBlockMeta(kind), last: last}
	m.Features = named("features", seq(features...))
	m.Norm = named("norm", swinNorm(last))
	m.Classifier = named("head", nn.NewDense(o.Classes, nn.DenseOpts{InUnits: last, WeightInit: truncNormal}))
	m.AddChild(m.Features)
	m.AddChild(m.Norm)
	m.AddChild(m.Classifier)
	return m
}

// swinNorm is Swin's LayerNorm over the last axis (epsilon 1e-5).
func swinNorm(c int) *nn.LayerNorm {
	l := nn.NewLayerNorm(-1, nn.NormOpts{Epsilon: 1e-5, InChannels: c})
	l.Gamma.Rename("weight")
	l.Beta.Rename("bias")
	l.Gamma.Init, l.Beta.Init = initializer.One(), initializer.Zero()
	return l
}

// Forward maps NCHW images to class scores: the stages work on NHWC
// maps, which the final LayerNorm normalises and the head classifies
// after average pooling.
func (m *SwinTransformer) Forward(x *nd.NDArray) *nd.NDArray {
	y := m.Norm.Forward(m.Features.Forward(x)) // [N, H, W, C]
	return m.Classifier.Forward(nd.Flatten(nd.GlobalAvgPool2D(nd.Transpose(y, 0, 3, 1, 2))))
}

// Head returns "head".
func (m *SwinTransformer) Head() string { return "head" }

// ReplaceHead gives the network a new classifier (see ResNet.ReplaceHead).
func (m *SwinTransformer) ReplaceHead(classes int) *nn.Dense {
	m.Classifier = newHead(&m.BlockMeta, "head", m.Classifier, linear(m.last, classes))
	return m.Classifier
}

// ExportONNX writes the SwinTransformer.
func (m *SwinTransformer) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	y, err := chain(g, x, m.Features, m.Norm)
	if err != nil {
		return "", err
	}
	return pooledHead(g, onnxTranspose(g, y, 0, 3, 1, 2), m.Classifier)
}

// swinBlock is torchvision's SwinTransformerBlock: window attention and
// an MLP (GELU), each after a LayerNorm, with stochastic depth, around
// residual connections, on NHWC maps.
type swinBlock struct {
	gluon.BlockMeta
	norm1, norm2 *nn.LayerNorm
	attn         *windowAttention
	mlp          *nn.Sequential
	drop         float64
}

func newSwinBlock(c, heads, window, shift, hidden int, sd, drop float64) *swinBlock {
	b := &swinBlock{BlockMeta: gluon.NewBlockMeta("swintransformerblock"), drop: sd}
	b.norm1 = named("norm1", swinNorm(c))
	b.attn = named("attn", newWindowAttention(c, heads, window, shift, drop))
	b.norm2 = named("norm2", swinNorm(c))
	mlp := func(in, out int) *nn.Dense {
		return nn.NewDense(out, nn.DenseOpts{InUnits: in, NoFlatten: true, WeightInit: initializer.Xavier{},
			BiasInit: initializer.Normal{Sigma: 1e-6}})
	}
	b.mlp = named("mlp", seq(mlp(c, hidden), nn.NewGELU(false), dropout(drop), mlp(hidden, c), dropout(drop)))
	for _, ch := range []gluon.Component{b.norm1, b.attn, b.norm2, b.mlp} {
		b.AddChild(ch)
	}
	return b
}

func (b *swinBlock) Forward(x *nd.NDArray) *nd.NDArray {
	x = nd.Add(x, stochasticDepth(b.attn.Forward(b.norm1.Forward(x)), b.drop))
	return nd.Add(x, stochasticDepth(b.mlp.Forward(b.norm2.Forward(x)), b.drop))
}

// ExportONNX writes the block (stochastic depth is the identity in
// predict mode).
func (b *swinBlock) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	a, err := chain(g, x, b.norm1, b.attn)
	if err != nil {
		return "", err
	}
	h := g.Op("Add", []string{x, a}, nil, 1)[0]
	f, err := chain(g, h, b.norm2, b.mlp)
	if err != nil {
		return "", err
	}
	return g.Op("Add", []string{h, f}, nil, 1)[0], nil
}

// patchMerging is torchvision's PatchMerging: each 2×2 neighbourhood's
// channels side by side (the map padded to even sides), a LayerNorm and
// a linear reduction to twice the width.
type patchMerging struct {
	gluon.BlockMeta
	norm      *nn.LayerNorm
	reduction *nn.Dense
}

func newPatchMerging(c int) *patchMerging {
	p := &patchMerging{BlockMeta: gluon.NewBlockMeta("patchmerging")}
	p.reduction = named("reduction", nn.NewDense(2*c, nn.DenseOpts{InUnits: 4 * c, NoFlatten: true, NoBias: true, WeightInit: truncNormal}))
	p.norm = named("norm", swinNorm(4*c))
	p.AddChild(p.reduction)
	p.AddChild(p.norm)
	return p
}

func (p *patchMerging) Forward(x *nd.NDArray) *nd.NDArray {
	s := x.Shape()
	n, h, w, c := s[0], s[1], s[2], s[3]
	if h%2 != 0 || w%2 != 0 {
		x = nd.Pad(x, [][2]int{{0, 0}, {0, h % 2}, {0, w % 2}, {0, 0}}, nd.PadConstant, 0)
		h, w = h+h%2, w+w%2
	}
	// torchvision's cat of x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2],
	// x[1::2, 1::2]: the column offset varies slowest.
	x = nd.Reshape(nd.Transpose(nd.Reshape(x, n, h/2, 2, w/2, 2, c), 0, 1, 3, 4, 2, 5), n, h/2, w/2, 4*c)
	return p.reduction.Forward(p.norm.Forward(x))
}

// ExportONNX writes the merging for the example's map size.
func (p *patchMerging) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	s, err := onnxShape(g, x, "patch merging")
	if err != nil {
		return "", err
	}
	h, w, c := s[1], s[2], s[3]
	if h%2 != 0 || w%2 != 0 {
		x = onnxPad(g, x, [][2]int{{0, 0}, {0, h % 2}, {0, w % 2}, {0, 0}})
		h, w = h+h%2, w+w%2
	}
	x = onnxReshape(g, x, -1, h/2, 2, w/2, 2, c)
	x = onnxReshape(g, onnxTranspose(g, x, 0, 1, 3, 4, 2, 5), -1, h/2, w/2, 4*c)
	return chain(g, x, p.norm, p.reduction)
}

// windowAttention is torchvision's ShiftedWindowAttention: multi-head
// self-attention within square windows of the NHWC map (shifted
// cyclically by shift, with torchvision's mask between the regions the
// shift brings together), with a learned bias per relative position and
// head (relative_position_bias_table).
type windowAttention struct {
	gluon.BlockMeta
	qkv, proj            *nn.Dense
	table                *gluon.Parameter
	drop                 gluon.Block
	window, shift, heads int
	index                []int64 // torchvision's relative_position_index
}

func newWindowAttention(c, heads, window, shift int, drop float64) *windowAttention {
	a := &windowAttention{BlockMeta: gluon.NewBlockMeta("shiftedwindowattention"), window: window, shift: shift, heads: heads,
		index: relativePositionIndex(window), drop: dropout(drop)}
	a.qkv = named("qkv", nn.NewDense(3*c, nn.DenseOpts{InUnits: c, NoFlatten: true, WeightInit: truncNormal}))
	a.proj = named("proj", nn.NewDense(c, nn.DenseOpts{InUnits: c, NoFlatten: true, WeightInit: truncNormal}))
	a.table = a.AddParam(gluon.NewParameter("relative_position_bias_table", (2*window-1)*(2*window-1), heads))
	a.table.Init = truncNormal
	a.AddChild(a.qkv)
	a.AddChild(a.proj)
	return a
}

// relativePositionIndex is torchvision's relative_position_index for
// square windows of side ws: for each pair of positions (i, j) of a
// window, row-major, the row of the bias table of their offset.
func relativePositionIndex(ws int) []int64 {
	n := ws * ws
	idx := make([]int64, n*n)
	for i := range n {
		for j := range n {
			dh, dw := i/ws-j/ws+ws-1, i%ws-j%ws+ws-1
			idx[i*n+j] = int64(dh*(2*ws-1) + dw)
		}
	}
	return idx
}

// windowGeometry is what the attention does to an h×w map: the padded
// sides, the shifts (none along a side the window covers) and the
// windows.
type windowGeometry struct {
	padH, padW, shiftH, shiftW, nh, nw int
}

func (a *windowAttention) geometry(h, w int) windowGeometry {
	ws := a.window
	g := windowGeometry{padH: h + (ws-h%ws)%ws, padW: w + (ws-w%ws)%ws, shiftH: a.shift, shiftW: a.shift}
	if ws >= g.padH {
		g.shiftH = 0
	}
	if ws >= g.padW {
		g.shiftW = 0
	}
	g.nh, g.nw = g.padH/ws, g.padW/ws
	return g
}

func (g windowGeometry) shifted() bool { return g.shiftH+g.shiftW > 0 }

// shiftMask is torchvision's attention mask of a shifted map: [windows,
// N, N], −100 between positions of different regions, else 0.
func (a *windowAttention) shiftMask(g windowGeometry) []float32 {
	ws := a.window
	label := make([]int, g.padH*g.padW)
	type span struct {
		start, end int
		open       bool // to the end
	}
	resolve := func(s span, n int) (int, int) { // Python's slice bounds
		b, e := s.start, s.end
		if b < 0 {
			b += n
		}
		if s.open {
			e = n
		} else if e < 0 {
			e += n
		}
		return max(b, 0), max(e, 0)
	}
	hs := []span{{0, -ws, false}, {-ws, -g.shiftH, false}, {-g.shiftH, 0, true}}
	wsl := []span{{0, -ws, false}, {-ws, -g.shiftW, false}, {-g.shiftW, 0, true}}
	count := 0
	for _, hsp := range hs {
		for _, wsp := range wsl {
			h0, h1 := resolve(hsp, g.padH)
			w0, w1 := resolve(wsp, g.padW)
			for i := h0; i < h1; i++ {
				for j := w0; j < w1; j++ {
					label[i*g.padW+j] = count
				}
			}
			count++
		}
	}
	n := ws * ws
	mask := make([]float32, g.nh*g.nw*n*n)
	for wi := range g.nh {
		for wj := range g.nw {
			win := wi*g.nw + wj
			lab := func(p int) int { return label[(wi*ws+p/ws)*g.padW+wj*ws+p%ws] }
			for p := range n {
				for q := range n {
					if lab(p) != lab(q) {
						mask[(win*n+p)*n+q] = -100
					}
				}
			}
		}
	}
	return mask
}

func (a *windowAttention) Forward(x *nd.NDArray) *nd.NDArray {
	s := x.Shape()
	b, h, w, c := s[0], s[1], s[2], s[3]
	ws, heads := a.window, a.heads
	g := a.geometry(h, w)
	if g.padH != h || g.padW != w {
		x = nd.Pad(x, [][2]int{{0, 0}, {0, g.padH - h}, {0, g.padW - w}, {0, 0}}, nd.PadConstant, 0)
	}
	if g.shiftH > 0 {
		x = nd.Roll(x, -g.shiftH, 1)
	}
	if g.shiftW > 0 {
		x = nd.Roll(x, -g.shiftW, 2)
	}
	nW, n, hd := g.nh*g.nw, ws*ws, c/heads
	x = nd.Reshape(nd.Transpose(nd.Reshape(x, b, g.nh, ws, g.nw, ws, c), 0, 1, 3, 2, 4, 5), b*nW, n, c)
	qkv := nd.Transpose(nd.Reshape(a.qkv.Forward(x), b*nW, n, 3, heads, hd), 2, 0, 3, 1, 4)
	parts := nd.Split(qkv, 3, 0)
	q := nd.MulScalar(nd.Reshape(parts[0], b*nW, heads, n, hd), math.Pow(float64(hd), -0.5))
	k := nd.Reshape(parts[1], b*nW, heads, n, hd)
	v := nd.Reshape(parts[2], b*nW, heads, n, hd)
	attn := nd.MatMul(q, nd.Transpose(k, 0, 1, 3, 2))
	sess, dev := x.Session(), x.Context()
	idx := sess.FromSlice(dev, a.index, n*n)
	bias := nd.Transpose(nd.Reshape(nd.Take(a.table.DataFor(x), idx, 0), n, n, heads), 2, 0, 1)
	attn = nd.Add(attn, bias)
	if g.shifted() {
		mask := sess.FromSlice(dev, a.shiftMask(g), 1, nW, 1, n, n)
		if mask.DType() != attn.DType() {
			mask = mask.AsType(attn.DType())
		}
		attn = nd.Reshape(nd.Add(nd.Reshape(attn, b, nW, heads, n, n), mask), b*nW, heads, n, n)
	}
	attn = nd.Softmax(attn, -1)
	x = nd.Reshape(nd.Transpose(nd.MatMul(attn, v), 0, 2, 1, 3), b*nW, n, c)
	x = a.drop.Forward(a.proj.Forward(x))
	x = nd.Reshape(nd.Transpose(nd.Reshape(x, b, g.nh, g.nw, ws, ws, c), 0, 1, 3, 2, 4, 5), b, g.padH, g.padW, c)
	if g.shiftH > 0 {
		x = nd.Roll(x, g.shiftH, 1)
	}
	if g.shiftW > 0 {
		x = nd.Roll(x, g.shiftW, 2)
	}
	if g.padH != h {
		x = nd.SliceAxis(x, 0, h, 1)
	}
	if g.padW != w {
		x = nd.SliceAxis(x, 0, w, 2)
	}
	return x
}

// ExportONNX writes the window attention for the example's map size
// (the batch stays free).
func (a *windowAttention) ExportONNX(g gluon.ONNXGraph, x string) (string, error) {
	s, err := onnxShape(g, x, "window attention")
	if err != nil {
		return "", err
	}
	h, w, c := s[1], s[2], s[3]
	ws, heads := a.window, a.heads
	geo := a.geometry(h, w)
	if geo.padH != h || geo.padW != w {
		x = onnxPad(g, x, [][2]int{{0, 0}, {0, geo.padH - h}, {0, geo.padW - w}, {0, 0}})
	}
	x = onnxRoll(g, x, -geo.shiftH, 1, geo.padH)
	x = onnxRoll(g, x, -geo.shiftW, 2, geo.padW)
	nW, n, hd := geo.nh*geo.nw, ws*ws, c/heads
	x = onnxReshape(g, x, -1, geo.nh, ws, geo.nw, ws, c)
	x = onnxReshape(g, onnxTranspose(g, x, 0, 1, 3, 2, 4, 5), -1, n, c)
	qkv, err := g.Block(a.qkv, x)
	if err != nil {
		return "", err
	}
	qkv = onnxTranspose(g, onnxReshape(g, qkv, -1, n, 3, heads, hd), 2, 0, 3, 1, 4)
	part := func(i int) string {
		return g.Op("Gather", []string{qkv, g.Const([]int64{int64(i)})}, map[string]any{"axis": 0}, 1)[0]
	}
	q := g.Op("Mul", []string{part(0), g.Const([]float32{float32(math.Pow(float64(hd), -0.5))})}, nil, 1)[0]
	attn := g.Op("MatMul", []string{q, onnxTranspose(g, part(1), 0, 1, 3, 2)}, nil, 1)[0]
	bias := g.Op("Gather", []string{g.Param(a.table), g.Const(a.index, n*n)}, map[string]any{"axis": 0}, 1)[0]
	bias = onnxTranspose(g, onnxReshape(g, bias, n, n, heads), 2, 0, 1)
	attn = g.Op("Add", []string{attn, bias}, nil, 1)[0]
	if geo.shifted() {
		attn = onnxReshape(g, attn, -1, nW, heads, n, n)
		attn = g.Op("Add", []string{attn, g.Const(a.shiftMask(geo), 1, nW, 1, n, n)}, nil, 1)[0]
		attn = onnxReshape(g, attn, -1, heads, n, n)
	}
	attn = g.Op("Softmax", []string{attn}, map[string]any{"axis": -1}, 1)[0]
	y := g.Op("MatMul", []string{attn, part(2)}, nil, 1)[0]
	y = onnxReshape(g, onnxTranspose(g, y, 0, 2, 1, 3), -1, n, c)
	if y, err = g.Block(a.proj, y); err != nil {
		return "", err
	}
	y = onnxReshape(g, y, -1, geo.nh, geo.nw, ws, ws, c)
	y = onnxReshape(g, onnxTranspose(g, y, 0, 1, 3, 2, 4, 5), -1, geo.padH, geo.padW, c)
	y = onnxRoll(g, y, geo.shiftH, 1, geo.padH)
	y = onnxRoll(g, y, geo.shiftW, 2, geo.padW)
	if geo.padH != h || geo.padW != w {
		y = onnxSlice(g, y, []int64{0, 0}, []int64{int64(h), int64(w)}, []int64{1, 2})
	}
	return y, nil
}

// onnxShape is x's shape in the example, from a graph that gives shapes.
func onnxShape(g gluon.ONNXGraph, x, what string) ([]int, error) {
	sg, ok := g.(gluon.ONNXShapes)
	if !ok {
		return nil, fmt.Errorf("%s needs its input's shape: the ONNX graph does not give shapes (gluon.ONNXShapes)", what)
	}
	return sg.Shape(x)
}

// onnxReshape writes Reshape to shape (one entry may be −1).
func onnxReshape(g gluon.ONNXGraph, x string, shape ...int) string {
	s := make([]int64, len(shape))
	for i, d := range shape {
		s[i] = int64(d)
	}
	return g.Op("Reshape", []string{x, g.Const(s, len(s))}, nil, 1)[0]
}

// onnxTranspose writes Transpose with the given permutation.
func onnxTranspose(g gluon.ONNXGraph, x string, perm ...int) string {
	return g.Op("Transpose", []string{x}, map[string]any{"perm": perm}, 1)[0]
}

// onnxSlice writes Slice of [starts, ends) along axes.
func onnxSlice(g gluon.ONNXGraph, x string, starts, ends, axes []int64) string {
	return g.Op("Slice", []string{x, g.Const(starts, len(starts)), g.Const(ends, len(ends)), g.Const(axes, len(axes))}, nil, 1)[0]
}

// onnxPad writes Pad with zeros, widths[d] before and after axis d.
func onnxPad(g gluon.ONNXGraph, x string, widths [][2]int) string {
	pads := make([]int64, 2*len(widths))
	for i, w := range widths {
		pads[i], pads[len(widths)+i] = int64(w[0]), int64(w[1])
	}
	return g.Op("Pad", []string{x, g.Const(pads, len(pads))}, nil, 1)[0]
}

// onnxRoll writes nd.Roll by shift along axis (of size n) as two Slices
// and a Concat.
func onnxRoll(g gluon.ONNXGraph, x string, shift, axis, n int) string {
	s := ((shift % n) + n) % n
	if s == 0 {
		return x
	}
	ax := []int64{int64(axis)}
	tail := onnxSlice(g, x, []int64{int64(n - s)}, []int64{int64(n)}, ax)
	head := onnxSlice(g, x, []int64{0}, []int64{int64(n - s)}, ax)
	return g.Op("Concat", []string{tail, head}, map[string]any{"axis": axis}, 1)[0]
}

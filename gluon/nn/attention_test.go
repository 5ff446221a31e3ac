package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// adapter turns a MultiBlock with extra fixed inputs into a Block of its
// first input, so the single-input helpers (randomizeParams, CheckGrad)
// drive it.
type adapter struct {
	gluon.Component
	extra []*nd.NDArray
	out   int
}

func (a adapter) Forward(x *nd.NDArray) *nd.NDArray {
	return gluon.Call(a.Component, append([]*nd.NDArray{x}, a.extra...)...)[a.out]
}

func boolMask(dev ctx.Context, rows, cols int, f func(i, j int) bool) *nd.NDArray {
	m := make([]bool, rows*cols)
	for i := range rows {
		for j := range cols {
			m[i*cols+j] = f(i, j)
		}
	}
	return nd.FromSlice(dev, m, rows, cols)
}

// TestAttentionGradients checks every input and parameter gradient of
// attention and the transformer layers numerically in float64, masks
// included. Key, value and memory are inputs of the check too.
func TestAttentionGradients(t *testing.T) {
	pad := boolMask(cpu0, 2, 5, func(i, j int) bool { return j == 4 || (i == 1 && j == 2) })
	causal := boolMask(cpu0, 3, 3, func(i, j int) bool { return j > i })
	ntc := nn.AttentionOpts{Layout: "NTC"}
	for _, tc := range []struct {
		name      string
		block     func() gluon.Component
		in        []int   // query / src / tgt
		others    [][]int // further float inputs checked: key, value or memory
		masks     []*nd.NDArray
		out       int
		minParams int
	}{
		{"mha/self", func() gluon.Component { return nn.NewMultiHeadAttention(4, 2, nn.AttentionOpts{}) },
			[]int{3, 2, 4}, nil, nil, 0, 4},
		{"mha/self-weights-causal", func() gluon.Component {
			return nn.NewMultiHeadAttention(4, 2, nn.AttentionOpts{Causal: true, Layout: "NTC"})
		}, []int{2, 3, 4}, nil, nil, 1, 4},
		{"mha/cross-padding", func() gluon.Component { return nn.NewMultiHeadAttention(4, 2, ntc) },
			[]int{2, 3, 4}, [][]int{{2, 5, 4}, {2, 5, 4}}, []*nd.NDArray{pad}, 0, 4},
		{"mha/cross-no-bias-weights", func() gluon.Component {
			return nn.NewMultiHeadAttention(6, 3, nn.AttentionOpts{NoBias: true, Layout: "NTC"})
		}, []int{2, 3, 6}, [][]int{{2, 5, 6}, {2, 5, 6}}, []*nd.NDArray{pad}, 1, 2},
		{"encoder/post-norm", func() gluon.Component {
			return nn.NewTransformerEncoderLayer(4, 2, nn.TransformerOpts{FeedForward: 6})
		}, []int{3, 2, 4}, nil, []*nd.NDArray{nil, causal}, 0, 12},
		{"encoder/pre-norm-gelu", func() gluon.Component {
			return nn.NewTransformerEncoderLayer(4, 2, nn.TransformerOpts{FeedForward: 6, NormFirst: true, Activation: "gelu", Layout: "NTC"})
		}, []int{2, 5, 4}, nil, []*nd.NDArray{pad}, 0, 12},
		{"decoder/post-norm", func() gluon.Component {
			return nn.NewTransformerDecoderLayer(4, 2, nn.TransformerOpts{FeedForward: 5, Layout: "NTC", Causal: true})
		}, []int{2, 3, 4}, [][]int{{2, 5, 4}}, []*nd.NDArray{nil, nil, nil, pad}, 0, 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := ndtest.Rand(cpu0, 7, -1.5, 1.5, tc.in...)
			var others []*nd.NDArray
			for i, s := range tc.others {
				others = append(others, ndtest.Rand(cpu0, uint64(20+i), -1.5, 1.5, s...))
			}
			b := adapter{tc.block(), append(slices.Clone(others), tc.masks...), tc.out}
			learn, names := randomizeParams(t, b, x)
			if len(learn) < tc.minParams {
				t.Fatalf("%d learnable parameters %v, want at least %d", len(learn), names, tc.minParams)
			}
			inputs := append(append([]*nd.NDArray{x}, others...), learn...)
			ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray {
				// The parameters are read through the block; the other
				// float inputs are passed positionally.
				args := append(append([]*nd.NDArray{in[0]}, in[1:1+len(others)]...), tc.masks...)
				return gluon.Call(b.Component, args...)[tc.out]
			}, inputs, ndtest.GradTol{})
		})
	}
}

// TestAttentionNames checks PyTorch's parameter names and shapes.
func TestAttentionNames(t *testing.T) {
	for _, tc := range []struct {
		b    gluon.Component
		want map[string][]int
	}{
		{nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{}), map[string][]int{
			"in_proj_weight": {24, 8}, "in_proj_bias": {24}, "out_proj.weight": {8, 8}, "out_proj.bias": {8}}},
		{nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{NoBias: true}), map[string][]int{
			"in_proj_weight": {24, 8}, "out_proj.weight": {8, 8}}},
		{nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16}), map[string][]int{
			"self_attn.in_proj_weight": {24, 8}, "self_attn.in_proj_bias": {24}, "self_attn.out_proj.weight": {8, 8},
			"self_attn.out_proj.bias": {8}, "linear1.weight": {16, 8}, "linear1.bias": {16}, "linear2.weight": {8, 16},
			"linear2.bias": {8}, "norm1.gamma": {8}, "norm1.beta": {8}, "norm2.gamma": {8}, "norm2.beta": {8}}},
	} {
		got := shapesOf(gluon.CollectParams(tc.b))
		if !mapsEqual(got, tc.want) {
			t.Errorf("%T parameters %v, want %v", tc.b, got, tc.want)
		}
	}
	dec := gluon.CollectParams(nn.NewTransformerDecoderLayer(8, 2, nn.TransformerOpts{}))
	for _, name := range []string{"multihead_attn.in_proj_weight", "norm3.gamma", "linear1.weight"} {
		if dec.Get(name) == nil {
			t.Errorf("decoder has no %s among %v", name, dec.Names())
		}
	}
	if got := dec.Get("linear1.weight").Shape(); !slices.Equal(got, []int{2048, 8}) {
		t.Errorf("default feed-forward weight %v, want [2048 8] (PyTorch's default)", got)
	}
}

func mapsEqual(a, b map[string][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// TestAttentionBehaviour checks what the goldens do not pin: the causal
// mask with more keys than queries, head-averaged weights that sum to one,
// masked keys that get no weight, and dropout on the weights in training
// mode only.
func TestAttentionBehaviour(t *testing.T) {
	m := nn.CausalMask(nd.Zeros(cpu0, nd.Float32, 1), 2, 4)
	want := []bool{false, false, false, true, false, false, false, false}
	if got := m.Bools(); !slices.Equal(got, want) {
		t.Errorf("CausalMask(2, 4) = %v, want %v (the diagonal aligned to the end)", got, want)
	}

	a := nn.NewMultiHeadAttention(4, 2, nn.AttentionOpts{Layout: "NTC", Dropout: 0.5})
	initNet(t, adapter{a, nil, 0}, initializer.Xavier{}, nd.Float64)
	q := randX(cpu0, 3, 2, 3, 4).AsType(nd.Float64)
	kv := randX(cpu0, 4, 2, 5, 4).AsType(nd.Float64)
	pad := boolMask(cpu0, 2, 5, func(i, j int) bool { return j >= 3+i })
	out := gluon.Call(a, q, kv, kv, pad)
	w := out[1]
	if !slices.Equal(w.Shape(), []int{2, 3, 5}) {
		t.Fatalf("weights shape %v, want [2 3 5]", w.Shape())
	}
	ws := w.Float64s()
	for r := range 6 {
		sum := 0.0
		for j := range 5 {
			v := ws[r*5+j]
			if n := r / 3; j >= 3+n && v != 0 {
				t.Errorf("batch %d query %d: padded key %d has weight %g", n, r%3, j, v)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("row %d of the weights sums to %g", r, sum)
		}
	}
	again := gluon.Call(a, q, kv, kv, pad)[0]
	allClose(t, "inference is deterministic (no dropout)", again, out[0], 0, 0)
	var train *nd.NDArray
	forwardRecord(true, func() { train = gluon.Call(a, q, kv, kv, pad)[0] })
	if slices.Equal(train.Float64s(), out[0].Float64s()) {
		t.Error("dropout 0.5 on the weights changed nothing in training mode")
	}
}

func TestAttentionErrors(t *testing.T) {
	a := nn.NewMultiHeadAttention(4, 2, nn.AttentionOpts{})
	initNet(t, adapter{a, nil, 0}, initializer.Xavier{}, nd.Float32, cpu0, cpu1)
	x := randX(cpu0, 1, 3, 2, 4)
	for _, tc := range []struct {
		name string
		kind nd.ErrorKind
		f    func()
		want []string
	}{
		{"heads-divide", nd.ErrArgument, func() { nn.NewMultiHeadAttention(6, 4, nn.AttentionOpts{}) }, []string{"6", "4"}},
		{"layout", nd.ErrArgument, func() { nn.NewMultiHeadAttention(4, 2, nn.AttentionOpts{Layout: "CTN"}) }, []string{"CTN"}},
		{"dropout", nd.ErrArgument, func() { nn.NewTransformerEncoderLayer(4, 2, nn.TransformerOpts{Dropout: 1}) }, []string{"dropout"}},
		{"activation", nd.ErrArgument, func() { nn.NewTransformerEncoderLayer(4, 2, nn.TransformerOpts{Activation: "tanh"}) }, []string{"tanh"}},
		{"features", nd.ErrShape, func() { a.Forward(randX(cpu0, 1, 3, 2, 5)) }, []string{"query", "[3 2 5]"}},
		{"rank", nd.ErrShape, func() { a.Forward(randX(cpu0, 1, 3, 4)) }, []string{"query"}},
		{"key-length", nd.ErrShape, func() { gluon.Call(a, x, randX(cpu0, 1, 5, 2, 4), randX(cpu0, 1, 4, 2, 4)) }, []string{"key"}},
		{"padding-shape", nd.ErrShape, func() {
			gluon.Call(a, x, nil, nil, boolMask(cpu0, 3, 3, func(int, int) bool { return false }))
		}, []string{"key-padding", "[2 3]"}},
		{"mask-shape", nd.ErrShape, func() {
			gluon.Call(a, x, nil, nil, nil, boolMask(cpu0, 2, 3, func(int, int) bool { return false }))
		}, []string{"attention mask", "[3 3]"}},
		{"too-many", nd.ErrArgument, func() { gluon.Call(a, x, x, x, nil, nil, nil) }, []string{"6 inputs"}},
		{"mixed-contexts", nd.ErrContext, func() { gluon.Call(a, x, randX(cpu1, 1, 3, 2, 4), nil) }, []string{"cpu(0)", "cpu(1)"}},
		{"decoder-memory", nd.ErrArgument, func() {
			gluon.Call(nn.NewTransformerDecoderLayer(4, 2, nn.TransformerOpts{FeedForward: 4}), x)
		}, []string{"memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) { mustNDPanic(t, tc.kind, tc.f, tc.want...) })
	}
}

// TestAttentionMultiContext runs a transformer layer on cpu(0) and cpu(1)
// from the same parameters: outputs and gradients agree bit for bit and
// every replica's gradient lives on its own context.
func TestAttentionMultiContext(t *testing.T) {
	b := adapter{nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC", Causal: true}), nil, 0}
	params := initNet(t, b, initializer.Xavier{}, nd.Float32, cpu0, cpu1)
	x0 := randX(cpu0, 5, 2, 6, 8)
	x1 := x0.CopyTo(cpu1)
	var y [2]*nd.NDArray
	autograd.Record(func() {
		for i, x := range []*nd.NDArray{x0, x1} {
			y[i] = b.Forward(x)
			autograd.Backward(nd.Sum(nd.Square(y[i])))
		}
	})
	if y[0].Context() != cpu0 || y[1].Context() != cpu1 {
		t.Fatalf("outputs on %v and %v", y[0].Context(), y[1].Context())
	}
	allClose(t, "cpu(1) output vs cpu(0)", y[1], y[0], 0, 0)
	for _, p := range params.List() {
		g := p.ListGrad()
		if len(g) != 2 || g[0].Context() != cpu0 || g[1].Context() != cpu1 {
			t.Fatalf("%s: gradients %v", p.Name(), g)
		}
		allClose(t, p.Name()+" gradient on cpu(1) vs cpu(0)", g[1], g[0], 0, 0)
	}
}

package nn_test

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens_attention.py (PyTorch,
// float64): MultiheadAttention and the transformer layers with their
// state_dicts, inputs, masks, head gradients, outputs and the gradients of
// the inputs and of every parameter.

type attTensor = goldentest.Tensor

type attCase struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Config struct {
		Embed, Heads, FFN int
		BatchFirst        bool `json:"batch_first"`
		NormFirst         bool `json:"norm_first"`
		Bias, Causal      bool
		Activation        string
		Layers            int
		Norm              bool
		EncLayers         int `json:"enc_layers"`
		DecLayers         int `json:"dec_layers"`
	} `json:"config"`
	Params  map[string]attTensor `json:"params"`
	Inputs  map[string]attTensor `json:"inputs"`
	Masks   map[string]attTensor `json:"masks"`
	Heads   []attTensor          `json:"heads"`
	Outputs []attTensor          `json:"outputs"`
	Grads   map[string]attTensor `json:"grads"`
}

// inputOrder is each kind's ForwardMulti argument order, PyTorch's names.
var inputOrder = map[string][]string{
	"mha":           {"query", "key", "value", "key_padding_mask", "attn_mask"},
	"encoder":       {"src", "src_key_padding_mask", "attn_mask"},
	"decoder":       {"tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"},
	"encoder_stack": {"src", "src_key_padding_mask", "attn_mask"},
	"decoder_stack": {"tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask"},
	"transformer":   {"src", "tgt", "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask", "tgt_key_padding_mask", "memory_key_padding_mask"},
}

func buildAttention(t *testing.T, c attCase) gluon.Component {
	t.Helper()
	cf := c.Config
	layout := "TNC"
	if cf.BatchFirst {
		layout = "NTC"
	}
	to := nn.TransformerOpts{FeedForward: cf.FFN, Activation: cf.Activation, NormFirst: cf.NormFirst, Layout: layout, Causal: cf.Causal}
	var b gluon.Component
	switch c.Kind {
	case "mha":
		b = nn.NewMultiHeadAttention(cf.Embed, cf.Heads, nn.AttentionOpts{NoBias: !cf.Bias, Layout: layout, Causal: cf.Causal})
	case "encoder":
		b = nn.NewTransformerEncoderLayer(cf.Embed, cf.Heads, to)
	case "decoder":
		b = nn.NewTransformerDecoderLayer(cf.Embed, cf.Heads, to)
	case "encoder_stack":
		b = nn.NewTransformerEncoder(cf.Layers, cf.Embed, cf.Heads, to, cf.Norm)
	case "decoder_stack":
		b = nn.NewTransformerDecoder(cf.Layers, cf.Embed, cf.Heads, to, cf.Norm)
	case "transformer":
		b = nn.NewTransformer(cf.Embed, cf.Heads, cf.EncLayers, cf.DecLayers, to)
	default:
		t.Fatalf("unknown kind %q", c.Kind)
	}
	params := gluon.CollectParams(b)
	for _, p := range params.List() {
		p.SetDType(nd.Float64)
	}
	if err := params.Initialize(nil, []ctx.Context{cpu0}, false); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, name := range params.Names() {
		key := torchKey(name, params.Get(name), c.Params)
		v, ok := c.Params[key]
		if !ok {
			t.Fatalf("parameter %s has no PyTorch counterpart in %v", name, slices.Sorted(maps.Keys(c.Params)))
		}
		used[key] = true
		params.Get(name).SetData(nd.FromSlice(cpu0, v.Data, v.Shape...))
	}
	if len(used) != len(c.Params) {
		t.Fatalf("PyTorch has %d parameters, Goluon %d", len(c.Params), len(used))
	}
	return b
}

// torchKey is the state_dict key of a parameter: its name, or its name with
// the last part replaced by its Alias (LayerNorm's gamma is weight).
func torchKey(name string, p *gluon.Parameter, have map[string]attTensor) string {
	if _, ok := have[name]; ok || p.Alias == "" {
		return name
	}
	return name[:strings.LastIndex(name, ".")+1] + p.Alias
}

func TestAttentionGoldens(t *testing.T) {
	worst := 0.0
	for _, c := range goldentest.Cases[attCase](t, "testdata/attention_goldens.json") {
		t.Run(c.Name, func(t *testing.T) { worst = max(worst, runAttentionGolden(t, c)) })
	}
	t.Logf("largest difference from PyTorch %.3g (relative to 1+|PyTorch|)", worst)
}

func runAttentionGolden(t *testing.T, c attCase) float64 {
	b := buildAttention(t, c)
	in := map[string]*nd.NDArray{}
	for name, v := range c.Inputs {
		in[name] = v.Array(cpu0)
		in[name].AttachGrad(nd.GradWrite)
	}
	for name, v := range c.Masks {
		in[name] = v.Array(cpu0)
	}
	var args []*nd.NDArray
	for _, name := range inputOrder[c.Kind] {
		args = append(args, in[name]) // nil where the case has no such input
	}
	var outs []*nd.NDArray
	autograd.Record(func() { outs = gluon.Call(b, args...) })
	if len(outs) != len(c.Outputs) || len(c.Heads) != len(outs) {
		t.Fatalf("%d outputs, PyTorch %d (%d heads)", len(outs), len(c.Outputs), len(c.Heads))
	}
	heads := make([]*nd.NDArray, len(outs))
	for i, h := range c.Heads {
		heads[i] = h.Array(cpu0)
	}
	autograd.BackwardHeads(outs, autograd.BackwardOpts{HeadGrads: heads})
	worst := 0.0
	for i, o := range outs {
		worst = max(worst, goldentest.Compare(t, "output "+string(rune('0'+i)), o, c.Outputs[i], 1e-10))
	}
	params := gluon.CollectParams(b)
	byKey := map[string]*gluon.Parameter{}
	for _, name := range params.Names() {
		byKey[torchKey(name, params.Get(name), c.Params)] = params.Get(name)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Grads)) {
		var g *nd.NDArray
		if a, ok := in[name]; ok {
			g = a.Grad()
		} else if p := byKey[name]; p != nil {
			g = p.Grad(cpu0)
		} else {
			t.Fatalf("gradient of unknown %q", name)
		}
		worst = max(worst, goldentest.Compare(t, "grad "+name, g, c.Grads[name], 1e-10))
	}
	return worst
}

// encDec is testdata's EncDec module: a pre-norm GELU encoder layer whose
// output is the memory of a post-norm decoder layer with a causal mask.
type encDec struct {
	gluon.BlockMeta
	enc *nn.TransformerEncoderLayer
	dec *nn.TransformerDecoderLayer
}

func newEncDec() *encDec {
	m := &encDec{BlockMeta: gluon.NewBlockMeta("encdec")}
	m.enc = nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Activation: "gelu", NormFirst: true, Layout: "NTC"})
	m.enc.SetName("encoder")
	m.dec = nn.NewTransformerDecoderLayer(8, 2, nn.TransformerOpts{FeedForward: 12, Layout: "NTC", Causal: true})
	m.dec.SetName("decoder")
	m.AddChild(m.enc)
	m.AddChild(m.dec)
	return m
}

func (m *encDec) ForwardMulti(in ...*nd.NDArray) []*nd.NDArray {
	return gluon.Call(m.dec, in[1], m.enc.Forward(in[0]))
}

// TestTransformerLoadsTorchStateDict loads a torch state_dict saved as
// safetensors by name (LayerNorm's weight and bias through the aliases of
// gamma and beta) and reproduces torch's output.
func TestTransformerLoadsTorchStateDict(t *testing.T) {
	raw, err := os.ReadFile("testdata/transformer_state_dict.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Src, Tgt, Out attTensor }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	m := newEncDec()
	if err := gluon.LoadParameters(m, "testdata/transformer_state_dict.safetensors", cpu0); err != nil {
		t.Fatal(err)
	}
	got := gluon.Call(m, f.Src.Array(cpu0).AsType(nd.Float32), f.Tgt.Array(cpu0).AsType(nd.Float32))[0]
	allClose(t, "output vs torch", got.AsType(nd.Float64), f.Out.Array(cpu0), 1e-5, 1e-5)
}

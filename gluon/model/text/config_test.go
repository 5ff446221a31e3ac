package text_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// TestPresets: the four sizes have OpenAI's parameter counts (Hugging
// Face's num_parameters(), the tied head counted once) and the
// state-dict names and shapes of GPT2LMHeadModel, checked on the first
// block and the ends; nothing is allocated.
func TestPresets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    text.GPT2Config
		params int
	}{
		{"gpt2", text.GPT2Small(), 124439808},
		{"gpt2-medium", text.GPT2Medium(), 354823168},
		{"gpt2-large", text.GPT2Large(), 774030080},
		{"gpt2-xl", text.GPT2XL(), 1557611200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := text.NewGPT2(tc.cfg)
			params := gluon.CollectParams(m)
			n := 0
			for _, p := range params.List() {
				size := 1
				for _, d := range p.Shape() {
					size *= d
				}
				n += size
			}
			if n != tc.params {
				t.Errorf("%d parameters, want %d", n, tc.params)
			}
			e := tc.cfg.NEmbd
			names := params.Names()
			want := []string{
				"transformer.wte.weight", "transformer.wpe.weight",
				"transformer.h.0.ln_1.weight", "transformer.h.0.ln_1.bias",
				"transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_attn.bias",
				"transformer.h.0.attn.c_proj.weight", "transformer.h.0.attn.c_proj.bias",
				"transformer.h.0.ln_2.weight", "transformer.h.0.ln_2.bias",
				"transformer.h.0.mlp.c_fc.weight", "transformer.h.0.mlp.c_fc.bias",
				"transformer.h.0.mlp.c_proj.weight", "transformer.h.0.mlp.c_proj.bias",
			}
			for i, w := range want {
				if names[i] != w {
					t.Fatalf("parameter %d is %s, want %s", i, names[i], w)
				}
			}
			if last := names[len(names)-2:]; last[0] != "transformer.ln_f.weight" || last[1] != "transformer.ln_f.bias" {
				t.Errorf("the last parameters are %v", last)
			}
			for name, shape := range map[string][]int{
				"transformer.wte.weight":             {50257, e},
				"transformer.wpe.weight":             {1024, e},
				"transformer.h.0.attn.c_attn.weight": {e, 3 * e},
				"transformer.h.0.mlp.c_fc.weight":    {e, 4 * e},
				"transformer.h.0.mlp.c_proj.weight":  {4 * e, e},
			} {
				if got := params.Get(name).Shape(); !slices.Equal(got, shape) {
					t.Errorf("%s has shape %v, want %v", name, got, shape)
				}
			}
			if got := len(names); got != 4+12*tc.cfg.NLayer {
				t.Errorf("%d parameters, want %d", got, 4+12*tc.cfg.NLayer)
			}
		})
	}
}

// TestValidate: configurations NewGPT2 cannot build are errors naming
// the field, and NewGPT2 panics with ErrArgument on them.
func TestValidate(t *testing.T) {
	good := text.GPT2Config{VocabSize: 10, NPositions: 8, NEmbd: 8, NLayer: 1, NHead: 2}
	for _, tc := range []struct {
		name string
		edit func(*text.GPT2Config)
		want string
	}{
		{"good", func(*text.GPT2Config) {}, ""},
		{"no vocabulary", func(c *text.GPT2Config) { c.VocabSize = 0 }, "vocab_size 0"},
		{"heads", func(c *text.GPT2Config) { c.NHead = 3 }, "n_head 3 does not divide n_embd 8"},
		{"negative inner", func(c *text.GPT2Config) { c.NInner = -1 }, "n_inner -1"},
		{"dropout", func(c *text.GPT2Config) { c.AttnPdrop = 1 }, "attn_pdrop 1"},
		{"epsilon", func(c *text.GPT2Config) { c.LayerNormEpsilon = -1 }, "layer_norm_epsilon"},
		{"activation", func(c *text.GPT2Config) { c.Activation = "swish" }, `"swish"`},
		{"initializer range", func(c *text.GPT2Config) { c.InitializerRange = -0.02 }, "initializer_range -0.02"},
		{"relu", func(c *text.GPT2Config) { c.Activation = "relu" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want an error about %q", err, tc.want)
			}
			if err := nd.Catch(func() { text.NewGPT2(c) }); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
				t.Errorf("NewGPT2: %v, want an argument error", err)
			}
		})
	}
}

// TestLoadGPT2Config reads Hugging Face's config.json of gpt2 (its keys
// as the hub has them, n_inner null) into GPT2Small's configuration, and
// rejects a broken or invalid one.
func TestLoadGPT2Config(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	hub := write("config.json", `{
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_inner": null,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "vocab_size": 50257
}`)
	c, err := text.LoadGPT2Config(hub)
	if err != nil {
		t.Fatal(err)
	}
	if c != text.GPT2Small() {
		t.Errorf("%+v, want %+v", c, text.GPT2Small())
	}
	for name, body := range map[string]string{
		"broken.json":  `{"n_embd": `,
		"invalid.json": `{"vocab_size": 10, "n_positions": 8, "n_embd": 8, "n_layer": 1, "n_head": 3}`,
	} {
		if _, err := text.LoadGPT2Config(write(name, body)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
	if _, err := text.LoadGPT2Config(filepath.Join(dir, "none.json")); err == nil {
		t.Error("read a missing file")
	}
}

// TestLoadGPT2ConfigDefaults: keys a config.json leaves out take
// transformers' GPT2Config defaults (GPT2Small's values: dropouts 0.1,
// 50257 tokens, 1024 positions, ...), n_inner 4·n_embd of the file's
// width, and the attention flags transformers' defaults.
func TestLoadGPT2ConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		body string
		want func(c *text.GPT2Config)
	}{
		{`{"model_type": "gpt2"}`, func(*text.GPT2Config) {}},
		{`{"n_layer": 2}`, func(c *text.GPT2Config) { c.NLayer = 2 }},
		{`{"vocab_size": 97, "n_positions": 32, "n_embd": 48, "n_layer": 2, "n_head": 4}`, func(c *text.GPT2Config) {
			c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = 97, 32, 48, 2, 4
		}},
		{`{"n_embd": 1024, "n_head": 16, "n_layer": 24, "resid_pdrop": 0, "scale_attn_weights": true}`, func(c *text.GPT2Config) {
			*c = text.GPT2Medium()
			c.ResidPdrop = 0
			yes := true
			c.ScaleAttnWeights = &yes
		}},
	} {
		path := filepath.Join(dir, "config.json")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := text.LoadGPT2Config(path)
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		want := text.GPT2Small()
		tc.want(&want)
		if (got.ScaleAttnWeights == nil) != (want.ScaleAttnWeights == nil) ||
			got.ScaleAttnWeights != nil && *got.ScaleAttnWeights != *want.ScaleAttnWeights {
			t.Errorf("%s: scale_attn_weights %v, want %v", tc.body, got.ScaleAttnWeights, want.ScaleAttnWeights)
		}
		got.ScaleAttnWeights, want.ScaleAttnWeights = nil, nil
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.body, got, want)
		}
		if m := text.NewGPT2(got); m.Config().NInner != 4*got.NEmbd || m.Config().AttnPdrop != 0.1 {
			t.Errorf("%s: the model's n_inner %d, attn_pdrop %g", tc.body, m.Config().NInner, m.Config().AttnPdrop)
		}
	}
}

// TestLoadGPT2ConfigAttnFields: the attention fields of a config.json
// (those of a checkpoint trained with scale_attn_by_inverse_layer_idx and
// reorder_and_upcast_attn) are read, not dropped; their effect on the
// logits is TestGoldensAttnScaling's.
func TestLoadGPT2ConfigAttnFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	body := `{"n_layer": 2, "scale_attn_weights": false, "scale_attn_by_inverse_layer_idx": true,
		"reorder_and_upcast_attn": true, "initializer_range": 0.05}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := text.LoadGPT2Config(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.ScaleAttnWeights == nil || *c.ScaleAttnWeights || !c.ScaleAttnByInverseLayerIdx || !c.ReorderAndUpcastAttn || c.InitializerRange != 0.05 {
		t.Errorf("scale_attn_weights %v, scale_attn_by_inverse_layer_idx %v, reorder_and_upcast_attn %v, initializer_range %g",
			c.ScaleAttnWeights, c.ScaleAttnByInverseLayerIdx, c.ReorderAndUpcastAttn, c.InitializerRange)
	}
	// The defaults leave scale_attn_weights out of the JSON, so that
	// transformers reads its default (true) rather than null (false).
	raw, err := json.Marshal(text.GPT2Small())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "scale_attn_weights") {
		t.Errorf("GPT2Small's JSON %s names scale_attn_weights", raw)
	}
}

// TestGPT2InitializerRange: a fresh model's weights and embeddings start
// with standard deviation InitializerRange (0 means 0.02), the residual
// projections' divided by √(2·NLayer), as transformers' _init_weights
// does; biases zero, layer norms one.
func TestGPT2InitializerRange(t *testing.T) {
	for _, r := range []float64{0, 0.05} {
		nd.Seed(2)
		cfg := text.GPT2Config{VocabSize: 300, NPositions: 128, NEmbd: 64, NLayer: 2, NHead: 4, InitializerRange: r}
		if r == 0 {
			r = 0.02
		}
		m := text.NewGPT2(cfg)
		params := gluon.CollectParams(m)
		if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
			t.Fatal(err)
		}
		for _, name := range params.Names() {
			mean, sd := stats(params.Get(name).Data(ctx.CPU(0)).Float64s())
			var wantMean, wantSD float64
			switch {
			case strings.HasSuffix(name, "ln_1.weight"), strings.HasSuffix(name, "ln_2.weight"), strings.HasSuffix(name, "ln_f.weight"):
				wantMean = 1
			case strings.HasSuffix(name, ".bias"):
			case strings.HasSuffix(name, "c_proj.weight"):
				wantSD = r / math.Sqrt(2*2)
			default:
				wantSD = r
			}
			if math.Abs(mean-wantMean) > 0.004 || math.Abs(sd-wantSD) > 0.12*wantSD+1e-9 {
				t.Errorf("initializer_range %g: %s: mean %.4f, sd %.5f; want %g and %g", r, name, mean, sd, wantMean, wantSD)
			}
		}
	}
}

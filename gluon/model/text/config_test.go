package text_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon"
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

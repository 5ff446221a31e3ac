package text_test

import (
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

// paramCount is the number of values of c's parameters (none allocated).
func paramCount(c gluon.Component) int {
	n := 0
	for _, p := range gluon.CollectParams(c).List() {
		size := 1
		for _, d := range p.Shape() {
			size *= d
		}
		n += size
	}
	return n
}

// TestBertPresets: the base and large sizes have Google's parameter
// counts (transformers' num_parameters() of BertModel and of the heads,
// the tied output layer counted once) and BertModel's state-dict names
// and shapes, in its order.
func TestBertPresets(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cfg              text.BertConfig
		model, cls, mlm  int
		hidden, inter, n int
	}{
		{"bert-base-uncased", text.BertBase(), 109482240, 109483778, 109514298, 768, 3072, 12},
		{"bert-large-uncased", text.BertLarge(), 335141888, 335143938, 335174458, 1024, 4096, 24},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := text.NewBert(tc.cfg)
			if got := paramCount(m); got != tc.model {
				t.Errorf("BertModel: %d parameters, want %d", got, tc.model)
			}
			if got := paramCount(text.NewBertForSequenceClassification(tc.cfg)); got != tc.cls {
				t.Errorf("BertForSequenceClassification: %d parameters, want %d", got, tc.cls)
			}
			if got := paramCount(text.NewBertForMaskedLM(tc.cfg)); got != tc.mlm {
				t.Errorf("BertForMaskedLM: %d parameters, want %d", got, tc.mlm)
			}
			params := gluon.CollectParams(m)
			names := params.Names()
			want := []string{
				"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
				"embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias",
				"encoder.layer.0.attention.self.query.weight", "encoder.layer.0.attention.self.query.bias",
				"encoder.layer.0.attention.self.key.weight", "encoder.layer.0.attention.self.key.bias",
				"encoder.layer.0.attention.self.value.weight", "encoder.layer.0.attention.self.value.bias",
				"encoder.layer.0.attention.output.dense.weight", "encoder.layer.0.attention.output.dense.bias",
				"encoder.layer.0.attention.output.LayerNorm.weight", "encoder.layer.0.attention.output.LayerNorm.bias",
				"encoder.layer.0.intermediate.dense.weight", "encoder.layer.0.intermediate.dense.bias",
				"encoder.layer.0.output.dense.weight", "encoder.layer.0.output.dense.bias",
				"encoder.layer.0.output.LayerNorm.weight", "encoder.layer.0.output.LayerNorm.bias",
			}
			if !slices.Equal(names[:len(want)], want) {
				t.Errorf("first names %v,\nwant %v", names[:len(want)], want)
			}
			if last := names[len(names)-2:]; last[0] != "pooler.dense.weight" || last[1] != "pooler.dense.bias" {
				t.Errorf("last names %v", last)
			}
			if len(names) != 5+16*tc.n+2 {
				t.Errorf("%d names, want %d", len(names), 5+16*tc.n+2)
			}
			h := tc.hidden
			for name, shape := range map[string][]int{
				"embeddings.word_embeddings.weight":         {30522, h},
				"embeddings.position_embeddings.weight":     {512, h},
				"embeddings.token_type_embeddings.weight":   {2, h},
				"encoder.layer.0.intermediate.dense.weight": {tc.inter, h},
				"encoder.layer.0.output.dense.weight":       {h, tc.inter},
			} {
				if got := params.Get(name).Shape(); !slices.Equal(got, shape) {
					t.Errorf("%s: shape %v, want %v", name, got, shape)
				}
			}
		})
	}
}

// TestBertValidate: configurations NewBert cannot build are errors
// naming the field, and the constructors panic with ErrArgument on them.
func TestBertValidate(t *testing.T) {
	good := text.BertConfig{VocabSize: 10, HiddenSize: 8, NumHiddenLayers: 1, NumAttentionHeads: 2}
	half := 0.5
	for _, tc := range []struct {
		name string
		edit func(*text.BertConfig)
		want string
	}{
		{"good", func(*text.BertConfig) {}, ""},
		{"no vocabulary", func(c *text.BertConfig) { c.VocabSize = 0 }, "vocab_size 0"},
		{"heads", func(c *text.BertConfig) { c.NumAttentionHeads = 3 }, "num_attention_heads 3 does not divide hidden_size 8"},
		{"negative intermediate", func(c *text.BertConfig) { c.IntermediateSize = -1 }, "intermediate_size -1"},
		{"pad token", func(c *text.BertConfig) { c.PadTokenID = 10 }, "pad_token_id 10"},
		{"dropout", func(c *text.BertConfig) { c.HiddenDropoutProb = 1 }, "hidden_dropout_prob 1"},
		{"classifier dropout", func(c *text.BertConfig) { c.ClassifierDropout = new(float64(-0.1)) }, "classifier_dropout -0.1"},
		{"classifier dropout set", func(c *text.BertConfig) { c.ClassifierDropout = &half }, ""},
		{"epsilon", func(c *text.BertConfig) { c.LayerNormEps = -1 }, "layer_norm_eps"},
		{"activation", func(c *text.BertConfig) { c.HiddenAct = "swish" }, `"swish"`},
		{"relative positions", func(c *text.BertConfig) { c.PositionEmbeddingType = "relative_key" }, "relative_key"},
		{"labels", func(c *text.BertConfig) { c.NumLabels, c.ID2Label = 3, map[string]string{"0": "a", "1": "b"} }, "id2label names 2"},
		{"relu", func(c *text.BertConfig) { c.HiddenAct = "relu" }, ""},
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
			for name, f := range map[string]func(){
				"NewBert":                          func() { text.NewBert(c) },
				"NewBertForSequenceClassification": func() { text.NewBertForSequenceClassification(c) },
				"NewBertForMaskedLM":               func() { text.NewBertForMaskedLM(c) },
			} {
				if err := nd.Catch(f); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
					t.Errorf("%s: %v, want an argument error", name, err)
				}
			}
		})
	}
}

// TestLoadBertConfig reads bert-base-uncased's config.json (its keys and
// values as the hub has them) and a fine-tuned model's, which gives only
// some keys and names its labels.
func TestLoadBertConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base, err := text.LoadBertConfig(write("base.json", `{
  "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false,
  "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
  "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
  "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0, "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0", "type_vocab_size": 2, "use_cache": true, "vocab_size": 30522}`))
	if err != nil {
		t.Fatal(err)
	}
	want := text.BertBase()
	want.NumLabels = 2
	if base.VocabSize != want.VocabSize || base.HiddenSize != want.HiddenSize || base.NumHiddenLayers != 12 || base.NumAttentionHeads != 12 ||
		base.IntermediateSize != 3072 || base.HiddenAct != "gelu" || base.LayerNormEps != 1e-12 || base.NumLabels != 2 ||
		base.HiddenDropoutProb != 0.1 || base.TypeVocabSize != 2 || base.ClassifierDropout != nil {
		t.Errorf("config %+v,\nwant %+v", base, want)
	}
	tuned, err := text.LoadBertConfig(write("tuned.json", `{"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 4,
		"intermediate_size": 1024, "classifier_dropout": null, "id2label": {"0": "NEG", "1": "NEU", "2": "POS"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tuned.HiddenSize != 256 || tuned.NumLabels != 3 || tuned.ID2Label["2"] != "POS" || tuned.VocabSize != 30522 || tuned.AttentionProbsDropoutProb != 0.1 {
		t.Errorf("config %+v", tuned)
	}
	for name, s := range map[string]string{"bad json": "{", "bad heads": `{"num_attention_heads": 7}`, "relative": `{"position_embedding_type": "relative_key_query"}`} {
		if _, err := text.LoadBertConfig(write(name+".json", s)); err == nil || !strings.HasPrefix(err.Error(), "text: ") {
			t.Errorf("%s: %v, want a text error", name, err)
		}
	}
	if _, err := text.LoadBertConfig(filepath.Join(dir, "none.json")); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestBertInitialize: a fresh model initialises as transformers'
// _init_weights does: layer norms one and zero, biases zero (the masked
// LM's output bias too), weights and embeddings with standard deviation
// InitializerRange, the padding token's embedding zero.
func TestBertInitialize(t *testing.T) {
	nd.Seed(1)
	cfg := text.BertConfig{VocabSize: 300, HiddenSize: 64, NumHiddenLayers: 2, NumAttentionHeads: 4, MaxPositionEmbeddings: 128,
		PadTokenID: 5, InitializerRange: 0.03}
	m := text.NewBertForMaskedLM(cfg)
	params := gluon.CollectParams(m)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range params.Names() {
		v := params.Get(name).Data(ctx.CPU(0)).Float64s()
		if name == "bert.embeddings.word_embeddings.weight" {
			if pad := v[5*64 : 6*64]; slices.ContainsFunc(pad, func(x float64) bool { return x != 0 }) {
				t.Error("the padding token's embedding is not zero")
			}
		}
		mean, sd := stats(v)
		var wantMean, wantSD float64
		switch {
		case strings.HasSuffix(name, "LayerNorm.weight"):
			wantMean = 1
		case strings.HasSuffix(name, ".bias"):
		default:
			wantSD = 0.03
		}
		if name == "bert.embeddings.token_type_embeddings.weight" {
			continue // 128 values: too few for the statistics
		}
		if math.Abs(mean-wantMean) > 0.004 || math.Abs(sd-wantSD) > 0.12*wantSD+1e-9 {
			t.Errorf("%s: mean %.4f, sd %.5f; want %g and %g", name, mean, sd, wantMean, wantSD)
		}
	}
}

// Package text is Goluon's model zoo of language models: GPT-2 and BERT
// in Hugging Face's layouts, with their tokenizers.
//
// # GPT-2
//
// The parameters of NewGPT2 are named and shaped
// as the keys of transformers' GPT2LMHeadModel.state_dict()
// (transformer.wte.weight, transformer.h.0.attn.c_attn.weight, ...,
// transformer.ln_f.bias), so that the model.safetensors a user downloads
// for "gpt2" (or gpt2-medium, -large, -xl) loads as it is:
//
//	net, err := text.LoadGPT2("gpt2/model.safetensors", text.GPT2Small(), ctx.CPU(0))
//	tok, err := text.LoadBPE("gpt2/vocab.json", "gpt2/merges.txt")
//	ids, err := tok.Encode("The meaning of life is")
//	out, err := net.Generate(ids, 20, text.GenerateOpts{TopK: 40, Seed: 1})
//	fmt.Println(tok.Decode(out))
//
// Like Hugging Face's Conv1D, the projections c_attn, c_proj and c_fc
// keep their weights as [in, out], the transpose of nn.Dense's
// [out, in]: they are stored, loaded and saved in that layout, and
// compute x·W + b. The output layer (lm_head) is tied to the token
// embedding: it has no parameter of its own, and lm_head.weight, which
// some files hold, must equal transformer.wte.weight there. The attention
// masks older transformers versions saved (attn.bias, attn.masked_bias)
// are skipped, and files saved from the bare GPT2Model (keys without the
// "transformer." prefix, as the hub's gpt2 checkpoint) load too.
//
// Forward maps token ids to logits and LMLoss is the shifted
// cross-entropy GPT2LMHeadModel computes with labels, so the model trains
// with a gluon.Trainer (data-parallel with gluon.SplitAndLoad, hybridized
// with gluon.Hybridize). ForwardCached extends a Cache of the attention's
// keys and values, so that Generate (greedy, or sampling with
// temperature, top-k and top-p from nd's seeded generators) spends one
// position's work per new token. ForwardMasked and ForwardCachedMasked
// take an attention mask for padded batches, as transformers' GPT-2 takes
// attention_mask (the padded keys masked, the positions counted from the
// mask as its generate counts them), and GenerateBatch continues prompts
// of different lengths at once, padded on the left, each row ending at
// its own end token (OnBatchToken streams the tokens with their row). The model exports to ONNX
// (gluon/onnx.Export with Int64 input; batch and length may be free),
// and Save writes the state dict in save_pretrained's safetensors layout
// (transformer.* keys, no lm_head.weight, metadata format "pt"). BPE is
// GPT-2's byte-level tokenizer, reading vocab.json and merges.txt; its
// Decode returns the tokens' raw bytes, DecodeString the text Hugging
// Face's decode gives (invalid UTF-8 replaced by U+FFFD).
// LoadGPT2Config reads config.json as transformers does (defaults for
// the keys it lacks; scale_attn_weights, scale_attn_by_inverse_layer_idx
// and initializer_range applied).
//
// Outputs, the loss and its gradients equal a plain-torch transcription of
// GPT2LMHeadModel's computation within 1e-4 on seeded random weights, the
// logits under config.json's attention flags too
// (testdata/make_goldens.py makes the fixture and the goldens; the
// tokenizer's goldens come from testdata/make_bpe_goldens.py, which runs
// GPT-2's pre-tokenisation pattern in Python's regex module). The logits
// of a left-padded batch equal, at its tokens, those of a transcription
// with transformers' attention mask and generate's position ids within
// 1e-5 (float32) and 1e-12 (float64), and greedy batched generation
// gives every row the tokens Generate gives it alone
// (testdata/make_gpt2_batch_goldens.py).
//
// # BERT
//
// NewBert, NewBertForSequenceClassification, NewBertForMaskedLM,
// NewBertForTokenClassification, NewBertForQuestionAnswering,
// NewBertForPreTraining, NewBertForNextSentencePrediction and
// NewBertForMultipleChoice build transformers' models of those names,
// their parameters named and shaped as those models' state-dict keys
// (bert.embeddings.word_embeddings.weight,
// bert.encoder.layer.0.attention.self.query.weight, ..., classifier.weight,
// qa_outputs.weight, cls.predictions.transform.dense.weight,
// cls.seq_relationship.weight; dense weights [out, in]), so that
// bert-base-uncased's model.safetensors or pytorch_model.bin (the
// pre-training heads' layout) or a fine-tuned model's loads as it is:
//
//	cfg, err := text.LoadBertConfig("bert-base-uncased/config.json")
//	cfg.NumLabels = 3
//	net := text.NewBertForSequenceClassification(cfg)
//	report, err := text.LoadBert(net, "bert-base-uncased/model.safetensors",
//		text.BertLoadOpts{Partial: true}, ctx.CPU(0)) // a new classifier
//	tok, err := text.LoadBertTokenizer("bert-base-uncased/vocab.txt", text.BertTokenizerOpts{})
//	batch, err := tok.EncodeBatch(texts, nil, text.BertEncodeOpts{MaxLength: 128})
//	ids, types, mask := batch.Arrays(ctx.CPU(0))
//	loss := net.Loss(net.Logits(ids, types, mask), labels)
//
// The models are gluon.MultiBlocks of (input ids, token types, attention
// mask), the last two optional, train with a gluon.Trainer (data-parallel
// too), hybridize, and export to ONNX (gluon/onnx.Export on the ids, or
// ExportMulti on all three inputs). SaveBert writes save_pretrained's
// keys. Each head has the Loss transformers computes with labels (−100
// ignored; question answering's positions clamped as transformers clamps
// them; pre-training's masked-LM plus next-sentence loss). BertTokenizer
// is BERT's WordPiece tokenizer, uncased or cased. Outputs, losses and
// gradients equal a plain-torch transcription of BertModel,
// BertForSequenceClassification and BertForMaskedLM within 1e-4
// (testdata/make_bert_goldens.py), and of the other heads within 1e-5
// (float32) and 1e-11 (float64) (testdata/make_bert_heads_goldens.py);
// the tokenizer's goldens come from a Python transcription of BERT's
// documented tokenisation (testdata/make_wordpiece_goldens.py).
package text

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// GPT2Config is the shape of a GPT-2 model, with the names of Hugging
// Face's config.json (LoadGPT2Config reads one). GPT2Small, GPT2Medium,
// GPT2Large and GPT2XL return OpenAI's four sizes.
type GPT2Config struct {
	// VocabSize is the number of tokens (50257).
	VocabSize int `json:"vocab_size"`
	// NPositions is the longest sequence, the rows of the position
	// embedding (1024).
	NPositions int `json:"n_positions"`
	// NEmbd is the width of the residual stream.
	NEmbd int `json:"n_embd"`
	// NLayer is the number of transformer blocks.
	NLayer int `json:"n_layer"`
	// NHead is the number of attention heads; it divides NEmbd.
	NHead int `json:"n_head"`
	// NInner is the width of the blocks' MLP; 0 means 4·NEmbd.
	NInner int `json:"n_inner"`
	// LayerNormEpsilon is the layer norms' epsilon; 0 means 1e-5.
	LayerNormEpsilon float64 `json:"layer_norm_epsilon"`
	// Activation is the MLP's activation: "gelu_new" (GPT-2's, the tanh
	// approximation of GELU; "" means it), "gelu_pytorch_tanh" (the
	// same), "gelu" (exact) or "relu".
	Activation string `json:"activation_function"`
	// ResidPdrop is the dropout rate on the attention's and the MLP's
	// outputs, in training mode (0.1).
	ResidPdrop float64 `json:"resid_pdrop"`
	// EmbdPdrop is the dropout rate on the embeddings' sum (0.1).
	EmbdPdrop float64 `json:"embd_pdrop"`
	// AttnPdrop is the dropout rate on the attention weights (0.1).
	AttnPdrop float64 `json:"attn_pdrop"`
	// InitializerRange is the standard deviation of the initial weights
	// and embeddings (0.02; the residual projections' is divided by
	// √(2·NLayer)); 0 means 0.02. Loaded weights do not use it.
	InitializerRange float64 `json:"initializer_range"`
	// ScaleAttnWeights says whether the attention scores are divided by
	// √(NEmbd/NHead), as transformers' scale_attn_weights (true for every
	// GPT-2 OpenAI trained); nil means true (and is left out of the JSON,
	// which transformers then reads as true). A file's false loads as a
	// pointer to false: the scores are not scaled.
	ScaleAttnWeights *bool `json:"scale_attn_weights,omitempty"`
	// ScaleAttnByInverseLayerIdx divides the attention scores of the
	// block at index i (from 0) by i+1 as well, as transformers'
	// scale_attn_by_inverse_layer_idx (false; some checkpoints, such as
	// codeparrot's, set it).
	ScaleAttnByInverseLayerIdx bool `json:"scale_attn_by_inverse_layer_idx"`
	// ReorderAndUpcastAttn is transformers' reorder_and_upcast_attn,
	// which computes the attention scores in float32 with the scale
	// applied inside the product, for training in 16-bit types. It is
	// read, so that such files load, and kept, but not applied: the
	// scores are computed as without it. For a float32 model that
	// changes nothing (the logits equal transformers' with either
	// setting, within rounding); a model cast to a 16-bit type does not
	// upcast its scores to float32 as transformers would.
	ReorderAndUpcastAttn bool `json:"reorder_and_upcast_attn"`
}

// gpt2Size is the configuration all four sizes share, with the given
// width, depth and heads.
func gpt2Size(embd, layers, heads int) GPT2Config {
	return GPT2Config{
		VocabSize: 50257, NPositions: 1024, NEmbd: embd, NLayer: layers, NHead: heads,
		LayerNormEpsilon: 1e-5, Activation: "gelu_new", ResidPdrop: 0.1, EmbdPdrop: 0.1, AttnPdrop: 0.1,
		InitializerRange: 0.02,
	}
}

// GPT2Small returns the configuration of "gpt2" (124M parameters: 768
// wide, 12 layers, 12 heads).
func GPT2Small() GPT2Config { return gpt2Size(768, 12, 12) }

// GPT2Medium returns the configuration of "gpt2-medium" (355M: 1024
// wide, 24 layers, 16 heads).
func GPT2Medium() GPT2Config { return gpt2Size(1024, 24, 16) }

// GPT2Large returns the configuration of "gpt2-large" (774M: 1280 wide,
// 36 layers, 20 heads).
func GPT2Large() GPT2Config { return gpt2Size(1280, 36, 20) }

// GPT2XL returns the configuration of "gpt2-xl" (1.5B: 1600 wide, 48
// layers, 25 heads).
func GPT2XL() GPT2Config { return gpt2Size(1600, 48, 25) }

// withDefaults fills in the fields whose zero value stands for a default.
func (c GPT2Config) withDefaults() GPT2Config {
	if c.NInner == 0 {
		c.NInner = 4 * c.NEmbd
	}
	if c.LayerNormEpsilon == 0 {
		c.LayerNormEpsilon = 1e-5
	}
	if c.Activation == "" {
		c.Activation = "gelu_new"
	}
	if c.InitializerRange == 0 {
		c.InitializerRange = 0.02
	}
	return c
}

// attnScale is the factor of the attention scores of the block at index
// layer: 1/√head_dim when ScaleAttnWeights (nil: true), and 1/(layer+1)
// more when ScaleAttnByInverseLayerIdx, as transformers' GPT2Attention
// divides them.
func (c GPT2Config) attnScale(layer int) float64 {
	s := 1.0
	if c.ScaleAttnWeights == nil || *c.ScaleAttnWeights {
		s /= math.Sqrt(float64(c.NEmbd / c.NHead))
	}
	if c.ScaleAttnByInverseLayerIdx {
		s /= float64(layer + 1)
	}
	return s
}

// Validate reports what is wrong with c, or nil: sizes must be positive
// (NInner may be 0), NHead must divide NEmbd, the dropout rates must lie
// in [0, 1), InitializerRange must be positive (or 0, for 0.02) and the
// activation must be one GPT2Config lists.
func (c GPT2Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.VocabSize < 1 || c.NPositions < 1 || c.NEmbd < 1 || c.NLayer < 1 || c.NHead < 1 || c.NInner < 1:
		return fmt.Errorf("text: GPT-2 config: vocab_size %d, n_positions %d, n_embd %d, n_layer %d, n_head %d and n_inner %d must be positive",
			c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead, c.NInner)
	case c.NEmbd%c.NHead != 0:
		return fmt.Errorf("text: GPT-2 config: n_head %d does not divide n_embd %d", c.NHead, c.NEmbd)
	case c.LayerNormEpsilon < 0:
		return fmt.Errorf("text: GPT-2 config: layer_norm_epsilon %g is negative", c.LayerNormEpsilon)
	case !(c.InitializerRange > 0) || math.IsInf(c.InitializerRange, 0):
		return fmt.Errorf("text: GPT-2 config: initializer_range %g: want a positive number", c.InitializerRange)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"resid_pdrop", c.ResidPdrop}, {"embd_pdrop", c.EmbdPdrop}, {"attn_pdrop", c.AttnPdrop}} {
		if !(p.v >= 0 && p.v < 1) {
			return fmt.Errorf("text: GPT-2 config: %s %g outside [0, 1)", p.name, p.v)
		}
	}
	if _, ok := activations[c.Activation]; !ok {
		return fmt.Errorf("text: GPT-2 config: activation_function %q: want gelu_new, gelu_pytorch_tanh, gelu or relu", c.Activation)
	}
	return nil
}

// LoadGPT2Config reads a Hugging Face config.json (the one beside a
// model's weights) into a GPT2Config. Keys the file lacks keep
// GPT2Small's values, transformers' GPT2Config defaults (50257 tokens,
// 1024 positions, 768 wide, 12 layers and heads, dropouts 0.1, scaled
// attention), so that a file that lists only what differs reads as
// transformers reads it; keys GPT2Config does not know are ignored. The
// result is validated.
func LoadGPT2Config(path string) (GPT2Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return GPT2Config{}, fmt.Errorf("text: %w", err)
	}
	c := GPT2Small()
	if err := json.Unmarshal(raw, &c); err != nil {
		return GPT2Config{}, fmt.Errorf("text: %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return GPT2Config{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return c, nil
}

package text

import (
	"encoding/json"
	"fmt"
	"os"
)

// BertConfig is the shape of a BERT model, with the names of Hugging
// Face's config.json (LoadBertConfig reads one, starting from BertBase's
// values for the keys the file lacks, as transformers does). BertBase and
// BertLarge return Google's two sizes. In a literal, fields left zero take
// the defaults their documentation gives.
type BertConfig struct {
	// VocabSize is the number of tokens (30522 for the uncased English
	// vocabulary).
	VocabSize int `json:"vocab_size"`
	// HiddenSize is the width of the hidden states (768).
	HiddenSize int `json:"hidden_size"`
	// NumHiddenLayers is the number of encoder layers (12).
	NumHiddenLayers int `json:"num_hidden_layers"`
	// NumAttentionHeads is the number of attention heads; it divides
	// HiddenSize (12).
	NumAttentionHeads int `json:"num_attention_heads"`
	// IntermediateSize is the width of the feed-forward part; 0 means
	// 4·HiddenSize (3072).
	IntermediateSize int `json:"intermediate_size"`
	// HiddenAct is the feed-forward part's and the masked-LM head's
	// activation: "gelu" (exact, with erf; "" means it), "gelu_new" or
	// "gelu_pytorch_tanh" (the tanh approximation) or "relu".
	HiddenAct string `json:"hidden_act"`
	// HiddenDropoutProb is the dropout rate on the embeddings and on the
	// attention's and the feed-forward part's outputs, in training mode
	// (0.1).
	HiddenDropoutProb float64 `json:"hidden_dropout_prob"`
	// AttentionProbsDropoutProb is the dropout rate on the attention
	// weights (0.1).
	AttentionProbsDropoutProb float64 `json:"attention_probs_dropout_prob"`
	// MaxPositionEmbeddings is the longest sequence, the rows of the
	// position embedding; 0 means 512.
	MaxPositionEmbeddings int `json:"max_position_embeddings"`
	// TypeVocabSize is the number of token types (segments); 0 means 2.
	TypeVocabSize int `json:"type_vocab_size"`
	// LayerNormEps is the layer norms' epsilon; 0 means 1e-12.
	LayerNormEps float64 `json:"layer_norm_eps"`
	// PadTokenID is the padding token, whose embedding starts at zero and
	// gets no gradient (0).
	PadTokenID int `json:"pad_token_id"`
	// InitializerRange is the standard deviation of the initial weights
	// and embeddings; 0 means 0.02.
	InitializerRange float64 `json:"initializer_range"`
	// PositionEmbeddingType must be "absolute" ("" means it): the
	// relative kinds are not implemented.
	PositionEmbeddingType string `json:"position_embedding_type"`
	// ClassifierDropout is the dropout rate before the sequence
	// classifier; nil means HiddenDropoutProb.
	ClassifierDropout *float64 `json:"classifier_dropout"`
	// NumLabels is the number of classes of BertForSequenceClassification
	// (1: a regression); 0 means 2, or the size of ID2Label when that is
	// set.
	NumLabels int `json:"num_labels"`
	// ID2Label names the classes by their index, as a fine-tuned model's
	// config.json does ({"0": "NEGATIVE", "1": "POSITIVE"}); optional.
	ID2Label map[string]string `json:"id2label"`
}

// BertBase returns the configuration of bert-base-uncased (110M
// parameters: 768 wide, 12 layers, 12 heads, 3072 intermediate).
func BertBase() BertConfig {
	return BertConfig{
		VocabSize: 30522, HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12, IntermediateSize: 3072,
		HiddenAct: "gelu", HiddenDropoutProb: 0.1, AttentionProbsDropoutProb: 0.1, MaxPositionEmbeddings: 512,
		TypeVocabSize: 2, LayerNormEps: 1e-12, InitializerRange: 0.02, PositionEmbeddingType: "absolute",
	}
}

// BertLarge returns the configuration of bert-large-uncased (335M: 1024
// wide, 24 layers, 16 heads, 4096 intermediate).
func BertLarge() BertConfig {
	c := BertBase()
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 1024, 24, 16, 4096
	return c
}

// withDefaults fills in the fields whose zero value stands for a default.
func (c BertConfig) withDefaults() BertConfig {
	if c.IntermediateSize == 0 {
		c.IntermediateSize = 4 * c.HiddenSize
	}
	if c.HiddenAct == "" {
		c.HiddenAct = "gelu"
	}
	if c.MaxPositionEmbeddings == 0 {
		c.MaxPositionEmbeddings = 512
	}
	if c.TypeVocabSize == 0 {
		c.TypeVocabSize = 2
	}
	if c.LayerNormEps == 0 {
		c.LayerNormEps = 1e-12
	}
	if c.InitializerRange == 0 {
		c.InitializerRange = 0.02
	}
	if c.PositionEmbeddingType == "" {
		c.PositionEmbeddingType = "absolute"
	}
	if c.NumLabels == 0 {
		c.NumLabels = 2
		if len(c.ID2Label) > 0 {
			c.NumLabels = len(c.ID2Label)
		}
	}
	return c
}

// classifierDropout is the rate before the sequence classifier.
func (c BertConfig) classifierDropout() float64 {
	if c.ClassifierDropout != nil {
		return *c.ClassifierDropout
	}
	return c.HiddenDropoutProb
}

// Validate reports what is wrong with c, or nil: sizes must be positive
// (those whose zero means a default may be 0), NumAttentionHeads must
// divide HiddenSize, PadTokenID must be a token, the dropout rates must
// lie in [0, 1), the activation must be one BertConfig lists and the
// position embeddings absolute.
func (c BertConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.VocabSize < 1 || c.HiddenSize < 1 || c.NumHiddenLayers < 1 || c.NumAttentionHeads < 1 || c.IntermediateSize < 1 ||
		c.MaxPositionEmbeddings < 1 || c.TypeVocabSize < 1 || c.NumLabels < 1:
		return fmt.Errorf("text: BERT config: vocab_size %d, hidden_size %d, num_hidden_layers %d, num_attention_heads %d, intermediate_size %d, max_position_embeddings %d, type_vocab_size %d and num_labels %d must be positive",
			c.VocabSize, c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize, c.MaxPositionEmbeddings, c.TypeVocabSize, c.NumLabels)
	case c.HiddenSize%c.NumAttentionHeads != 0:
		return fmt.Errorf("text: BERT config: num_attention_heads %d does not divide hidden_size %d", c.NumAttentionHeads, c.HiddenSize)
	case c.PadTokenID < 0 || c.PadTokenID >= c.VocabSize:
		return fmt.Errorf("text: BERT config: pad_token_id %d outside [0, %d)", c.PadTokenID, c.VocabSize)
	case c.LayerNormEps < 0 || c.InitializerRange < 0:
		return fmt.Errorf("text: BERT config: layer_norm_eps %g and initializer_range %g must not be negative", c.LayerNormEps, c.InitializerRange)
	case c.PositionEmbeddingType != "absolute":
		return fmt.Errorf("text: BERT config: position_embedding_type %q: only \"absolute\" is implemented", c.PositionEmbeddingType)
	case len(c.ID2Label) > 0 && len(c.ID2Label) != c.NumLabels:
		return fmt.Errorf("text: BERT config: num_labels %d, but id2label names %d", c.NumLabels, len(c.ID2Label))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"hidden_dropout_prob", c.HiddenDropoutProb}, {"attention_probs_dropout_prob", c.AttentionProbsDropoutProb}, {"classifier_dropout", c.classifierDropout()}} {
		if !(p.v >= 0 && p.v < 1) {
			return fmt.Errorf("text: BERT config: %s %g outside [0, 1)", p.name, p.v)
		}
	}
	if _, ok := activations[c.HiddenAct]; !ok {
		return fmt.Errorf("text: BERT config: hidden_act %q: want gelu, gelu_new, gelu_pytorch_tanh or relu", c.HiddenAct)
	}
	return nil
}

// LoadBertConfig reads a Hugging Face config.json (the one beside a
// model's weights) into a BertConfig. Keys the file lacks keep
// BertBase's values (so a fine-tuned model's file, which lists only what
// differs from them, reads as transformers reads it); keys BertConfig does
// not know are ignored. The number of labels is num_labels when the file
// gives it, else the size of id2label, else 2. The result is validated.
func LoadBertConfig(path string) (BertConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return BertConfig{}, fmt.Errorf("text: %w", err)
	}
	c := BertBase()
	if err := json.Unmarshal(raw, &c); err != nil {
		return BertConfig{}, fmt.Errorf("text: %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return BertConfig{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return c.withDefaults(), nil
}

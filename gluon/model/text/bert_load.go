package text

import (
	"fmt"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
)

// BertNet is one of the package's BERT models — *Bert,
// *BertForSequenceClassification, *BertForMaskedLM,
// *BertForTokenClassification, *BertForQuestionAnswering,
// *BertForPreTraining, *BertForNextSentencePrediction or
// *BertForMultipleChoice — as LoadBert and SaveBert take them. Other
// types cannot implement it.
type BertNet interface {
	gluon.Component
	bertLayout() layout
}

// The key names of BERT files that are not parameters of their own.
const (
	wordEmbKey     = "bert.embeddings.word_embeddings.weight"
	decoderWeight  = "cls.predictions.decoder.weight"
	decoderBias    = "cls.predictions.decoder.bias"
	predictionBias = "cls.predictions.bias"
)

// bertBody reports whether key is one of the encoder's (BertModel's own
// keys, without a "bert." prefix).
func bertBody(key string) bool {
	return strings.HasPrefix(key, "embeddings.") || strings.HasPrefix(key, "encoder.") || strings.HasPrefix(key, "pooler.")
}

// fixNorm renames the layer norms' gamma and beta of older checkpoints to
// weight and bias.
func fixNorm(key string) string {
	if k, ok := strings.CutSuffix(key, ".gamma"); ok {
		return k + ".weight"
	}
	if k, ok := strings.CutSuffix(key, ".beta"); ok {
		return k + ".bias"
	}
	return key
}

// bertBuffer reports whether name is one of BertEmbeddings' buffers,
// which some files hold.
func bertBuffer(name string) bool {
	name = strings.TrimPrefix(name, "bert.")
	return name == "embeddings.position_ids" || name == "embeddings.token_type_ids"
}

const linearTransposed = "nn.Linear weights are [out, in]"

// bertLayout maps the files of BertModel (keys without "bert.") and of
// BERT with heads (with it) onto the bare encoder: "bert." is dropped.
func (m *Bert) bertLayout() layout {
	return layout{
		rename:     func(k string) string { return strings.TrimPrefix(fixNorm(k), "bert.") },
		skip:       bertBuffer,
		transposed: linearTransposed,
	}
}

// headLayout maps files onto a model whose encoder is the child "bert":
// a bare BertModel's keys take the prefix.
func headLayout(ties ...tie) layout {
	return layout{
		rename: func(k string) string {
			k = fixNorm(k)
			if bertBody(k) {
				return "bert." + k
			}
			return k
		},
		skip:       bertBuffer,
		ties:       ties,
		transposed: linearTransposed,
	}
}

func (m *BertForSequenceClassification) bertLayout() layout { return headLayout() }

func (m *BertForMaskedLM) bertLayout() layout {
	return withoutPooler(headLayout(tie{decoderWeight, wordEmbKey}, tie{decoderBias, predictionBias}))
}

func (m *BertForTokenClassification) bertLayout() layout { return withoutPooler(headLayout()) }

func (m *BertForQuestionAnswering) bertLayout() layout { return withoutPooler(headLayout()) }

// withoutPooler makes l pass over a checkpoint's pooler, for the models
// that have none, as transformers' _keys_to_ignore_on_load_unexpected
// does for them: fine-tuned token-classification and question-answering
// checkpoints saved with the pooler load strictly.
func withoutPooler(l layout) layout {
	skip := l.skip
	l.skip = func(name string) bool {
		return strings.HasPrefix(name, "bert.pooler.") || skip != nil && skip(name)
	}
	return l
}

func (m *BertForPreTraining) bertLayout() layout {
	return headLayout(tie{decoderWeight, wordEmbKey}, tie{decoderBias, predictionBias})
}

func (m *BertForNextSentencePrediction) bertLayout() layout { return headLayout() }

func (m *BertForMultipleChoice) bertLayout() layout { return headLayout() }

// BertLoadOpts configure LoadBert.
type BertLoadOpts struct {
	// Partial loads what the file and the model share, as transformers'
	// from_pretrained does: the model's parameters the file lacks (a new
	// classifier on a pre-trained encoder) keep their values, or are
	// initialised as NewBert says when they have none, and the file's
	// tensors the model has no place for (another head's:
	// cls.seq_relationship, the pooler under a masked-LM head) are
	// skipped. LoadBert returns both lists. Wrong shapes and untied
	// tensors remain errors. Without Partial, any missing or unexpected
	// key is an error.
	Partial bool
}

// LoadReport lists what a partial LoadBert left out.
type LoadReport struct {
	// Missing names the model's parameters the file has no tensor for.
	Missing []string
	// Unexpected names the file's tensors no parameter took.
	Unexpected []string
}

// LoadBert reads a BERT state dict saved as safetensors (Hugging Face's
// model.safetensors) or by torch.save (its pytorch_model.bin; see package
// gluon/pytorch) into m's parameters, onto devs (cpu(0) when none are
// given) for parameters not yet initialised. The keys are those of
// transformers' models: a bare BertModel's (embeddings.*, encoder.*,
// pooler.*) and those of the models with heads (bert.embeddings.*, ...,
// and the heads' classifier.*, qa_outputs.*, cls.predictions.*,
// cls.seq_relationship.*) load into any of the types, the "bert." prefix
// dropped or added; the layer norms' gamma and beta of older checkpoints
// load as weight and bias; the position_ids and token_type_ids buffers
// are skipped, and so is a checkpoint's pooler by the models that have
// none (token classification, question answering, masked LM), as
// transformers skips it; cls.predictions.decoder.weight and .bias, where present,
// must equal the word embedding and cls.predictions.bias, to which
// BertForMaskedLM and BertForPreTraining tie them.
//
// Without opts.Partial, a file that does not fit exactly is a *LoadError
// listing every missing key, unexpected key, wrong shape and untied
// tensor; with it, see BertLoadOpts. On any error m is unchanged.
func LoadBert(m BertNet, path string, opts BertLoadOpts, devs ...ctx.Context) (LoadReport, error) {
	if len(devs) == 0 {
		devs = []ctx.Context{ctx.CPU(0)}
	}
	l := m.bertLayout()
	params := gluon.CollectParams(m)
	var report LoadReport
	if err := checkFile(params, path, l); err != nil {
		le, ok := err.(*LoadError)
		if !ok || !opts.Partial || len(le.Shapes) > 0 || le.Untied {
			return LoadReport{}, err
		}
		report = LoadReport{Missing: le.Missing, Unexpected: le.Unexpected}
	}
	err := params.Load(path, devs, gluon.LoadOpts{Rename: l.rename, Skip: l.skipped, AllowMissing: opts.Partial, IgnoreExtra: opts.Partial})
	if err != nil {
		return LoadReport{}, fmt.Errorf("text: %w", err)
	}
	for _, name := range report.Missing {
		if p := params.Get(name); !p.Initialized() {
			if err := p.Initialize(nil, devs, false); err != nil {
				return report, fmt.Errorf("text: load %s: initialising %s: %w", path, name, err)
			}
		}
	}
	return report, nil
}

// SaveBert writes m's parameters to path as a state dict with the keys of
// the transformers model m stands for (BertModel's for a *Bert, "bert."
// and the head's for the others), the dense layers' weights [out, in].
// As save_pretrained, it leaves out the tied
// cls.predictions.decoder.weight and .bias. A path ending in .bin, .pt or
// .pth gets torch.save's format (pytorch_model.bin), any other the
// safetensors format with metadata format "pt". Float64 parameters are
// saved as float64, others as float32. The file is replaced atomically.
func SaveBert(m BertNet, path string) error {
	return saveParams(gluon.CollectParams(m), path)
}

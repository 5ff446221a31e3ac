package text_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/nd"
)

// headsGoldens is testdata/bert_heads_goldens.json
// (make_bert_heads_goldens.py).
type headsGoldens struct {
	IDs        [][]int64 `json:"ids"`
	TokenTypes [][]int64 `json:"token_types"`
	Mask       [][]int64 `json:"mask"`
	// Heads holds the new heads' weights by model, under transformers'
	// names.
	Heads               map[string]map[string]goldentest.Tensor `json:"heads"`
	TokenClassification struct {
		Labels [][]int64                    `json:"labels"`
		Logits goldentest.Tensor            `json:"logits"`
		Loss   float64                      `json:"loss"`
		Grads  map[string]goldentest.Tensor `json:"grads"`
	} `json:"token_classification"`
	QuestionAnswering struct {
		StartLogits goldentest.Tensor `json:"start_logits"`
		EndLogits   goldentest.Tensor `json:"end_logits"`
		Losses      []struct {
			StartPositions []int64 `json:"start_positions"`
			EndPositions   []int64 `json:"end_positions"`
			Loss           float64 `json:"loss"`
		} `json:"losses"`
		// Grads are those of Losses[1]'s loss.
		Grads map[string]goldentest.Tensor `json:"grads"`
	} `json:"question_answering"`
	PreTraining struct {
		MLMLabels             [][]int64                    `json:"mlm_labels"`
		NSPLabels             []int64                      `json:"nsp_labels"`
		PredictionLogits      goldentest.Tensor            `json:"prediction_logits"`
		SeqRelationshipLogits goldentest.Tensor            `json:"seq_relationship_logits"`
		Loss                  float64                      `json:"loss"`
		NSPLoss               float64                      `json:"nsp_loss"`
		Grads                 map[string]goldentest.Tensor `json:"grads"`
		NSPGrads              map[string]goldentest.Tensor `json:"nsp_grads"`
	} `json:"pretraining"`
	MultipleChoice struct {
		IDs        [][][]int64                  `json:"ids"`
		TokenTypes [][][]int64                  `json:"token_types"`
		Mask       [][][]int64                  `json:"mask"`
		Labels     []int64                      `json:"labels"`
		Logits     goldentest.Tensor            `json:"logits"`
		Loss       float64                      `json:"loss"`
		Grads      map[string]goldentest.Tensor `json:"grads"`
	} `json:"multiple_choice"`
}

func readHeadsGoldens(t testing.TB) headsGoldens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "bert_heads_goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g headsGoldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// headFile writes the state dict of a transformers BERT model with a
// head: the fixture's tensors that keep accepts (the hub's layout:
// gamma/beta names, the position_ids buffer) and the given head tensors,
// as model.safetensors, or as pytorch_model.bin (torch.save's format,
// float32 tensors only) when bin.
func headFile(t testing.TB, keep func(string) bool, head map[string]goldentest.Tensor, bin bool) string {
	t.Helper()
	f := readFile(t, bertFixture)
	for name := range f.Tensors {
		if !keep(name) {
			delete(f.Tensors, name)
		}
	}
	for name, v := range head {
		w := make([]float32, len(v.Data))
		for i, x := range v.Data {
			w[i] = float32(x)
		}
		f.Tensors[name] = safetensors.FromFloat32(v.Shape, w)
	}
	dir := t.TempDir()
	if !bin {
		path := filepath.Join(dir, "model.safetensors")
		if err := safetensors.WriteFile(path, f); err != nil {
			t.Fatal(err)
		}
		return path
	}
	arrays := map[string]*nd.NDArray{}
	for name, v := range f.Tensors {
		if v.DType != "F32" {
			continue
		}
		data, err := v.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		arrays[name] = nd.FromSlice(ctx.CPU(0), data, v.Shape...)
	}
	path := filepath.Join(dir, "pytorch_model.bin")
	if err := pytorch.SaveStateDict(path, nil, arrays); err != nil {
		t.Fatal(err)
	}
	return path
}

// encoderKey accepts the fixture's encoder keys (a head model's file
// with the pooler).
func encoderKey(name string) bool { return strings.HasPrefix(name, "bert.") }

// noPoolerKey accepts the encoder's keys but the pooler's (the token
// classifier's and question answering's files).
func noPoolerKey(name string) bool {
	return encoderKey(name) && !strings.HasPrefix(name, "bert.pooler.")
}

// nspKey accepts BertForNextSentencePrediction's keys.
func nspKey(name string) bool {
	return encoderKey(name) || strings.HasPrefix(name, "cls.seq_relationship.")
}

// TestBertHeadsGoldens: each head, loaded strictly from a state dict with
// transformers' key names (the hub's pre-training checkpoint for
// BertForPreTraining; files built from it and the goldens' head weights
// for the others, pytorch_model.bin for token classification), gives the
// plain-torch transcription's logits, loss and gradients (float64 from
// the same float32 weights) on the goldens' batch (token types, padding):
// within 1e-5 relative to 1+|value| in float32 and 1e-11 in float64
// (the models cast by gluon.Cast).
func TestBertHeadsGoldens(t *testing.T) {
	g := readHeadsGoldens(t)
	dev := ctx.CPU(0)
	ids, types, mask := idsArray(dev, g.IDs), idsArray(dev, g.TokenTypes), idsArray(dev, g.Mask)
	cfg := tinyBert()
	for _, prec := range []struct {
		name string
		dt   nd.DType
		tol  float64
	}{{"float32", nd.Float32, 1e-5}, {"float64", nd.Float64, 1e-11}} {
		t.Run(prec.name, func(t *testing.T) {
			worst := 0.0
			check := func(what string, got *nd.NDArray, want goldentest.Tensor) {
				t.Helper()
				worst = max(worst, goldentest.Compare(t, what, got, want, prec.tol))
			}
			scalar := func(what string, got *nd.NDArray, want float64) {
				t.Helper()
				v := got.Float64s()[0]
				d := math.Abs(v-want) / (1 + math.Abs(want))
				if !(d <= prec.tol) {
					t.Errorf("%s %.15g, PyTorch %.15g", what, v, want)
				}
				worst = max(worst, d)
			}
			// load reads path into m strictly and casts it.
			load := func(m text.BertNet, path string) {
				t.Helper()
				loadBert(t, m, path, false)
				if err := gluon.Cast(m, prec.dt); err != nil {
					t.Fatal(err)
				}
			}
			grads := func(m gluon.Component, want map[string]goldentest.Tensor) {
				t.Helper()
				params := gluon.CollectParams(m)
				for _, name := range sortedNames(want) {
					p := params.Get(name)
					if p == nil {
						t.Fatalf("no parameter %s among %v", name, params.Names())
					}
					check("grad "+name, p.Grad(dev), want[name])
				}
			}

			t.Run("BertForTokenClassification", func(t *testing.T) {
				tc := g.TokenClassification
				m := text.NewBertForTokenClassification(cfg)
				load(m, headFile(t, noPoolerKey, g.Heads["token_classification"], true))
				autograd.Record(func() {
					logits := m.Logits(ids, types, mask)
					loss := m.Loss(logits, idsArray(dev, tc.Labels))
					autograd.Backward(loss)
					check("logits", logits, tc.Logits)
					scalar("loss", loss, tc.Loss)
				})
				grads(m, tc.Grads)
			})
			t.Run("BertForQuestionAnswering", func(t *testing.T) {
				qa := g.QuestionAnswering
				m := text.NewBertForQuestionAnswering(cfg)
				load(m, headFile(t, noPoolerKey, g.Heads["question_answering"], false))
				autograd.Record(func() {
					start, end := m.Logits(ids, types, mask)
					check("start logits", start, qa.StartLogits)
					check("end logits", end, qa.EndLogits)
					for i, c := range qa.Losses {
						loss := m.Loss(start, end, nd.FromSlice(dev, c.StartPositions, 2), nd.FromSlice(dev, c.EndPositions, 2))
						scalar("loss", loss, c.Loss)
						if i == 1 {
							autograd.Backward(loss)
						}
					}
				})
				grads(m, qa.Grads)
			})
			t.Run("BertForPreTraining", func(t *testing.T) {
				pt := g.PreTraining
				m := text.NewBertForPreTraining(cfg)
				load(m, bertFixture) // the hub's checkpoint, as it is
				autograd.Record(func() {
					pred, rel := m.Logits(ids, types, mask)
					loss := m.Loss(pred, rel, idsArray(dev, pt.MLMLabels), nd.FromSlice(dev, pt.NSPLabels, 2))
					autograd.Backward(loss)
					check("prediction logits", pred, pt.PredictionLogits)
					check("seq_relationship logits", rel, pt.SeqRelationshipLogits)
					scalar("loss", loss, pt.Loss)
				})
				grads(m, pt.Grads)
			})
			t.Run("BertForNextSentencePrediction", func(t *testing.T) {
				pt := g.PreTraining
				m := text.NewBertForNextSentencePrediction(cfg)
				load(m, headFile(t, nspKey, nil, false))
				autograd.Record(func() {
					logits := m.Logits(ids, types, mask)
					loss := m.Loss(logits, nd.FromSlice(dev, pt.NSPLabels, 2))
					autograd.Backward(loss)
					check("logits", logits, pt.SeqRelationshipLogits)
					scalar("loss", loss, pt.NSPLoss)
				})
				grads(m, pt.NSPGrads)
			})
			t.Run("BertForMultipleChoice", func(t *testing.T) {
				mc := g.MultipleChoice
				m := text.NewBertForMultipleChoice(cfg)
				load(m, headFile(t, encoderKey, g.Heads["multiple_choice"], false))
				autograd.Record(func() {
					logits := m.Logits(choiceArray(dev, mc.IDs), choiceArray(dev, mc.TokenTypes), choiceArray(dev, mc.Mask))
					loss := m.Loss(logits, nd.FromSlice(dev, mc.Labels, len(mc.Labels)))
					autograd.Backward(loss)
					check("logits", logits, mc.Logits)
					scalar("loss", loss, mc.Loss)
				})
				grads(m, mc.Grads)
			})
			t.Logf("largest difference %.3g (relative to 1+|PyTorch|)", worst)
		})
	}
}

// choiceArray returns [B][C][T] ids as an Int64 array on dev.
func choiceArray(dev ctx.Context, x [][][]int64) *nd.NDArray {
	var flat []int64
	for _, q := range x {
		for _, c := range q {
			flat = append(flat, c...)
		}
	}
	return nd.FromSlice(dev, flat, len(x), len(x[0]), len(x[0][0]))
}

// TestBertHeadsLoadPartial: the hub's pre-training checkpoint loads into
// every head with BertLoadOpts.Partial, the head's new weights reported
// missing and initialised, the tensors it has no place for reported
// unexpected; strictly, it loads into BertForPreTraining alone.
func TestBertHeadsLoadPartial(t *testing.T) {
	cfg := tinyBert()
	cls := []string{"cls.predictions.bias", "cls.predictions.decoder.bias", "cls.predictions.decoder.weight",
		"cls.predictions.transform.LayerNorm.beta", "cls.predictions.transform.LayerNorm.gamma",
		"cls.predictions.transform.dense.bias", "cls.predictions.transform.dense.weight"}
	rel := []string{"cls.seq_relationship.bias", "cls.seq_relationship.weight"}
	// The pooler is passed over, not reported, by the models that have none
	// (as transformers' _keys_to_ignore_on_load_unexpected).
	for _, tc := range []struct {
		name       string
		m          text.BertNet
		missing    []string
		unexpected []string
	}{
		{"token classification", text.NewBertForTokenClassification(cfg), []string{"classifier.weight", "classifier.bias"}, slices.Concat(cls, rel)},
		{"question answering", text.NewBertForQuestionAnswering(cfg), []string{"qa_outputs.weight", "qa_outputs.bias"}, slices.Concat(cls, rel)},
		{"pre-training", text.NewBertForPreTraining(cfg), nil, nil},
		{"next sentence", text.NewBertForNextSentencePrediction(cfg), nil, cls},
		{"multiple choice", text.NewBertForMultipleChoice(cfg), []string{"classifier.weight", "classifier.bias"}, slices.Concat(cls, rel)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := loadBert(t, tc.m, bertFixture, true)
			slices.Sort(r.Unexpected)
			slices.Sort(tc.unexpected)
			if !slices.Equal(r.Missing, tc.missing) || !slices.Equal(r.Unexpected, tc.unexpected) {
				t.Errorf("report %+v, want missing %v and unexpected %v", r, tc.missing, tc.unexpected)
			}
			for _, p := range gluon.CollectParams(tc.m).List() {
				if !p.Initialized() {
					t.Errorf("%s left uninitialised", p.Name())
				}
			}
			_, err := text.LoadBert(tc.m, bertFixture, text.BertLoadOpts{})
			if strict := err == nil; strict != (tc.missing == nil && tc.unexpected == nil) {
				t.Errorf("strict load: %v", err)
			}
		})
	}
}

// TestSaveBertHeads: SaveBert writes each head under transformers' names
// (no tied decoder tensors), and the file loads back strictly into a
// fresh model computing the same outputs.
func TestSaveBertHeads(t *testing.T) {
	cfg := tinyBert()
	ids, tt, mask := bertBatch(ctx.CPU(0), 2, 6)
	for _, tc := range []struct {
		name string
		make func() text.BertNet
		keys []string // some of the keys the file must hold
	}{
		{"token classification", func() text.BertNet { return text.NewBertForTokenClassification(cfg) }, []string{"classifier.weight", "bert.encoder.layer.1.output.LayerNorm.bias"}},
		{"question answering", func() text.BertNet { return text.NewBertForQuestionAnswering(cfg) }, []string{"qa_outputs.weight", "qa_outputs.bias"}},
		{"pre-training", func() text.BertNet { return text.NewBertForPreTraining(cfg) }, []string{"cls.predictions.bias", "cls.seq_relationship.weight", "bert.pooler.dense.weight"}},
		{"next sentence", func() text.BertNet { return text.NewBertForNextSentencePrediction(cfg) }, []string{"cls.seq_relationship.bias"}},
		{"multiple choice", func() text.BertNet { return text.NewBertForMultipleChoice(cfg) }, []string{"classifier.bias", "bert.pooler.dense.bias"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nd.Seed(9)
			a := tc.make()
			loadBert(t, a, bertFixture, true) // the new heads initialised at random
			path := filepath.Join(t.TempDir(), "model.safetensors")
			if err := text.SaveBert(a, path); err != nil {
				t.Fatal(err)
			}
			f := readFile(t, path)
			for _, k := range tc.keys {
				if _, ok := f.Tensors[k]; !ok {
					t.Errorf("no %s among %v", k, f.Names())
				}
			}
			if _, ok := f.Tensors["cls.predictions.decoder.weight"]; ok {
				t.Error("the tied decoder weight was saved")
			}
			b := tc.make()
			loadBert(t, b, path, false)
			in := []*nd.NDArray{ids, tt, mask}
			if _, ok := a.(*text.BertForMultipleChoice); ok {
				for i, x := range in {
					in[i] = nd.Reshape(x, 1, 2, 6)
				}
			}
			autograd.PredictMode(func() {
				ya, yb := gluon.Call(a, in...), gluon.Call(b, in...)
				for i := range ya {
					if !slices.Equal(ya[i].Float32s(), yb[i].Float32s()) {
						t.Errorf("output %d differs after the round trip", i)
					}
				}
			})
		})
	}
}

// TestBertTokenLoadsPoolerStrictly: a checkpoint saved with the pooler (a
// sequence classifier's, as older fine-tuned token-classification and
// question-answering checkpoints are) loads strictly into a model without
// one, the pooler passed over as transformers does.
func TestBertTokenLoadsPoolerStrictly(t *testing.T) {
	m := text.NewBertForTokenClassification(tinyBert())
	r, err := text.LoadBert(m, filepath.Join("testdata", "bert_tiny_cls.bin"), text.BertLoadOpts{})
	if err != nil {
		t.Fatalf("strict load of a checkpoint with a pooler: %v", err)
	}
	if len(r.Missing)+len(r.Unexpected) != 0 {
		t.Errorf("report %+v, want nothing missing or unexpected", r)
	}
}

package text_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/internal/goldentest"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// The fixtures of testdata/make_bert_goldens.py: the hub's
// bert-base-uncased layout (pre-training heads, gamma/beta names) and a
// BertForSequenceClassification state dict written by torch.save.
var (
	bertFixture    = filepath.Join("testdata", "bert_tiny.safetensors")
	bertClsFixture = filepath.Join("testdata", "bert_tiny_cls.bin")
)

// bertGoldens is testdata/bert_goldens.json.
type bertGoldens struct {
	Config     map[string]float64           `json:"config"`
	IDs        [][]int64                    `json:"ids"`
	TokenTypes [][]int64                    `json:"token_types"`
	Mask       [][]int64                    `json:"mask"`
	Sequence   goldentest.Tensor            `json:"sequence"`
	Pooled     goldentest.Tensor            `json:"pooled"`
	ClsLabels  []int64                      `json:"cls_labels"`
	ClsLogits  goldentest.Tensor            `json:"cls_logits"`
	ClsLoss    float64                      `json:"cls_loss"`
	ClsGrads   map[string]goldentest.Tensor `json:"cls_grads"`
	MLMLabels  [][]int64                    `json:"mlm_labels"`
	MLMLogits  goldentest.Tensor            `json:"mlm_logits"`
	MLMLoss    float64                      `json:"mlm_loss"`
	MLMGrads   map[string]goldentest.Tensor `json:"mlm_grads"`
}

func readBertGoldens(t testing.TB) bertGoldens {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "bert_goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g bertGoldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// tinyBert is the fixtures' configuration, dropout off.
func tinyBert() text.BertConfig {
	return text.BertConfig{VocabSize: 112, HiddenSize: 32, NumHiddenLayers: 2, NumAttentionHeads: 4,
		IntermediateSize: 64, MaxPositionEmbeddings: 16, NumLabels: 3}
}

// loadBert loads path into m (partially when partial), failing t on an
// error.
func loadBert(t testing.TB, m text.BertNet, path string, partial bool, devs ...ctx.Context) text.LoadReport {
	t.Helper()
	r, err := text.LoadBert(m, path, text.BertLoadOpts{Partial: partial}, devs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tinyClassifier is the classifier of the .bin fixture.
func tinyClassifier(t testing.TB, devs ...ctx.Context) *text.BertForSequenceClassification {
	t.Helper()
	m := text.NewBertForSequenceClassification(tinyBert())
	loadBert(t, m, bertClsFixture, false, devs...)
	return m
}

// tinyMLM is the masked LM of the safetensors fixture.
func tinyMLM(t testing.TB, devs ...ctx.Context) *text.BertForMaskedLM {
	t.Helper()
	m := text.NewBertForMaskedLM(tinyBert())
	loadBert(t, m, bertFixture, true, devs...)
	return m
}

// bertInputs returns the goldens' ids, token types and mask on dev.
func (g bertGoldens) inputs(dev ctx.Context) (ids, types, mask *nd.NDArray) {
	return idsArray(dev, g.IDs), idsArray(dev, g.TokenTypes), idsArray(dev, g.Mask)
}

// TestBertGoldens: on the goldens' batch (token types, the second
// sequence padded), BertModel's sequence and pooled outputs, the
// classifier's logits, loss and gradients, and the masked LM's logits,
// loss and gradients equal the plain-torch transcription's (float64 from
// the same float32 weights) within 1e-4 relative to 1+|value|, and 1e-5
// in relative L2 norm.
func TestBertGoldens(t *testing.T) {
	g := readBertGoldens(t)
	c := tinyBert()
	for k, v := range map[string]int{"vocab_size": c.VocabSize, "hidden_size": c.HiddenSize, "num_hidden_layers": c.NumHiddenLayers,
		"num_attention_heads": c.NumAttentionHeads, "intermediate_size": c.IntermediateSize,
		"max_position_embeddings": c.MaxPositionEmbeddings, "num_labels": c.NumLabels} {
		if g.Config[k] != float64(v) {
			t.Fatalf("the goldens' %s is %v, the tests' %d", k, g.Config[k], v)
		}
	}
	dev := ctx.CPU(0)
	ids, types, mask := g.inputs(dev)
	const tol = 1e-4
	worst := 0.0
	check := func(what string, got *nd.NDArray, want goldentest.Tensor) {
		t.Helper()
		worst = max(worst, goldentest.Compare(t, what, got, want, tol))
		if r := numcmp.RelL2(got.Float64s(), want.Data); !(r <= 1e-5) {
			t.Errorf("%s: relative L2 difference %.3g", what, r)
		}
	}
	scalar := func(what string, got *nd.NDArray, want float64) {
		t.Helper()
		if v := got.Float64s()[0]; !(math.Abs(v-want) <= tol*(1+math.Abs(want))) {
			t.Errorf("%s %.8g, PyTorch %.8g", what, v, want)
		}
	}
	grads := func(m gluon.Component, want map[string]goldentest.Tensor) {
		t.Helper()
		params := gluon.CollectParams(m)
		for _, name := range sortedNames(want) {
			p := params.Get(name)
			if p == nil {
				t.Fatalf("no parameter %s", name)
			}
			check("grad "+name, p.Grad(dev), want[name])
		}
	}

	t.Run("BertModel", func(t *testing.T) {
		m := text.NewBert(tinyBert())
		r := loadBert(t, m, bertFixture, true)
		// The pre-training heads' tensors are left out, under the file's names.
		want := []string{"cls.predictions.bias", "cls.predictions.decoder.bias", "cls.predictions.decoder.weight",
			"cls.predictions.transform.LayerNorm.beta", "cls.predictions.transform.LayerNorm.gamma",
			"cls.predictions.transform.dense.bias", "cls.predictions.transform.dense.weight",
			"cls.seq_relationship.bias", "cls.seq_relationship.weight"}
		if len(r.Missing) != 0 || !slices.Equal(r.Unexpected, want) {
			t.Errorf("report %+v, want unexpected %v", r, want)
		}
		autograd.PredictMode(func() {
			seq, pooled := m.Run(ids, types, mask)
			check("sequence output", seq, g.Sequence)
			check("pooled output", pooled, g.Pooled)
		})
	})
	t.Run("BertForSequenceClassification", func(t *testing.T) {
		m := tinyClassifier(t)
		labels := nd.FromSlice(dev, g.ClsLabels, len(g.ClsLabels))
		autograd.Record(func() {
			logits := m.Logits(ids, types, mask)
			loss := m.Loss(logits, labels)
			autograd.Backward(loss)
			check("classifier logits", logits, g.ClsLogits)
			scalar("classifier loss", loss, g.ClsLoss)
		})
		grads(m, g.ClsGrads)
	})
	t.Run("BertForMaskedLM", func(t *testing.T) {
		m := tinyMLM(t)
		labels := idsArray(dev, g.MLMLabels)
		autograd.Record(func() {
			logits := m.Logits(ids, types, mask)
			loss := m.Loss(logits, labels)
			autograd.Backward(loss)
			check("masked-LM logits", logits, g.MLMLogits)
			scalar("masked-LM loss", loss, g.MLMLoss)
		})
		grads(m, g.MLMGrads)
	})
	t.Logf("largest difference %.3g (relative to 1+|PyTorch|)", worst)
}

func sortedNames[V any](m map[string]V) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// TestBertMaskIsolates: what the padded positions hold (their ids and
// token types) changes no output at the positions the mask keeps, nor
// the pooled output, nor the classifier's logits; without the mask it
// does.
func TestBertMaskIsolates(t *testing.T) {
	dev := ctx.CPU(0)
	m := tinyClassifier(t)
	mask := idsArray(dev, [][]int64{{1, 1, 1, 1, 1, 0, 0, 0}, {1, 1, 1, 0, 0, 0, 0, 0}})
	a := idsArray(dev, [][]int64{{2, 10, 11, 12, 3, 0, 0, 0}, {2, 40, 3, 0, 0, 0, 0, 0}})
	b := idsArray(dev, [][]int64{{2, 10, 11, 12, 3, 77, 5, 98}, {2, 40, 3, 66, 66, 1, 2, 3}})
	ta := idsArray(dev, [][]int64{{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}})
	tb := idsArray(dev, [][]int64{{0, 0, 0, 0, 0, 1, 1, 1}, {0, 0, 0, 1, 0, 1, 0, 1}})
	kept := func(seq *nd.NDArray) []float32 { // the unmasked positions' outputs
		v, h := seq.Float32s(), seq.Shape()[2]
		var out []float32
		for i, keep := range []int{5, 3} {
			out = append(out, v[i*8*h:(i*8+keep)*h]...)
		}
		return out
	}
	autograd.PredictMode(func() {
		sa, pa := m.Bert().Run(a, ta, mask)
		sb, pb := m.Bert().Run(b, tb, mask)
		if r := numcmp.RelL2(kept(sb), kept(sa)); r > 1e-6 {
			t.Errorf("the kept positions' outputs moved by %.3g", r)
		}
		if r := numcmp.RelL2(pb.Float32s(), pa.Float32s()); r > 1e-6 {
			t.Errorf("the pooled output moved by %.3g", r)
		}
		if r := numcmp.RelL2(m.Logits(b, tb, mask).Float32s(), m.Logits(a, ta, mask).Float32s()); r > 1e-6 {
			t.Errorf("the logits moved by %.3g", r)
		}
		// A mask of ones is no mask.
		sOnes, _ := m.Bert().Run(b, tb, nd.OnesLike(mask))
		sNone, _ := m.Bert().Run(b, tb, nil)
		if r := numcmp.RelL2(sOnes.Float32s(), sNone.Float32s()); r > 1e-7 {
			t.Errorf("a mask of ones differs from none by %.3g", r)
		}
		sa, _ = m.Bert().Run(a, ta, nil)
		sb, _ = m.Bert().Run(b, tb, nil)
		if r := numcmp.RelL2(kept(sb), kept(sa)); r < 1e-3 {
			t.Errorf("without the mask the padding changes nothing (%.3g): the test proves nothing", r)
		}
		// Bool and float masks act as the integer one.
		want := m.Logits(b, tb, mask).Float32s()
		for _, dt := range []nd.DType{nd.Bool, nd.Float32} {
			if r := numcmp.RelL2(m.Logits(b, tb, mask.AsType(dt)).Float32s(), want); r > 1e-7 {
				t.Errorf("a %v mask: logits differ by %.3g", dt, r)
			}
		}
	})
}

// TestBertLosses: the classifier's loss is the cross-entropy averaged
// over the labels that are not −100, or for one label the mean squared
// error (regression); the masked LM's skips −100 positions; shapes that
// do not fit panic with ErrShape.
func TestBertLosses(t *testing.T) {
	dev := ctx.CPU(0)
	cfg := tinyBert()
	cls := text.NewBertForSequenceClassification(cfg)
	logits := nd.FromSlice(dev, []float64{1, 2, 0.5, -1, 0, 3, 0.2, 0.2, 0.2}, 3, 3)
	lp := nd.LogSoftmax(logits, -1).Float64s()
	got := cls.Loss(logits, nd.FromSlice(dev, []int64{1, -100, 0}, 3)).Float64s()[0]
	if want := -(lp[1] + lp[6]) / 2; math.Abs(got-want) > 1e-12 {
		t.Errorf("cross-entropy %.15g, want %.15g", got, want)
	}
	cfg.NumLabels = 1
	reg := text.NewBertForSequenceClassification(cfg)
	got = reg.Loss(nd.FromSlice(dev, []float64{1, 2, 4}, 3, 1), nd.FromSlice(dev, []float64{0, 2, 1}, 3)).Float64s()[0]
	if want := (1.0 + 0 + 9) / 3; math.Abs(got-want) > 1e-12 {
		t.Errorf("mean squared error %.15g, want %.15g", got, want)
	}
	mlm := text.NewBertForMaskedLM(tinyBert())
	lg := nd.RandomNormal(dev, nd.Float64, 0, 1, 1, 3, 112)
	lp = nd.LogSoftmax(lg, -1).Float64s()
	got = mlm.Loss(lg, nd.FromSlice(dev, []int64{-100, 7, -100}, 1, 3)).Float64s()[0]
	if want := -lp[112+7]; math.Abs(got-want) > 1e-12 {
		t.Errorf("masked-LM loss %.15g, want %.15g", got, want)
	}
	for name, f := range map[string]func(){
		"classifier labels": func() { cls.Loss(logits, nd.FromSlice(dev, []int64{1, 0}, 2)) },
		"float classes":     func() { cls.Loss(logits, nd.FromSlice(dev, []float64{1, 0, 2}, 3)) },
		"masked-LM shape":   func() { mlm.Loss(lg, nd.FromSlice(dev, []int64{1, 2}, 1, 2)) },
		"long input": func() {
			cls.Forward(nd.Zeros(dev, nd.Int64, 1, 17))
		},
		"mask shape": func() {
			cls.Logits(nd.Zeros(dev, nd.Int64, 2, 4), nil, nd.Ones(dev, nd.Int64, 2, 3))
		},
		"float ids": func() { cls.Forward(nd.Zeros(dev, nd.Float32, 2, 4)) },
	} {
		if err := nd.Catch(f); !errors.Is(err, &nd.Error{Kind: nd.ErrShape}) {
			t.Errorf("%s: %v, want a shape error", name, err)
		}
	}
	if err := nd.Catch(func() { cls.ForwardMulti() }); !errors.Is(err, &nd.Error{Kind: nd.ErrArgument}) {
		t.Errorf("no inputs: %v, want an argument error", err)
	}
}

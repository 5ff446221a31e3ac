package text_test

import (
	"errors"
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
	"github.com/goluon/goluon/nd"
)

// rewriteBert writes the safetensors fixture's tensors, changed by edit,
// to a new file and returns its path.
func rewriteBert(t testing.TB, edit func(map[string]safetensors.Tensor)) string {
	t.Helper()
	f := readFile(t, bertFixture)
	edit(f.Tensors)
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := safetensors.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// sequenceOf runs an encoder on a fixed padded batch in predict mode.
func sequenceOf(b *text.Bert) []float32 {
	ids, tt, mask := bertBatch(ctx.CPU(0), 2, 6)
	var y []float32
	autograd.PredictMode(func() {
		s, _ := b.Run(ids, tt, mask)
		y = s.Float32s()
	})
	return y
}

// TestBertLoadLayouts: the fixtures load in the layouts transformers'
// files have, into each model, with the keys each leaves out reported
// when partial: the pre-training checkpoint (gamma/beta names,
// position_ids, tied decoder tensors, seq_relationship) into the encoder,
// the masked LM and a classifier (its head new and initialised); the
// classifier's pytorch_model.bin; a bare BertModel's file (no "bert."
// prefix). The encoders compute the same outputs.
func TestBertLoadLayouts(t *testing.T) {
	cfg := tinyBert()
	want := sequenceOf(tinyClassifier(t).Bert())
	// The pooler is passed over, as transformers ignores it for a masked LM.
	mlmExtra := []string{"cls.seq_relationship.bias", "cls.seq_relationship.weight"}

	t.Run("masked LM strict", func(t *testing.T) {
		m := text.NewBertForMaskedLM(cfg)
		_, err := text.LoadBert(m, bertFixture, text.BertLoadOpts{})
		var le *text.LoadError
		if !errors.As(err, &le) || len(le.Missing) != 0 || !slices.Equal(le.Unexpected, mlmExtra) || len(le.Shapes) != 0 || le.Untied {
			t.Fatalf("%v, want a LoadError with unexpected %v only", err, mlmExtra)
		}
		if gluon.CollectParams(m).Get("cls.predictions.bias").Initialized() {
			t.Error("a failed load initialised the model")
		}
	})
	t.Run("masked LM partial", func(t *testing.T) {
		m := text.NewBertForMaskedLM(cfg)
		r := loadBert(t, m, bertFixture, true)
		if len(r.Missing) != 0 || !slices.Equal(r.Unexpected, mlmExtra) {
			t.Errorf("report %+v", r)
		}
		if !slices.Equal(sequenceOf(m.Bert()), want) {
			t.Error("other outputs")
		}
	})
	t.Run("classifier on the pre-trained encoder", func(t *testing.T) {
		nd.Seed(2)
		m := text.NewBertForSequenceClassification(cfg)
		r := loadBert(t, m, bertFixture, true, ctx.CPU(0), ctx.CPU(1))
		if !slices.Equal(r.Missing, []string{"classifier.weight", "classifier.bias"}) || len(r.Unexpected) != 9 {
			t.Errorf("report %+v", r)
		}
		params := gluon.CollectParams(m)
		w := params.Get("classifier.weight").Data(ctx.CPU(1)).Float64s()
		if _, sd := stats(w); sd < 0.01 || sd > 0.04 || slices.ContainsFunc(params.Get("classifier.bias").Data(ctx.CPU(0)).Float64s(), func(v float64) bool { return v != 0 }) {
			t.Errorf("the new classifier is not initialised as transformers does (weight sd %.3f)", sd)
		}
		if !slices.Equal(sequenceOf(m.Bert()), want) {
			t.Error("other outputs")
		}
		// A classifier initialised before keeps its values.
		params.Get("classifier.weight").SetData(nd.Ones(ctx.CPU(0), nd.Float32, 3, 32))
		loadBert(t, m, bertFixture, true)
		if v := params.Get("classifier.weight").Data(ctx.CPU(0)).Float64s(); v[0] != 1 || v[len(v)-1] != 1 {
			t.Error("the partial load changed the initialised classifier")
		}
	})
	t.Run("bare BertModel file", func(t *testing.T) {
		b := text.NewBert(cfg)
		loadBert(t, b, bertClsFixture, true)
		path := filepath.Join(t.TempDir(), "model.safetensors")
		if err := text.SaveBert(b, path); err != nil {
			t.Fatal(err)
		}
		if names := readFile(t, path).Names(); names[0] != "embeddings.LayerNorm.bias" || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "bert.") }) {
			t.Errorf("saved keys %v", names[:3])
		}
		b2 := text.NewBert(cfg)
		loadBert(t, b2, path, false)
		c := text.NewBertForSequenceClassification(cfg)
		if r := loadBert(t, c, path, true); len(r.Missing) != 2 || len(r.Unexpected) != 0 {
			t.Errorf("report %+v", r)
		}
		for _, got := range [][]float32{sequenceOf(b), sequenceOf(b2), sequenceOf(c.Bert())} {
			if !slices.Equal(got, want) {
				t.Error("other outputs")
			}
		}
	})
}

// TestBertLoadErrors: a state dict that does not fit is a *LoadError
// listing every missing key, unexpected key, wrong shape (a weight saved
// transposed is named so) and untied tensor at once; a partial load
// still fails on shapes and ties; a failed load leaves the model as it
// was.
func TestBertLoadErrors(t *testing.T) {
	edit := func(ts map[string]safetensors.Tensor) {
		ts["bert.encoder.layer.2.output.dense.bias"] = ts["bert.encoder.layer.1.output.dense.bias"]
		delete(ts, "bert.encoder.layer.1.output.dense.bias")
		delete(ts, "cls.seq_relationship.weight")
		delete(ts, "cls.seq_relationship.bias")
		w := ts["bert.encoder.layer.0.intermediate.dense.weight"] // [64, 32] as [32, 64]
		ts["bert.encoder.layer.0.intermediate.dense.weight"] = safetensors.Tensor{DType: w.DType, Shape: []int{32, 64}, Data: w.Data}
		ts["cls.predictions.decoder.weight"] = safetensors.FromFloat32([]int{112, 32}, make([]float32, 112*32))
		delete(ts, "bert.pooler.dense.weight")
		delete(ts, "bert.pooler.dense.bias")
	}
	path := rewriteBert(t, edit)
	m := tinyMLM(t)
	before := gluon.CollectParams(m).Get("bert.encoder.layer.1.output.dense.bias").Data(ctx.CPU(0)).Float32s()
	_, err := text.LoadBert(m, path, text.BertLoadOpts{})
	var le *text.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("%v, want a *text.LoadError", err)
	}
	t.Log(err)
	if !slices.Equal(le.Missing, []string{"bert.encoder.layer.1.output.dense.bias"}) ||
		!slices.Equal(le.Unexpected, []string{"bert.encoder.layer.2.output.dense.bias"}) ||
		len(le.Shapes) != 1 || !strings.Contains(le.Shapes[0], "bert.encoder.layer.0.intermediate.dense.weight: the file holds [32 64], the model wants [64 32] (transposed") ||
		!le.Untied || !slices.Equal(le.UntiedKeys, []string{"cls.predictions.decoder.weight differs from bert.embeddings.word_embeddings.weight"}) {
		t.Errorf("got %+v", le)
	}
	if _, err := text.LoadBert(m, path, text.BertLoadOpts{Partial: true}); !errors.As(err, &le) || len(le.Shapes) != 1 || !le.Untied {
		t.Errorf("partial: %v, want the shape and the tie reported", err)
	}
	if got := gluon.CollectParams(m).Get("bert.encoder.layer.1.output.dense.bias").Data(ctx.CPU(0)).Float32s(); !slices.Equal(got, before) {
		t.Error("a failed load changed the model")
	}
	// A tied tensor without the one it is tied to is unexpected.
	lone := rewriteBert(t, func(ts map[string]safetensors.Tensor) {
		delete(ts, "cls.predictions.bias")
	})
	if _, err := text.LoadBert(text.NewBertForMaskedLM(tinyBert()), lone, text.BertLoadOpts{}); !errors.As(err, &le) ||
		!slices.Contains(le.Unexpected, "cls.predictions.decoder.bias (without cls.predictions.bias)") {
		t.Errorf("%v, want the lone decoder bias reported", err)
	}
	if r, err := text.LoadBert(text.NewBertForMaskedLM(tinyBert()), lone, text.BertLoadOpts{Partial: true}); err != nil ||
		!slices.Equal(r.Missing, []string{"cls.predictions.bias"}) || !slices.Contains(r.Unexpected, "cls.predictions.decoder.bias (without cls.predictions.bias)") {
		t.Errorf("partial: %+v, %v", r, err)
	}
	for name, p := range map[string]string{"no file": filepath.Join(t.TempDir(), "none.bin"), "not one": writeFile(t, []byte("junk junk"))} {
		if _, err := text.LoadBert(text.NewBert(tinyBert()), p, text.BertLoadOpts{}); err == nil || !strings.HasPrefix(err.Error(), "text: ") {
			t.Errorf("%s: %v, want a text error", name, err)
		}
	}
}

// TestSaveBert: SaveBert writes transformers' keys (the classifier's
// .bin fixture's, without the buffer; the masked LM without the tied
// decoder tensors) in safetensors (metadata format "pt") or torch.save's
// format, and the files load back into models computing the same
// outputs.
func TestSaveBert(t *testing.T) {
	dev := ctx.CPU(0)
	cls := tinyClassifier(t)
	ref, err := pytorch.LoadStateDict(bertClsFixture, dev)
	if err != nil {
		t.Fatal(err)
	}
	delete(ref, "bert.embeddings.token_type_ids")
	ids, tt, mask := bertBatch(dev, 2, 5)
	logits := func(m *text.BertForSequenceClassification) []float32 {
		var y []float32
		autograd.PredictMode(func() { y = m.Logits(ids, tt, mask).Float32s() })
		return y
	}
	for _, name := range []string{"model.safetensors", "pytorch_model.bin"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			if err := text.SaveBert(cls, path); err != nil {
				t.Fatal(err)
			}
			saved, err := pytorch.LoadStateDict(path, dev)
			if strings.HasSuffix(name, ".safetensors") {
				saved, err = gluon.LoadArrays(path, dev)
				if md := readFile(t, path).Metadata; md["format"] != "pt" {
					t.Errorf("metadata %v", md)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(saved) != len(ref) {
				t.Errorf("%d tensors saved, the fixture has %d", len(saved), len(ref))
			}
			for k, v := range ref {
				if s, ok := saved[k]; !ok || !slices.Equal(s.Shape(), v.Shape()) || !slices.Equal(s.Float32s(), v.Float32s()) {
					t.Errorf("%s: not saved as the fixture holds it", k)
				}
			}
			back := text.NewBertForSequenceClassification(tinyBert())
			loadBert(t, back, path, false)
			if !slices.Equal(logits(back), logits(cls)) {
				t.Error("the reloaded model computes other logits")
			}
		})
	}
	path := filepath.Join(t.TempDir(), "mlm.safetensors")
	if err := text.SaveBert(tinyMLM(t), path); err != nil {
		t.Fatal(err)
	}
	names := readFile(t, path).Names()
	if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "decoder") || strings.Contains(n, "pooler") }) ||
		!slices.Contains(names, "cls.predictions.bias") || !slices.Contains(names, "cls.predictions.transform.LayerNorm.weight") {
		t.Errorf("masked LM saved as %v", names)
	}
	if err := text.SaveBert(text.NewBert(tinyBert()), path); err == nil {
		t.Error("saved an uninitialised model")
	}
}

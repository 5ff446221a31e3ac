package text_test

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// The tests' tiny BERT: bert-base-uncased is text.BertBase() (or
// text.LoadBertConfig of its config.json) with its model.safetensors
// and vocab.txt.
func exampleConfig() text.BertConfig {
	return text.BertConfig{VocabSize: 112, HiddenSize: 32, NumHiddenLayers: 2, NumAttentionHeads: 4,
		IntermediateSize: 64, MaxPositionEmbeddings: 16, NumLabels: 3}
}

// BERT's WordPiece tokenizer (uncased: lowercase, accents stripped)
// splits words into vocabulary pieces, punctuation and CJK characters
// into tokens of their own; unknown words become [UNK].
func ExampleBertTokenizer() {
	tok, err := text.LoadBertTokenizer(filepath.Join("testdata", "wordpiece_vocab.txt"), text.BertTokenizerOpts{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok.Tokenize("Héllo, Wörld! Unaffable zebras 我爱北京"))
	e, _ := tok.EncodePair("the quick fox", "hello", text.BertEncodeOpts{MaxLength: 10, PadToMax: true})
	fmt.Println(e.IDs)
	fmt.Println(e.TokenTypeIDs)
	fmt.Println(e.AttentionMask)
	fmt.Printf("%q\n", tok.Decode(e.IDs, true))
	// Output:
	// [hello , world ! un ##aff ##able [UNK] 我 爱 北 京]
	// [3 46 47 49 4 54 4 0 0 0]
	// [0 0 0 0 0 1 1 0 0 0]
	// [1 1 1 1 1 1 1 0 0 0]
	// "the quick fox hello"
}

// Sequence classification: a batch of texts, tokenized and padded, through
// a classifier read from a pytorch_model.bin (the tiny model's weights
// are random).
func ExampleBertForSequenceClassification() {
	tok, err := text.LoadBertTokenizer(filepath.Join("testdata", "wordpiece_vocab.txt"), text.BertTokenizerOpts{})
	if err != nil {
		fmt.Println(err)
		return
	}
	batch, err := tok.EncodeBatch([]string{"The quick brown fox jumped.", "Hello world!"}, nil, text.BertEncodeOpts{MaxLength: 16})
	if err != nil {
		fmt.Println(err)
		return
	}
	net := text.NewBertForSequenceClassification(exampleConfig())
	if _, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny_cls.bin"), text.BertLoadOpts{}); err != nil {
		fmt.Println(err)
		return
	}
	ids, types, mask := batch.Arrays(ctx.CPU(0))
	autograd.PredictMode(func() {
		probs := nd.Softmax(net.Logits(ids, types, mask), -1)
		fmt.Println(ids.Shape(), "→", probs.Shape())
		fmt.Printf("%.3f\n", probs.Float32s())
		fmt.Println("classes:", nd.ArgMax(probs, 1).Int64s())
	})
	// Output:
	// [2 9] → [2 3]
	// [0.396 0.262 0.343 0.325 0.459 0.215]
	// classes: [0 1]
}

// Masked language modelling: the three most likely words for [MASK] (the
// tiny model's weights are random).
func ExampleBertForMaskedLM() {
	tok, err := text.LoadBertTokenizer(filepath.Join("testdata", "wordpiece_vocab.txt"), text.BertTokenizerOpts{})
	if err != nil {
		fmt.Println(err)
		return
	}
	net := text.NewBertForMaskedLM(exampleConfig())
	// The pre-training checkpoint's next-sentence head has no place in a
	// masked LM: a partial load skips and lists it (the pooler, which
	// transformers ignores for a masked LM, is passed over silently).
	report, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny.safetensors"), text.BertLoadOpts{Partial: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("skipped:", report.Unexpected)
	e, _ := tok.Encode("the quick brown [MASK] jumped.", text.BertEncodeOpts{})
	maskID, _ := tok.ID("[MASK]")
	at := slices.Index(e.IDs, maskID)
	autograd.PredictMode(func() {
		logits := net.Forward(nd.FromSlice(ctx.CPU(0), e.IDs, 1, len(e.IDs)))
		_, best := nd.TopK(nd.SliceAxis(logits, at, at+1, 1), 3, -1, true)
		for _, id := range best.Int64s() {
			fmt.Print(tok.Token(id), " ")
		}
		fmt.Println()
	})
	// Output:
	// skipped: [cls.seq_relationship.bias cls.seq_relationship.weight]
	// i token -
}

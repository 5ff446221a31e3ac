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

// exampleTokenizer is the tests' WordPiece vocabulary (bert-base-uncased's
// vocab.txt for the real one).
func exampleTokenizer() *text.BertTokenizer {
	tok, err := text.LoadBertTokenizer(filepath.Join("testdata", "wordpiece_vocab.txt"), text.BertTokenizerOpts{})
	if err != nil {
		panic(err)
	}
	return tok
}

// Token classification (named entities, parts of speech): a new
// classifier on the pre-trained encoder gives logits for every word
// piece; as transformers' examples do, the labels are −100 on the special
// tokens and on the pieces after a word's first, which the loss skips
// (the tiny model's weights are random, its classifier freshly
// initialised: the loss is about ln 3).
func ExampleBertForTokenClassification() {
	tok := exampleTokenizer()
	nd.Seed(1)
	net := text.NewBertForTokenClassification(exampleConfig())
	report, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny.safetensors"), text.BertLoadOpts{Partial: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("new:", report.Missing)
	e, _ := tok.Encode("the quick brown fox jumped", text.BertEncodeOpts{})
	fmt.Println(tok.Tokenize("the quick brown fox jumped"))
	dev := ctx.CPU(0)
	labels := nd.FromSlice(dev, []int64{-100, 0, 1, 1, 2, 0, -100, -100}, 1, len(e.IDs))
	autograd.PredictMode(func() {
		logits := net.Forward(nd.FromSlice(dev, e.IDs, 1, len(e.IDs)))
		fmt.Println(logits.Shape())
		fmt.Printf("loss %.3f\n", net.Loss(logits, labels).Float64s()[0])
	})
	// Output:
	// new: [classifier.weight classifier.bias]
	// [the quick brown fox jump ##ed]
	// [1 8 3]
	// loss 1.056
}

// Extractive question answering: the start and end logits of every
// token of a (question, context) pair, and the best span of the context
// (the tiny model's weights are random, its qa_outputs freshly
// initialised).
func ExampleBertForQuestionAnswering() {
	tok := exampleTokenizer()
	nd.Seed(1)
	net := text.NewBertForQuestionAnswering(exampleConfig())
	if _, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny.safetensors"), text.BertLoadOpts{Partial: true}); err != nil {
		fmt.Println(err)
		return
	}
	e, _ := tok.EncodePair("the quick fox", "hello world the quick brown fox jumped", text.BertEncodeOpts{})
	dev := ctx.CPU(0)
	n := len(e.IDs)
	autograd.PredictMode(func() {
		start, end := net.Logits(nd.FromSlice(dev, e.IDs, 1, n), nd.FromSlice(dev, e.TokenTypeIDs, 1, n), nil)
		s, en := start.Float64s(), end.Float64s()
		// The best span i ≤ j of the context (segment 1, not its [SEP]).
		best, bi, bj := 0.0, -1, -1
		for i := range n - 1 {
			for j := i; j < n-1 && j < i+5; j++ {
				if e.TokenTypeIDs[i] == 1 && (bi < 0 || s[i]+en[j] > best) {
					best, bi, bj = s[i]+en[j], i, j
				}
			}
		}
		fmt.Println(start.Shape(), end.Shape())
		fmt.Printf("answer: %q\n", tok.Decode(e.IDs[bi:bj+1], true))
	})
	// Output:
	// [1 14] [1 14]
	// answer: "brown fox jump"
}

// Pre-training: the hub's bert-base-uncased checkpoint holds both heads,
// so it loads strictly; the masked-LM head predicts the [MASK] token and
// the next-sentence head scores whether the second segment follows the
// first (index 0) or is random (the tiny model's weights are random).
func ExampleBertForPreTraining() {
	tok := exampleTokenizer()
	net := text.NewBertForPreTraining(exampleConfig())
	if _, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny.safetensors"), text.BertLoadOpts{}); err != nil {
		fmt.Println(err)
		return
	}
	e, _ := tok.EncodePair("the quick brown [MASK]", "the fox jumped", text.BertEncodeOpts{})
	maskID, _ := tok.ID("[MASK]")
	at := slices.Index(e.IDs, maskID)
	dev := ctx.CPU(0)
	n := len(e.IDs)
	autograd.PredictMode(func() {
		pred, rel := net.Logits(nd.FromSlice(dev, e.IDs, 1, n), nd.FromSlice(dev, e.TokenTypeIDs, 1, n), nil)
		best := nd.ArgMax(nd.SliceAxis(pred, at, at+1, 1), 2).Int64s()[0]
		fmt.Println(pred.Shape(), rel.Shape())
		fmt.Println("[MASK] →", tok.Token(best))
		fmt.Printf("is next: %.3f\n", nd.Softmax(rel, -1).Float64s()[0])
	})
	// Output:
	// [1 11 112] [1 2]
	// [MASK] → [unused4]
	// is next: 0.301
}

// Next-sentence prediction alone: the pre-training checkpoint's
// masked-LM head has no place in it, so a partial load skips it.
func ExampleBertForNextSentencePrediction() {
	tok := exampleTokenizer()
	net := text.NewBertForNextSentencePrediction(exampleConfig())
	report, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny.safetensors"), text.BertLoadOpts{Partial: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(report.Unexpected), "skipped, missing:", report.Missing)
	batch, _ := tok.EncodeBatch([]string{"the quick brown fox", "hello world"}, []string{"jumped", "the cafe"}, text.BertEncodeOpts{})
	ids, types, mask := batch.Arrays(ctx.CPU(0))
	autograd.PredictMode(func() {
		probs := nd.Softmax(net.Logits(ids, types, mask), -1) // [2, 2]
		fmt.Printf("is next: %.3f\n", nd.SliceAxis(probs, 0, 1, 1).Float64s())
	})
	// Output:
	// 7 skipped, missing: []
	// is next: [0.716 0.385]
}

// Multiple choice: every (question, choice) pair is a sequence, the
// choices of a question a row of the input [B, C, T]; the model scores
// the choices (the tiny model's weights are random, its classifier
// freshly initialised).
func ExampleBertForMultipleChoice() {
	tok := exampleTokenizer()
	nd.Seed(1)
	net := text.NewBertForMultipleChoice(exampleConfig())
	if _, err := text.LoadBert(net, filepath.Join("testdata", "bert_tiny.safetensors"), text.BertLoadOpts{Partial: true}); err != nil {
		fmt.Println(err)
		return
	}
	question := "the quick brown fox"
	choices := []string{"jumped", "hello world", "cafe"}
	batch, _ := tok.EncodeBatch(slices.Repeat([]string{question}, len(choices)), choices, text.BertEncodeOpts{})
	ids, types, mask := batch.Arrays(ctx.CPU(0)) // [C, T]
	c, t := ids.Shape()[0], ids.Shape()[1]
	autograd.PredictMode(func() {
		logits := net.Logits(nd.Reshape(ids, 1, c, t), nd.Reshape(types, 1, c, t), nd.Reshape(mask, 1, c, t)) // [1, C]
		fmt.Printf("%v %.3f\n", logits.Shape(), nd.Softmax(logits, -1).Float64s())
	})
	// Output:
	// [1 3] [0.334 0.327 0.339]
}

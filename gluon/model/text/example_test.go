package text_test

import (
	"fmt"
	"path/filepath"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

// A GPT-2 (here the tests' tiny one; text.GPT2Small() with Hugging
// Face's model.safetensors for "gpt2") loads a GPT2LMHeadModel state
// dict and continues a prompt greedily, through its key-value cache.
func ExampleGPT2_Generate() {
	cfg := text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 2, NHead: 4}
	net, err := text.LoadGPT2(filepath.Join("testdata", "gpt2_tiny.safetensors"), cfg, ctx.CPU(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	names := gluon.CollectParams(net).Names()
	fmt.Println(names[:3], len(names), "parameters")
	out, err := net.Generate([]int64{11, 42, 7}, 8, text.GenerateOpts{Greedy: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("greedy:", out)
	// Output:
	// [transformer.wte.weight transformer.wpe.weight transformer.h.0.ln_1.weight] 28 parameters
	// greedy: [15 18 27 27 12 12 12 12]
}

// Forward gives the logits of every position; LMLoss is the loss
// GPT2LMHeadModel computes with labels equal to the inputs.
func ExampleLMLoss() {
	cfg := text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 2, NHead: 4}
	net, err := text.LoadGPT2(filepath.Join("testdata", "gpt2_tiny.safetensors"), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := nd.FromSlice(ctx.CPU(0), []int64{11, 42, 7, 15, 18, 27}, 1, 6)
	autograd.PredictMode(func() {
		logits := net.Forward(ids)
		fmt.Println(logits.Shape())
		fmt.Printf("loss %.3f\n", text.LMLoss(logits, ids).Float64s()[0])
	})
	// Output:
	// [1 6 97]
	// loss 3.815
}

// GPT-2's byte-level BPE (here on a handmade vocabulary; vocab.json and
// merges.txt of "gpt2" for the real one) cuts text into words with their
// leading space and merges their bytes.
func ExampleBPE() {
	tok, err := text.LoadBPE(filepath.Join("testdata", "bpe_vocab.json"), filepath.Join("testdata", "bpe_merges.txt"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := tok.Encode("the other dog didn't")
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := tok.Decode(ids)
	fmt.Println(ids, len(ids), "tokens")
	fmt.Printf("%q %v\n", s, err)
	// Output:
	// [266 282 280 268 325 271] 6 tokens
	// "the other dog didn't" <nil>
}

// Prompts of different lengths continue together: GenerateBatch pads
// them on the left with an attention mask and runs every row through one
// cache, each row ending at its own end token (here 76); OnBatchToken
// streams the tokens with their row as they are chosen.
func ExampleGPT2_GenerateBatch() {
	cfg := text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 2, NHead: 4}
	net, err := text.LoadGPT2(filepath.Join("testdata", "gpt2_tiny.safetensors"), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	prompts := [][]int64{{11, 42, 7, 15, 18}, {63, 5}, {11, 42, 7, 80}}
	streamed := make([]int, len(prompts))
	out, err := net.GenerateBatch(prompts, 6, text.GenerateOpts{Greedy: true, EOS: []int64{76},
		OnBatchToken: func(row int, tok int64) bool {
			streamed[row]++
			return true
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, row := range out {
		fmt.Println(prompts[i], "→", row)
	}
	fmt.Println("streamed per row:", streamed)
	// Output:
	// [11 42 7 15 18] → [27 27 12 12 12 12]
	// [63 5] → [85 76]
	// [11 42 7 80] → [18 27 27 12 12 12]
	// streamed per row: [6 2 6]
}

// ForwardMasked takes a batch padded on the left (whatever ids the
// padding holds) with its attention mask: each row's tokens get the
// logits of the row alone, as transformers' GPT-2 gives them with
// attention_mask and generate's position ids.
func ExampleGPT2_ForwardMasked() {
	cfg := text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 2, NHead: 4}
	net, err := text.LoadGPT2(filepath.Join("testdata", "gpt2_tiny.safetensors"), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev := ctx.CPU(0)
	ids := nd.FromSlice(dev, []int64{
		0, 0, 0, 11, 42, 7,
		5, 9, 33, 2, 71, 8}, 2, 6)
	mask := nd.FromSlice(dev, []int64{
		0, 0, 0, 1, 1, 1,
		1, 1, 1, 1, 1, 1}, 2, 6)
	autograd.PredictMode(func() {
		logits := net.ForwardMasked(ids, mask) // [2, 6, 97]
		padded := nd.SliceAxis(nd.SliceAxis(logits, 0, 1, 0), 3, 6, 1)
		alone := net.Forward(nd.FromSlice(dev, []int64{11, 42, 7}, 1, 3))
		diff := nd.Max(nd.Abs(nd.Sub(padded, alone))).Float64s()[0]
		fmt.Println(logits.Shape(), "row 0 as alone:", diff < 1e-5)
		fmt.Println("next tokens:", nd.ArgMax(nd.SliceAxis(logits, 5, 6, 1), 2).Int64s())
	})
	// Output:
	// [2 6 97] row 0 as alone: true
	// next tokens: [15 24]
}

// Step by step through the cache, as GenerateBatch runs: the left-padded
// prompts with their mask first, then one token per row, without a mask
// (the cache extends its own by ones).
func ExampleGPT2_ForwardCachedMasked() {
	cfg := text.GPT2Config{VocabSize: 97, NPositions: 32, NEmbd: 48, NLayer: 2, NHead: 4}
	net, err := text.LoadGPT2(filepath.Join("testdata", "gpt2_tiny.safetensors"), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev := ctx.CPU(0)
	ids := nd.FromSlice(dev, []int64{
		0, 0, 0, 63, 5,
		11, 42, 7, 15, 18}, 2, 5)
	mask := nd.FromSlice(dev, []int64{
		0, 0, 0, 1, 1,
		1, 1, 1, 1, 1}, 2, 5)
	autograd.PredictMode(func() {
		c := net.NewCache()
		defer c.Release()
		logits := net.ForwardCachedMasked(ids, mask, c)
		for range 3 {
			t := logits.Shape()[1]
			next := nd.ArgMax(nd.SliceAxis(logits, t-1, t, 1), 2) // [2, 1]
			fmt.Println(next.Int64s())
			logits = net.ForwardCached(next, c)
		}
		fmt.Println(c.Len(), "positions cached")
	})
	// Output:
	// [85 27]
	// [76 27]
	// [18 12]
	// 8 positions cached
}

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

// Command text-generation continues a prompt with GPT-2, as Hugging
// Face's text-generation pipeline does, from a model directory laid out as
// the hub's "gpt2" repository (or gpt2-medium, -large, -xl, distilgpt2):
//
//	config.json                          the architecture
//	model.safetensors or pytorch_model.bin  the weights
//	vocab.json, merges.txt               the byte-level BPE tokenizer
//
// Nothing is downloaded here: fetch those four files yourself (for
// example from https://huggingface.co/gpt2/tree/main) into a folder and
// pass it as -model. The text streams out as it is generated, then a line
// with the speed.
//
//	go run ./tutorials/text-generation -model ~/gpt2 -prompt "The meaning of life is"
//	go run ./tutorials/text-generation -model ~/gpt2 -greedy -n 30
//	go run ./tutorials/text-generation -model ~/gpt2 -temperature 0.7 -top-p 0.9 -seed 3
//
// Sampling follows the pipeline's defaults (temperature 1, top-k 50, no
// top-p cut); -greedy, or -temperature 0, takes the most likely token
// each time (the library's GenerateOpts reads a zero Temperature as 1:
// the program maps 0 to greedy, as users of other tools expect). The
// same -seed gives the same text. Generation stops at -n new tokens or at
// <|endoftext|>. The text streams as Hugging Face's decode writes it:
// a character split over tokens appears once it is whole, and bytes that
// cannot form one appear as U+FFFD as soon as that is known.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/model/text"
	"github.com/goluon/goluon/nd"
)

const program = "text-generation"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
}

// run parses args, generates and writes the text and a summary line to
// out.
func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	dir := fs.String("model", "", "folder with config.json, model.safetensors (or pytorch_model.bin), vocab.json and merges.txt")
	prompt := fs.String("prompt", "Hello, I'm a language model,", "text to continue")
	n := fs.Int("n", 40, "new tokens at most")
	temperature := fs.Float64("temperature", 1, "sampling temperature (0: greedy)")
	topK := fs.Int("top-k", 50, "sample among the k most likely tokens (0: all)")
	topP := fs.Float64("top-p", 1, "sample among the most likely tokens whose probabilities add up to p (1: all)")
	greedy := fs.Bool("greedy", false, "take the most likely token each time")
	seed := fs.Uint64("seed", 0, "sampling seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("no -model folder: download config.json, model.safetensors, vocab.json and merges.txt of a GPT-2 (https://huggingface.co/gpt2) into one and pass it")
	}
	m, tok, err := load(*dir)
	if err != nil {
		return err
	}
	ids, err := tok.Encode(*prompt)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return errors.New("the prompt is empty")
	}
	eos, hasEOS := tok.ID("<|endoftext|>")
	opts := text.GenerateOpts{Temperature: *temperature, TopK: *topK, TopP: *topP, Greedy: *greedy || *temperature == 0, Seed: *seed}
	if hasEOS {
		opts.EOS = []int64{eos}
	}
	nd.Seed(*seed)

	// Stream: decode everything generated so far as Hugging Face does
	// (DecodeString: invalid bytes become U+FFFD) and write what is new,
	// all but a character that the next token may still complete.
	fmt.Fprint(out, *prompt)
	var gen []int64
	written := 0
	var streamErr error
	opts.OnToken = func(id int64) bool {
		if hasEOS && id == eos {
			return true
		}
		gen = append(gen, id)
		raw, err := tok.Decode(gen)
		if err != nil {
			streamErr = err
			return false
		}
		s, _ := tok.DecodeString(gen)
		end := len(s)
		if incompleteTail(raw) {
			end -= len(string(utf8.RuneError)) // its one U+FFFD, for now
		}
		if end > written {
			fmt.Fprint(out, s[written:end])
			written = end
		}
		return true
	}
	start := time.Now()
	all, err := m.Generate(ids, *n, opts)
	if err != nil {
		return err
	}
	if streamErr != nil {
		return streamErr
	}
	if s, _ := tok.DecodeString(gen); written < len(s) {
		fmt.Fprint(out, s[written:])
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(out, "\n\n%d prompt tokens, %d new in %.2f s (%.1f tokens/s)\n", len(ids), len(all), secs, float64(len(all))/secs)
	return nil
}

// incompleteTail reports whether raw ends with the start of a character
// that more bytes could complete: a lead byte among the last three, with
// the continuation bytes after it valid so far (utf8.FullRune is false).
// Everything before it decodes the same whatever comes next.
func incompleteTail(raw string) bool {
	for n := 1; n <= min(3, len(raw)); n++ {
		if c := raw[len(raw)-n]; !utf8.RuneStart(c) {
			continue // a continuation byte
		}
		return !utf8.FullRuneInString(raw[len(raw)-n:])
	}
	return false
}

// load reads the model and the tokenizer from dir.
func load(dir string) (*text.GPT2, *text.BPE, error) {
	cfg, err := text.LoadGPT2Config(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, nil, err
	}
	weights := filepath.Join(dir, "model.safetensors")
	if _, err := os.Stat(weights); err != nil {
		weights = filepath.Join(dir, "pytorch_model.bin")
	}
	m, err := text.LoadGPT2(weights, cfg, ctx.CPU(0))
	if err != nil {
		return nil, nil, err
	}
	tok, err := text.LoadBPE(filepath.Join(dir, "vocab.json"), filepath.Join(dir, "merges.txt"))
	if err != nil {
		return nil, nil, err
	}
	if tok.VocabSize() > cfg.VocabSize {
		return nil, nil, fmt.Errorf("the tokenizer has %d tokens, the model %d", tok.VocabSize(), cfg.VocabSize)
	}
	return m, tok, nil
}

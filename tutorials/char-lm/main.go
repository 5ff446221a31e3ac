// Command char-lm trains a character-level language model, the way
// nanoGPT's Shakespeare run does on a laptop CPU: a small GPT (4 layers,
// 4 heads, 128-wide embedding, a context of 64 bytes, 2,000 AdamW steps
// with warm-up and cosine decay, gradients clipped to norm 1), or with
// -model lstm a 2-layer LSTM. It trains data-parallel over two CPU
// contexts: each batch is split with SplitAndLoad, every context runs its
// share forward and backward, the trainer sums the gradients.
//
// The text is about 1 MB of Go: the standard library's source for a dozen
// packages, read from the Go distribution that builds the program
// ($(go env GOROOT)/src), so no download is needed; -text FILE trains on
// any other file. The model reads bytes.
//
//	go run ./tutorials/char-lm
//	go run ./tutorials/char-lm -model lstm
//	/usr/bin/python3 tutorials/char-lm/pytorch_char_lm.py out/char-lm
//
// It prints a progress bar, the train and validation loss at every
// evaluation, a generated sample at the end and, last, the JSON summary
// line the other tutorials print (with val_loss and tokens_per_sec). Into
// -out it writes the text it trained on (input.txt), the initial and final
// parameters (init.safetensors, model.safetensors), the evaluation log
// (metrics.jsonl), the loss curve (loss.png) and the run's settings
// (run.json), from which pytorch_char_lm.py repeats the run in PyTorch.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/progress"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

const program = "char-lm"

// config is the run's settings; run.json holds it for the PyTorch script.
type config struct {
	Model        string  `json:"model"`
	Contexts     string  `json:"contexts"`
	Steps        int     `json:"steps"`
	BatchPerCtx  int     `json:"batch_per_ctx"`
	Batch        int     `json:"batch"`
	Context      int     `json:"context"`
	Layers       int     `json:"layers"`
	Heads        int     `json:"heads"`
	Embed        int     `json:"embed"`
	Hidden       int     `json:"hidden"`
	Dropout      float64 `json:"dropout"`
	LR           float64 `json:"lr"`
	MinLR        float64 `json:"min_lr"`
	Warmup       int     `json:"warmup"`
	WD           float64 `json:"weight_decay"`
	Beta2        float64 `json:"beta2"`
	Clip         float64 `json:"clip"`
	EvalInterval int     `json:"eval_interval"`
	EvalIters    int     `json:"eval_iters"`
	Seed         uint64  `json:"seed"`
	Text         string  `json:"text"`
	Out          string  `json:"out"`
	SampleLen    int     `json:"-"`
	AMP          string  `json:"amp,omitempty"`
	Hybridize    bool    `json:"hybridize,omitempty"`
}

// evalSeeds are the evaluation samplers' seeds, offsets from -seed.
const trainEvalSeed, valEvalSeed = 1, 2

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
}

func parse(args []string, w io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.StringVar(&c.Model, "model", "gpt", "gpt or lstm")
	fs.StringVar(&c.Contexts, "contexts", "cpu:0,cpu:1", "contexts to train on, data-parallel")
	fs.IntVar(&c.Steps, "steps", 2000, "training steps")
	fs.IntVar(&c.BatchPerCtx, "batch-size", 6, "windows per context per step (nanoGPT's batch of 12 over two contexts)")
	fs.IntVar(&c.Context, "context", 64, "window length in bytes (nanoGPT's block_size)")
	fs.IntVar(&c.Layers, "layers", 0, "transformer blocks or LSTM layers (0: 4 for gpt, 2 for lstm)")
	fs.IntVar(&c.Heads, "heads", 4, "attention heads")
	fs.IntVar(&c.Embed, "embed", 128, "embedding width")
	fs.IntVar(&c.Hidden, "hidden", 256, "LSTM hidden size")
	fs.Float64Var(&c.Dropout, "dropout", 0, "dropout")
	fs.Float64Var(&c.LR, "lr", 1e-3, "peak learning rate")
	fs.Float64Var(&c.MinLR, "min-lr", 1e-4, "learning rate at the last step (cosine decay)")
	fs.IntVar(&c.Warmup, "warmup", 100, "linear warm-up steps")
	fs.Float64Var(&c.WD, "wd", 0.1, "AdamW weight decay, on weights of 2 or more dimensions")
	fs.Float64Var(&c.Beta2, "beta2", 0.99, "AdamW β2")
	fs.Float64Var(&c.Clip, "clip", 1, "global gradient-norm clip")
	fs.IntVar(&c.EvalInterval, "eval-interval", 250, "steps between evaluations")
	fs.IntVar(&c.EvalIters, "eval-iters", 20, "batches per loss estimate")
	fs.Uint64Var(&c.Seed, "seed", 1337, "seed of the weights, the batch order and the sample")
	fs.StringVar(&c.Text, "text", "", "train on this file instead of the Go source corpus")
	fs.StringVar(&c.Out, "out", "out/char-lm", "output directory")
	fs.IntVar(&c.SampleLen, "sample", 400, "bytes to generate at the end")
	common.RegisterAMP(fs, &c.AMP)
	fs.BoolVar(&c.Hybridize, "hybridize", false, "train and evaluate through traced graphs (gluon.Hybridize; sampling, whose window grows, runs eagerly)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.Model != "gpt" && c.Model != "lstm" {
		return nil, fmt.Errorf("-model %q: want gpt or lstm", c.Model)
	}
	if c.Layers == 0 {
		c.Layers = map[string]int{"gpt": 4, "lstm": 2}[c.Model]
	}
	switch {
	case c.Steps < 1 || c.BatchPerCtx < 1 || c.Context < 2 || c.Layers < 1 || c.EvalIters < 1 || c.EvalInterval < 1:
		return nil, errors.New("-steps, -batch-size, -layers, -eval-iters and -eval-interval must be positive and -context at least 2")
	case c.Warmup < 0 || c.Warmup >= c.Steps:
		return nil, fmt.Errorf("-warmup %d must be in [0, -steps %d)", c.Warmup, c.Steps)
	}
	return c, nil
}

// run trains and evaluates the model and prints the progress, the
// evaluations, a sample and the summary line (last) to stdout.
func run(args []string, stdout io.Writer) error {
	c, err := parse(args, stdout)
	if err != nil {
		return err
	}
	devs, err := ctx.Parse(c.Contexts)
	if err == nil {
		err = ctx.Check(devs...)
	}
	if err != nil {
		return err
	}
	c.Batch = c.BatchPerCtx * len(devs)
	start := time.Now()

	text, source, err := loadText(c.Text)
	if err != nil {
		return err
	}
	v := newVocab(text)
	ids := v.encode(text)
	cut := len(ids) * 9 / 10
	train, val := ids[:cut], ids[cut:]
	if len(val) < c.Context+2 {
		return fmt.Errorf("text of %d bytes is too short for a context of %d (the last tenth is the validation set)", len(text), c.Context)
	}
	fmt.Fprintf(stdout, "%s: %d bytes, %d distinct; %d for training, %d for validation\n", source, len(text), v.size(), len(train), len(val))

	nd.Seed(c.Seed)
	net, err := newModel(c.Model, modelOpts{Vocab: v.size(), Context: c.Context, Layers: c.Layers,
		Heads: c.Heads, Embed: c.Embed, Hidden: c.Hidden, Dropout: c.Dropout})
	if err != nil {
		return err
	}
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		return err
	}
	for _, p := range params.List() {
		if len(p.Shape()) < 2 {
			p.WDMult = 0 // biases and norms are not decayed, as in nanoGPT
		}
	}
	sched, err := optimizer.NewCosine(optimizer.CosineOpts{MaxUpdate: c.Steps, BaseLR: c.LR, FinalLR: c.MinLR,
		Warmup: optimizer.Warmup{Steps: c.Warmup}})
	if err != nil {
		return err
	}
	opt := optimizer.NewAdamW(c.LR, c.WD)
	opt.Beta2, opt.Scheduler = c.Beta2, sched
	trainer, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
	if err != nil {
		return err
	}
	scaler, ampOff, err := common.MixedPrecision(c.AMP, trainer)
	if err != nil {
		return err
	}
	defer ampOff()
	var run gluon.Block = net
	if c.Hybridize {
		run = gluon.Hybridize(net, gluon.HybridOpts{})
	}
	m := &lm{net: run, eager: net, params: params, trainer: trainer, devs: devs, lossFn: loss.NewSoftmaxCrossEntropy(),
		context: c.Context, clip: c.Clip, scaler: scaler}

	if err := writeInputs(c, text, params); err != nil {
		return err
	}
	logPath, _ := outPath(c, "metrics.jsonl")
	mlog, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer mlog.Close()

	nParams := 0
	for _, p := range params.List() {
		nParams += p.Data(devs[0]).Size()
	}
	fmt.Fprintf(stdout, "training a %s of %.2fM parameters on contexts %v: %d steps of %d×%d bytes, AdamW lr %g→%g\n",
		c.Model, float64(nParams)/1e6, devs, c.Steps, c.Batch, c.Context, c.LR, c.MinLR)

	rng := splitmix64(c.Seed)
	var hist []evalPoint
	var stepLoss []float64
	var trainSeconds float64
	bar := progress.New(stdout, int64(c.Steps), progress.Opts{Prefix: "train", Unit: "steps"})
	evaluate := func(step int) error {
		tl, err := m.estimate(train, c.Seed+trainEvalSeed, c.EvalIters, c.Batch)
		if err != nil {
			return err
		}
		vl, err := m.estimate(val, c.Seed+valEvalSeed, c.EvalIters, c.Batch)
		if err != nil {
			return err
		}
		p := evalPoint{Step: step, Train: tl, Val: vl, LR: trainer.LearningRate()}
		hist = append(hist, p)
		bar.Println(evalLine(step, tl, vl))
		return json.NewEncoder(mlog).Encode(p)
	}
	if err := evaluate(0); err != nil {
		return err
	}
	for step := 1; step <= c.Steps; step++ {
		x, y := batch(&rng, train, c.Batch, c.Context)
		t0 := time.Now()
		l, norm, err := m.step(x, y, c.Batch)
		if err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		trainSeconds += time.Since(t0).Seconds()
		stepLoss = append(stepLoss, l)
		bar.SetSuffix(fmt.Sprintf("loss %.4f - grad norm %.2f - %.0f tokens/s", l, norm, float64(step*c.Batch*c.Context)/trainSeconds))
		bar.Add(1)
		if step%c.EvalInterval == 0 || step == c.Steps {
			if err := evaluate(step); err != nil {
				return err
			}
		}
	}
	bar.Finish()
	last := hist[len(hist)-1]
	tokensPerSec := float64(c.Steps*c.Batch*c.Context) / trainSeconds

	sample, err := m.sample(v, []byte("func "), c.SampleLen, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sample:\n%s\n", sample)
	paramsPath, _ := outPath(c, "model.safetensors")
	if err := gluon.SaveParameters(net, paramsPath); err != nil {
		return err
	}
	plotPath, _ := outPath(c, "loss.png")
	if err := savePlot(plotPath, c, hist, stepLoss); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "val loss %.4f after %d steps; parameters in %s, loss curve in %s\n", last.Val, c.Steps, paramsPath, plotPath)
	return common.Summary{
		Program:       program,
		Contexts:      common.ContextNames(devs),
		TrainLoss:     last.Train,
		ValLoss:       last.Val,
		SamplesPerSec: float64(int64(tokensPerSec / float64(c.Context))),
		Seconds:       common.Since(start),
		Params:        paramsPath,
		MetricsLog:    logPath,
		Extra: map[string]any{
			"model": c.Model, "steps": c.Steps, "tokens_per_sec": float64(int64(tokensPerSec)),
			"val_perplexity": perplexity(last.Val), "parameters": nParams, "vocab": v.size(),
			"text_bytes": len(text), "text": source, "go": runtime.Version(), "batch": c.Batch, "context": c.Context,
		},
	}.Print(stdout)
}

// evalPoint is one evaluation: a line of metrics.jsonl and a point of the
// plot.
type evalPoint struct {
	Step  int     `json:"step"`
	Train float64 `json:"train_loss"`
	Val   float64 `json:"val_loss"`
	LR    float64 `json:"lr"`
}

func outPath(c *config, name string) (string, error) {
	f := common.Flags{Out: c.Out}
	return f.OutPath(name)
}

// writeInputs writes what pytorch_char_lm.py needs to repeat the run: the
// text, the initial parameters and the settings.
func writeInputs(c *config, text []byte, params *gluon.ParamDict) error {
	p, err := outPath(c, "input.txt")
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, text, 0o644); err != nil {
		return err
	}
	p, _ = outPath(c, "init.safetensors")
	if err := params.Save(p); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	p, _ = outPath(c, "run.json")
	return os.WriteFile(p, append(b, '\n'), 0o644)
}

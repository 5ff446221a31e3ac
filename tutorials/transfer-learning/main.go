// Command transfer-learning shows transfer learning with the model zoo
// where no pretrained weights can be downloaded: it makes its own.
//
//  1. Pretrain: a ResNet-18 from gluon/model/vision learns Fashion-MNIST's
//     classes 0-4 (T-shirt/top, Trouser, Pullover, Dress, Coat), the
//     28×28 grey images padded to 32×32 and repeated over 3 channels. Its
//     parameters are saved as a PyTorch-style state dict in safetensors
//     (vision.SaveStateDict): <out>/pretrained.safetensors.
//  2. Reload and fine-tune: a fresh ResNet-18 loads that file
//     (vision.LoadStateDict) and must score exactly the saved model's test
//     accuracy; the network is also exported to <out>/pretrained.onnx
//     (onnx.Save) and imported back (onnx.Load), and must score it within
//     0.2 points; then it gets a new 5-class head (ReplaceHead), everything
//     but the head is frozen (FreezeAllButHead), and the head alone is
//     trained on classes 5-9 (Sandal, Shirt, Sneaker, Bag, Ankle boot,
//     relabelled 0-4). With -unfreeze-after N the backbone is unfrozen
//     (vision.Unfreeze) after N epochs and the same Trainer goes on with
//     every parameter: gradual unfreezing. A second copy of the pretrained
//     network, with a new head too, is fine-tuned whole
//     (-finetune-all=false skips it).
//  3. Scratch: the same network, randomly initialised, trains on classes
//     5-9 for as many epochs, with the same batches and optimiser.
//
// The network is half as wide as torchvision's ResNet-18 by default
// (-width 32; -width 64 is the real thing, two to three times slower), so
// that the whole run takes a few minutes on two CPU cores. -epochs is the
// number of epochs on classes 5-9, the same for every phase there;
// -pretrain-epochs those on classes 0-4.
//
// It prints a progress bar while an epoch runs and a Keras-like line per
// epoch, writes the fine-tuned parameters (finetuned.safetensors), a
// metrics log (metrics.jsonl, one JSON object per epoch and phase) and the
// test accuracy of each phase against the epoch (transfer.png) into -out,
// and ends with the tutorials' JSON summary line.
//
//	go run ./tutorials/transfer-learning
//	go run ./tutorials/transfer-learning -width 64 -epochs 5 -finetune-all=false
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// program names the tutorial in its summary line.
const program = "transfer-learning"

// nClasses is the number of classes of each task: Fashion-MNIST's ten
// classes cut in two halves.
const nClasses = 5

// The files the program writes into -out.
const (
	pretrainedFile = "pretrained.safetensors"
	onnxFile       = "pretrained.onnx"
	finetunedFile  = "finetuned.safetensors"
	metricsFile    = "metrics.jsonl"
	plotFile       = "transfer.png"
)

// defaults are the tutorial's settings: one context, batches of 128,
// SGD with momentum; -epochs is the number of epochs on the target task
// (for the fine-tuning and for the training from scratch alike).
var defaults = common.Flags{
	Contexts:    "cpu:0",
	KVStore:     "device",
	Epochs:      3,
	BatchPerCtx: 128,
	Seed:        42,
	Out:         "out/transfer-learning",
	Workers:     2,
	LR:          0.05,
}

// options are the tutorial's own flags.
type options struct {
	pretrainEpochs int
	width          int
	momentum       float64
	finetuneAll    bool
	unfreezeAfter  int
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
}

// run parses args and runs the three phases, printing to stdout.
func run(args []string, stdout io.Writer) error {
	_, err := train(args, stdout)
	return err
}

// outcome is what a run leaves behind, for the tests.
type outcome struct {
	Devs                     []ctx.Context
	Pretrained, Finetuned    *vision.ResNet
	PretrainAcc, ReloadedAcc float64 // on classes 0-4's test images
	ONNXAcc                  float64 // the same, from pretrained.onnx loaded with onnx.Load
	Pretrain, Head, Scratch  []epochResult
	All                      []epochResult // with -finetune-all
	Summary                  common.Summary
}

// train runs the tutorial and returns what it made.
func train(args []string, stdout io.Writer) (*outcome, error) {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stdout)
	f := common.Register(fs, defaults)
	var o options
	fs.IntVar(&o.pretrainEpochs, "pretrain-epochs", 3, "epochs of pretraining on classes 0-4")
	fs.IntVar(&o.width, "width", 32, "ResNet-18's first-stage width (32: every layer half as wide as torchvision's ResNet-18, which is 64)")
	fs.Float64Var(&o.momentum, "momentum", 0.9, "SGD momentum (every phase)")
	fs.BoolVar(&o.finetuneAll, "finetune-all", true, "also fine-tune the whole pretrained network (the third curve; -finetune-all=false skips it)")
	fs.IntVar(&o.unfreezeAfter, "unfreeze-after", 0, "in the head's fine-tuning, unfreeze the backbone after this many epochs and go on with the same Trainer (0: never)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.Epochs <= 0 || o.pretrainEpochs <= 0 || f.BatchPerCtx <= 0 || o.width <= 0 {
		return nil, fmt.Errorf("-epochs (%d), -pretrain-epochs (%d), -batch-size (%d) and -width (%d) must be positive",
			f.Epochs, o.pretrainEpochs, f.BatchPerCtx, o.width)
	}
	if o.unfreezeAfter < 0 || (o.unfreezeAfter > 0 && o.unfreezeAfter >= f.Epochs) {
		return nil, fmt.Errorf("-unfreeze-after %d: want 0 (never) or fewer than -epochs (%d), so that some epochs train the unfrozen backbone", o.unfreezeAfter, f.Epochs)
	}
	if f.KVStore != "local" && f.KVStore != "device" {
		return nil, fmt.Errorf("-kvstore %q: this tutorial runs in one process (local or device)", f.KVStore)
	}
	devs, err := f.Devices()
	if err != nil {
		return nil, err
	}
	start := time.Now()

	// Data: the two halves of Fashion-MNIST, as 3×32×32 images.
	trainSet, testSet, err := common.FashionMNIST(f, stdout)
	if err != nil {
		return nil, err
	}
	batch := f.BatchPerCtx * len(devs)
	source, err := newTask("source", trainSet, testSet, 0, nClasses, batch, f.Workers, f.Seed)
	if err != nil {
		return nil, err
	}
	target, err := newTask("target", trainSet, testSet, nClasses, nClasses, batch, f.Workers, f.Seed)
	if err != nil {
		return nil, err
	}
	pretrainedPath, err := f.OutPath(pretrainedFile)
	if err != nil {
		return nil, err
	}
	mlogPath, err := f.OutPath(metricsFile)
	if err != nil {
		return nil, err
	}
	mlog, err := os.Create(mlogPath)
	if err != nil {
		return nil, err
	}
	defer mlog.Close()

	out := &outcome{Devs: devs}
	tbw, err := f.TensorBoardWriter(true)
	if err != nil {
		return nil, err
	}
	if tbw != nil {
		defer tbw.Close() // each phase flushes its events (learner.fit), and a failure there is returned
	}
	arch := fmt.Sprintf("ResNet-18 (width %d)", o.width)
	newNet := func() *vision.ResNet { return vision.ResNet18(vision.Options{Classes: nClasses, Width: o.width}) }
	newLearner := func(net *vision.ResNet, frozen bool) (*learner, error) {
		opt := optimizer.NewSGD(f.LR)
		opt.Momentum = o.momentum
		// The Trainer takes every parameter but skips those whose
		// GradReq is null: when frozen, only the head's.
		tr, err := gluon.NewTrainer(gluon.CollectParams(net), opt, f.KVStore, gluon.TrainerOpts{})
		if err != nil {
			return nil, err
		}
		return &learner{net: net, lossFn: loss.NewSoftmaxCrossEntropy(), trainer: tr, devs: devs, frozen: frozen, tb: tbw}, nil
	}
	fmt.Fprintf(stdout, "%s on %v, batch %d (%d per context), SGD lr %g momentum %g\n", arch, devs, batch, f.BatchPerCtx, f.LR, o.momentum)

	// Phase 1: pretraining on the source classes.
	fmt.Fprintf(stdout, "phase 1: pretraining on classes %s: %d training, %d test images, %d epochs\n",
		source.describe(nClasses), source.nTrain, source.nTest, o.pretrainEpochs)
	nd.Seed(f.Seed)
	pre := newNet()
	// The zoo's layers carry torchvision's initialisers (Kaiming normal
	// convolutions, BatchNorm ones and zeros, N(0, 0.01) classifier);
	// what has none of its own is initialised by name (biases and running
	// means zero, running variances one), so Xavier draws nothing here.
	if err := gluon.Initialize(pre, initializer.Xavier{}, devs...); err != nil {
		return nil, err
	}
	lp, err := newLearner(pre, false)
	if err != nil {
		return nil, err
	}
	if out.Pretrain, err = lp.fit("pretrain", source, 1, o.pretrainEpochs, o.pretrainEpochs, stdout, mlog); err != nil {
		return nil, err
	}
	// Every context keeps its own BatchNorm statistics and the file holds
	// one set: average them, so that the saved model is the evaluated one.
	averageRunningStats(pre)
	if _, out.PretrainAcc, err = lp.evaluate(source.test); err != nil {
		return nil, err
	}
	if err := vision.SaveStateDict(gluon.CollectParams(pre), pretrainedPath); err != nil {
		return nil, err
	}
	out.Pretrained = pre
	fmt.Fprintf(stdout, "pretrained: test accuracy %.4f on classes 0-4; saved to %s\n", out.PretrainAcc, pretrainedPath)

	// Phase 2: reload into a fresh network, check it, fine-tune the head.
	loaded := func() (*vision.ResNet, error) {
		net := newNet()
		if err := vision.LoadStateDict(gluon.CollectParams(net), pretrainedPath, devs); err != nil {
			return nil, err
		}
		return net, nil
	}
	ft, err := loaded()
	if err != nil {
		return nil, err
	}
	check := &learner{net: ft, devs: devs, lossFn: loss.NewSoftmaxCrossEntropy()}
	if _, out.ReloadedAcc, err = check.evaluate(source.test); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "reloaded %s: test accuracy %.4f on classes 0-4 (pretrained model: %.4f)\n", pretrainedFile, out.ReloadedAcc, out.PretrainAcc)
	if out.ReloadedAcc != out.PretrainAcc {
		return nil, fmt.Errorf("the reloaded model scores %.6f, the saved one %.6f", out.ReloadedAcc, out.PretrainAcc)
	}
	// The same network as ONNX: exported, then imported as a graph of ops.
	onnxPath, err := f.OutPath(onnxFile)
	if err != nil {
		return nil, err
	}
	if err := onnx.Save(onnxPath, pre, []int{1, 3, 32, 32}, onnx.ExportOpts{}); err != nil {
		return nil, err
	}
	fromONNX, err := onnx.Load(onnxPath, devs...)
	if err != nil {
		return nil, err
	}
	viaONNX := &learner{net: fromONNX, devs: devs, lossFn: loss.NewSoftmaxCrossEntropy()}
	if _, out.ONNXAcc, err = viaONNX.evaluate(source.test); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "reloaded %s (onnx.Load): test accuracy %.4f on classes 0-4\n", onnxFile, out.ONNXAcc)
	if math.Abs(out.ONNXAcc-out.PretrainAcc) > 0.002 {
		return nil, fmt.Errorf("the model loaded from ONNX scores %.6f, the saved one %.6f", out.ONNXAcc, out.PretrainAcc)
	}
	ft.ReplaceHead(nClasses)
	vision.FreezeAllButHead(ft)
	headValues := trainable(ft)
	fmt.Fprintf(stdout, "phase 2: new head %q, everything else frozen (%d of %d parameter values train); fine-tuning on classes %s: %d training, %d test images, %d epochs\n",
		ft.Head(), headValues, countParams(ft), target.describe(nClasses), target.nTrain, target.nTest, f.Epochs)
	lh, err := newLearner(ft, true)
	if err != nil {
		return nil, err
	}
	headEpochs := f.Epochs
	if o.unfreezeAfter > 0 {
		headEpochs = min(o.unfreezeAfter, f.Epochs)
	}
	if out.Head, err = lh.fit("finetune-head", target, 1, headEpochs, f.Epochs, stdout, mlog); err != nil {
		return nil, err
	}
	if headEpochs < f.Epochs {
		// Gradual unfreezing: the same Trainer, whose optimizer state the
		// head keeps, trains every parameter from its next step; the
		// forward passes are recorded in training mode again.
		vision.Unfreeze(ft)
		lh.frozen = false
		fmt.Fprintf(stdout, "phase 2: backbone unfrozen after epoch %d (%d of %d parameter values train)\n", headEpochs, trainable(ft), countParams(ft))
		more, err := lh.fit("finetune-head", target, headEpochs+1, f.Epochs, f.Epochs, stdout, mlog)
		out.Head = append(out.Head, more...)
		if err != nil {
			return nil, err
		}
	}
	out.Finetuned = ft
	finetunedPath, err := f.OutPath(finetunedFile)
	if err != nil {
		return nil, err
	}
	if err := vision.SaveStateDict(gluon.CollectParams(ft), finetunedPath); err != nil {
		return nil, err
	}

	if o.finetuneAll {
		fmt.Fprintf(stdout, "phase 2b: the pretrained network with a new head, fine-tuned whole, %d epochs\n", f.Epochs)
		all, err := loaded()
		if err != nil {
			return nil, err
		}
		all.ReplaceHead(nClasses)
		la, err := newLearner(all, false)
		if err != nil {
			return nil, err
		}
		if out.All, err = la.fit("finetune-all", target, 1, f.Epochs, f.Epochs, stdout, mlog); err != nil {
			return nil, err
		}
	}

	// Phase 3: the same network from scratch on the target classes.
	fmt.Fprintf(stdout, "phase 3: training from scratch on classes 5-9, %d epochs\n", f.Epochs)
	nd.Seed(f.Seed)
	scratch := newNet()
	if err := gluon.Initialize(scratch, initializer.Xavier{}, devs...); err != nil {
		return nil, err
	}
	ls, err := newLearner(scratch, false)
	if err != nil {
		return nil, err
	}
	if out.Scratch, err = ls.fit("scratch", target, 1, f.Epochs, f.Epochs, stdout, mlog); err != nil {
		return nil, err
	}
	if err := mlog.Close(); err != nil {
		return nil, err
	}

	plotPath, err := f.OutPath(plotFile)
	if err != nil {
		return nil, err
	}
	headLabel := "fine-tuned head (frozen pretrained backbone)"
	if o.unfreezeAfter > 0 && o.unfreezeAfter < f.Epochs {
		headLabel = fmt.Sprintf("fine-tuned head, backbone unfrozen after epoch %d", o.unfreezeAfter)
	}
	curves := []curve{{headLabel, out.Head}}
	if o.finetuneAll {
		curves = append(curves, curve{"fine-tuned whole pretrained network", out.All})
	}
	curves = append(curves, curve{"trained from scratch", out.Scratch})
	title := fmt.Sprintf("%s, Fashion-MNIST classes 5-9 (pretrained on 0-4)", arch)
	if err := savePlot(plotPath, title, curves); err != nil {
		return nil, err
	}

	last := func(h []epochResult) epochResult { return h[len(h)-1] }
	head, scr := last(out.Head), last(out.Scratch)
	fmt.Fprintf(stdout, "test accuracy on classes 5-9 after %d epochs: fine-tuned head %.4f, from scratch %.4f", f.Epochs, head.ValAcc, scr.ValAcc)
	extra := map[string]any{
		"pretrain_acc":        out.PretrainAcc,
		"reloaded_acc":        out.ReloadedAcc,
		"onnx_acc":            out.ONNXAcc,
		"finetune_acc":        head.ValAcc,
		"scratch_acc":         scr.ValAcc,
		"finetune_val_acc":    valAccs(out.Head),
		"scratch_val_acc":     valAccs(out.Scratch),
		"pretrain_epochs":     o.pretrainEpochs,
		"width":               o.width,
		"batch":               batch,
		"lr":                  f.LR,
		"momentum":            o.momentum,
		"source_train":        source.nTrain,
		"source_test":         source.nTest,
		"target_train":        target.nTrain,
		"target_test":         target.nTest,
		"trainable_head":      headValues,
		"params_total":        countParams(ft),
		"pretrain_seconds":    phaseSeconds(out.Pretrain),
		"finetune_seconds":    phaseSeconds(out.Head),
		"scratch_seconds":     phaseSeconds(out.Scratch),
		"finetune_samples_ps": last(out.Head).SamplesPerSec,
		"pretrained":          pretrainedPath,
		"finetuned":           finetunedPath,
		"plot":                plotPath,
	}
	if o.finetuneAll {
		all := last(out.All)
		fmt.Fprintf(stdout, ", whole network fine-tuned %.4f", all.ValAcc)
		extra["finetune_all_acc"] = all.ValAcc
		extra["finetune_all_val_acc"] = valAccs(out.All)
		extra["finetune_all_seconds"] = phaseSeconds(out.All)
	}
	fmt.Fprintf(stdout, "; plot in %s\n", plotPath)
	out.Summary = common.Summary{
		Program:       program,
		Epochs:        f.Epochs,
		Contexts:      common.ContextNames(devs),
		TrainAcc:      head.Acc,
		ValAcc:        head.ValAcc,
		TrainLoss:     head.Loss,
		ValLoss:       head.ValLoss,
		SamplesPerSec: scr.SamplesPerSec, // training the whole network
		Seconds:       common.Since(start),
		Params:        finetunedPath,
		MetricsLog:    mlogPath,
		Extra:         extra,
	}
	return out, out.Summary.Print(stdout)
}

// averageRunningStats sets every BatchNorm running mean and variance of
// net to the mean over its replicas (one per context; a no-op on one).
func averageRunningStats(net gluon.Block) {
	for _, p := range gluon.CollectParams(net).List() {
		reps := p.ListData()
		stat := strings.HasSuffix(p.Name(), ".running_mean") || strings.HasSuffix(p.Name(), ".running_var")
		if len(reps) < 2 || !stat {
			continue
		}
		sum := make([]float32, size(p.Shape()))
		for _, r := range reps {
			for i, v := range r.Float32s() {
				sum[i] += v
			}
		}
		for i := range sum {
			sum[i] /= float32(len(reps))
		}
		p.SetData(nd.FromSlice(reps[0].Context(), sum, p.Shape()...))
	}
}

// size is the number of values of a shape.
func size(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// countParams counts the values of net's parameters (running statistics
// included).
func countParams(net gluon.Block) int {
	n := 0
	for _, p := range gluon.CollectParams(net).List() {
		n += size(p.Shape())
	}
	return n
}

// trainable counts the parameter values of net that take a gradient.
func trainable(net gluon.Block) int {
	n := 0
	for _, p := range gluon.CollectParams(net).List() {
		if p.GradReq() != nd.GradNull {
			n += size(p.Shape())
		}
	}
	return n
}

// valAccs lists the test accuracy after every epoch.
func valAccs(h []epochResult) []float64 {
	out := make([]float64, len(h))
	for i, r := range h {
		out[i] = r.ValAcc
	}
	return out
}

// phaseSeconds is a phase's time, training and evaluation.
func phaseSeconds(h []epochResult) float64 {
	s := 0.0
	for _, r := range h {
		s += r.Seconds
	}
	return float64(int64(s*1000+0.5)) / 1000
}

// Command gluon-mnist is the Go version of the Gluon multi-GPU tutorial:
// it trains LeNet on Fashion-MNIST with data parallelism over several
// contexts, using the explicit training loop (SplitAndLoad, a recording
// scope, one forward and backward pass per device, trainer.Step with the
// global batch) rather than an estimator, because that loop is the point.
//
// By default it trains for 10 epochs on two CPU contexts (cpu:0,cpu:1) with
// 64 samples per context, a global batch of 128, plain SGD with learning
// rate 0.1 and softmax cross-entropy. (The original tutorial's rate is
// 0.04; with it the test accuracy after 10 epochs fell just short of the
// 85% the demo promises, see README.md; -lr 0.04 restores it.)
//
//	go run ./tutorials/gluon-mnist -download
//	go run ./tutorials/gluon-mnist -contexts cpu:0 -batch-size 128
//	go run -tags cuda ./tutorials/gluon-mnist -contexts gpu:0,gpu:1
//
// It prints a progress bar while an epoch runs, a Keras-like line per
// epoch, writes the trained parameters (lenet.safetensors) and a metrics
// log (metrics.jsonl, one JSON object per epoch) into -out, and ends with a
// single JSON line that summarises the run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// program names the tutorial in its summary line.
const program = "gluon-mnist"

// defaults are the tutorial's settings: 2 contexts × 64 samples = a global
// batch of 128, 10 epochs, SGD; the learning rate is 0.1 rather than the
// tutorial's 0.04 (see the package comment).
var defaults = common.Flags{
	Contexts:    "cpu:0,cpu:1",
	KVStore:     "device",
	Epochs:      10,
	BatchPerCtx: 64,
	Seed:        42,
	Out:         "out/gluon-mnist",
	Workers:     2,
	LR:          0.1,
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

// run parses args, trains and evaluates LeNet, writes the parameters and
// the metrics log, and prints the progress, one line per epoch and the
// summary JSON line (last) to stdout.
func run(args []string, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stdout)
	f := common.Register(fs, defaults)
	compile := fs.Bool("compile", false, "train with gluon.CompileStep: each context's forward pass, loss and backward pass as one traced graph")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.Epochs <= 0 || f.BatchPerCtx <= 0 {
		return fmt.Errorf("-epochs (%d) and -batch-size (%d) must be positive", f.Epochs, f.BatchPerCtx)
	}
	devs, err := f.Devices()
	if err != nil {
		return err
	}
	// With -kvstore dist_sync this process is one worker of an MPI job;
	// only rank 0 prints and writes files.
	job, err := f.Job()
	if err != nil {
		return err
	}
	defer job.Finish(&err)
	stdout = job.Out(stdout)
	start := time.Now()

	// Data: Fashion-MNIST as uint8 HWC images, turned into CHW float32
	// in [0, 1] by ToTensor, batched by DataLoaders on the host context.
	trainSet, testSet, err := common.FashionMNIST(f, stdout)
	if err != nil {
		return err
	}
	batch := f.BatchPerCtx * len(devs) // this process's batch
	globalBatch := batch * job.Size    // over all workers
	toTensor := transforms.ToTensor()
	trainOpts, err := job.TrainOptions(trainSet.Len(), data.LoaderOpts{
		BatchSize: batch, Shuffle: true, Seed: f.Seed, Workers: f.Workers,
	})
	if err != nil {
		return err
	}
	trainLoader, err := data.NewDataLoader(data.TransformFirst(trainSet, toTensor), trainOpts)
	if err != nil {
		return err
	}
	testLoader, err := data.NewDataLoader(data.TransformFirst(testSet, toTensor), data.LoaderOpts{
		BatchSize: batch, Workers: f.Workers,
	})
	if err != nil {
		return err
	}

	// Network, Xavier initialisation on every context, trainer.
	nd.Seed(f.Seed)
	net := LeNet()
	if err := gluon.Initialize(net, initializer.Xavier{}, devs...); err != nil {
		return err
	}
	trainer, err := gluon.NewTrainer(gluon.CollectParams(net), optimizer.NewSGD(f.LR), f.KVStore, gluon.TrainerOpts{})
	if err != nil {
		return err
	}
	scaler, ampOff, err := common.MixedPrecision(f.AMP, trainer)
	if err != nil {
		return err
	}
	defer ampOff()
	t := &tutorial{net: f.Model(net), lossFn: loss.NewSoftmaxCrossEntropy(), trainer: trainer, devs: devs, scaler: scaler}
	if *compile {
		if t.step, err = gluon.CompileStep(net, t.lossFn.Forward, trainer, gluon.StepOpts{Contexts: devs}); err != nil {
			return err
		}
	}

	logPath, err := f.OutPath("metrics.jsonl")
	if err != nil {
		return err
	}
	mlog := logFile{io.Discard}
	if job.Chief() {
		file, err := os.Create(logPath)
		if err != nil {
			return err
		}
		defer file.Close()
		mlog = logFile{file}
	}

	where := fmt.Sprintf("contexts %v", devs)
	if job.Size > 1 {
		where = fmt.Sprintf("%d workers × contexts %v", job.Size, devs)
	}
	fmt.Fprintf(stdout, "training LeNet on %d Fashion-MNIST images (testing on %d) with %s, global batch %d (%d per context), kvstore %s, SGD lr %g\n",
		trainSet.Len(), testSet.Len(), where, globalBatch, f.BatchPerCtx, f.KVStore, f.LR)
	tbw, err := f.TensorBoardWriter(job.Chief())
	if err != nil {
		return err
	}
	if tbw != nil {
		defer common.CloseInto(&err, tbw.Close)
	}
	var last epochResult
	var trainSamples int
	var trainSeconds float64
	for epoch := 1; epoch <= f.Epochs; epoch++ {
		r, err := t.trainEpoch(trainLoader, epoch, f.Epochs, stdout)
		if err != nil {
			return fmt.Errorf("epoch %d: %w", epoch, err)
		}
		if r.ValLoss, r.ValAcc, err = t.evaluate(testLoader); err != nil {
			return fmt.Errorf("epoch %d: evaluation: %w", epoch, err)
		}
		r.Seconds = common.Since(r.start)
		trainSamples += r.Samples
		trainSeconds += r.TrainSeconds
		fmt.Fprintln(stdout, r.line(f.Epochs))
		if err := r.log(mlog); err != nil {
			return err
		}
		if tbw != nil {
			if err := tbw.AddScalars(map[string]float64{"train/loss": r.Loss, "train/accuracy": r.Acc,
				"val/loss": r.ValLoss, "val/accuracy": r.ValAcc, "perf/samples_per_sec": r.SamplesPerSec}, int64(epoch)); err != nil {
				return err
			}
		}
		last = r
	}
	if err := mlog.Close(); err != nil {
		return err
	}

	paramsPath, err := f.OutPath("lenet.safetensors")
	if err != nil {
		return err
	}
	if job.Chief() {
		if err := gluon.SaveParameters(net, paramsPath); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "test accuracy %.4f after %d epochs; parameters in %s, metrics in %s\n", last.ValAcc, f.Epochs, paramsPath, logPath)
	return common.Summary{
		Program:       program,
		Epochs:        f.Epochs,
		Contexts:      common.ContextNames(devs),
		TrainAcc:      last.Acc,
		ValAcc:        last.ValAcc,
		TrainLoss:     last.Loss,
		ValLoss:       last.ValLoss,
		SamplesPerSec: rate(trainSamples*job.Size, trainSeconds), // all workers
		Seconds:       common.Since(start),
		Params:        paramsPath,
		MetricsLog:    logPath,
		Extra: map[string]any{
			"batch_global":  globalBatch,
			"processes":     job.Size,
			"batch_per_ctx": f.BatchPerCtx,
			"kvstore":       f.KVStore,
			"amp":           f.AMP,
			"hybridize":     f.Hybridize,
			"compile":       *compile,
			"lr":            f.LR,
			"train_samples": trainSet.Len(),
			"test_samples":  testSet.Len(),
		},
	}.Print(stdout)
}

// rate returns n/seconds, rounded to a whole number (0 for no time).
func rate(n int, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(int64(float64(n)/seconds + 0.5))
}

// logFile lets the metrics log be a file on rank 0 and io.Discard
// elsewhere.
type logFile struct{ io.Writer }

// Close closes the underlying writer when it is a file.
func (c logFile) Close() error {
	if f, ok := c.Writer.(*os.File); ok {
		return f.Close()
	}
	return nil
}

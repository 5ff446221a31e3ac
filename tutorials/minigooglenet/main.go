// Command minigooglenet trains MiniGoogLeNet on CIFAR-10 on several
// contexts at once: Goluon's version of PyImageSearch's "How-To: Multi-GPU
// training with Keras, Python, and deep learning" (2017). The network is
// built from the post's conv, Inception and downsample modules; it is
// trained with SGD (momentum 0.9) from a learning rate of 5e-3 that decays
// linearly to zero over the epochs, on mean-subtracted images with shift
// and flip augmentation, 64 images per context per step. At the end it
// plots the training and validation loss and accuracy per epoch.
//
//	go run ./tutorials/minigooglenet -contexts cpu:0,cpu:1 -data ~/data -out out/minigooglenet
//
// It prints a Keras-like line per epoch and, as its last line, a JSON
// summary. The output directory receives the metrics log (metrics.jsonl),
// checkpoints (-resume continues from the latest), the trained parameters
// and the plot (plot.png).
//
// Several processes (MPI): with -kvstore dist_sync the program is one
// worker of an MPI job. Each worker trains on its shard of every epoch on
// its own -contexts, the gradients are summed over all workers, and only
// rank 0 prints and writes files, the plot included (the other workers
// resume from rank 0's checkpoints, so -out must then be on a file system
// they all see; BatchNorm's running statistics are not exchanged, the saved
// ones are rank 0's):
//
//	go build -tags mpi -o minigooglenet ./tutorials/minigooglenet
//	mpirun -np 2 ./minigooglenet -kvstore dist_sync -contexts cpu:0 # as root add --allow-run-as-root
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

const program = "minigooglenet"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
}

// defaults are the tutorial's settings: two contexts (the post's G GPUs),
// 64 images per context, 70 epochs from a learning rate of 5e-3.
var defaults = common.Flags{
	Contexts: "cpu:0,cpu:1", KVStore: "device", Epochs: 70, BatchPerCtx: 64, LR: 5e-3,
	Seed: 42, Out: filepath.Join("out", program), Workers: 2,
}

// run parses args, trains and writes the report to stdout, ending with
// the JSON summary line. In a distributed job (-kvstore dist_sync) only
// rank 0 prints and writes files.
func run(args []string, stdout io.Writer) (err error) {
	start := time.Now()
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	f := common.Register(fs, defaults)
	resume := fs.Bool("resume", false, "continue from the latest checkpoint in -out")
	dataset := fs.String("dataset", "cifar10", "cifar10, or fashion-mnist (28×28 grey images padded to 32×32; installed from Debian with -download)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.Epochs <= 0 || f.BatchPerCtx <= 0 || f.LR <= 0 {
		return fmt.Errorf("-epochs, -batch-size and -lr must be positive")
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
	nd.Seed(f.Seed)

	var train, test data.Dataset
	channels, title, pad := 3, "MiniGoogLeNet on CIFAR-10", 0
	switch *dataset {
	case "cifar10":
		fmt.Fprintln(stdout, "[INFO] loading CIFAR-10 data...")
		train, test, err = common.CIFAR10(f, stdout)
	case "fashion-mnist":
		fmt.Fprintln(stdout, "[INFO] loading Fashion-MNIST data (padded to 32×32)...")
		train, test, err = common.FashionMNIST(f, stdout)
		channels, title, pad = 1, "MiniGoogLeNet on Fashion-MNIST (padded to 32×32)", 2
	default:
		return fmt.Errorf("-dataset %q: want cifar10 or fashion-mnist", *dataset)
	}
	if err != nil {
		return err
	}
	if f.Limit > 0 {
		title += fmt.Sprintf(", first %d training images", train.Len())
	}
	batch := f.BatchPerCtx * len(devs) // this process's batch
	global := batch * job.Size         // over all workers
	trainLoader, valLoader, err := loaders(job, train, test, f, batch, pad)
	if err != nil {
		return err
	}

	if job.Size > 1 {
		fmt.Fprintf(stdout, "[INFO] training with %d workers × %d contexts %v...\n", job.Size, len(devs), common.ContextNames(devs))
	} else {
		fmt.Fprintf(stdout, "[INFO] training with %d contexts %v...\n", len(devs), common.ContextNames(devs))
	}
	net := MiniGoogLeNetFor(channels, 10)
	params := gluon.CollectParams(net)
	// Keras' defaults: glorot_uniform kernels (Xavier, uniform, factor avg,
	// magnitude 3), zero biases, BatchNorm gamma 1, beta 0, statistics 0/1.
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		return err
	}
	opt := optimizer.NewSGD(f.LR)
	opt.Momentum = 0.9
	trainer, err := gluon.NewTrainer(params, opt, f.KVStore, gluon.TrainerOpts{})
	if err != nil {
		return err
	}
	_, ampOff, err := common.MixedPrecision(f.AMP, trainer) // the estimator scales the loss
	if err != nil {
		return err
	}
	defer ampOff()
	est, err := estimator.New(f.Model(net), loss.NewSoftmaxCrossEntropy(), trainer, devs,
		func() metric.Metric { return metric.NewAccuracy() })
	if err != nil {
		return err
	}

	// Only rank 0 writes the metrics log and the checkpoints; the other
	// workers of a distributed job resume from its checkpoints (ReadOnly).
	logPath := filepath.Join(f.Out, "metrics.jsonl")
	ckpt := &estimator.Checkpoint{Dir: filepath.Join(f.Out, "checkpoints"), Resume: *resume,
		Params: params, Trainer: trainer, Contexts: devs, ReadOnly: !job.Chief(),
		Settings: f.Settings(map[string]string{"dataset": *dataset})}
	var seen tally
	handlers := []estimator.Handler{
		&estimator.EpochLR{Trainer: trainer, Schedule: polyDecay(f.Epochs, f.LR, 1)},
		&estimator.Logger{W: stdout},
	}
	if job.Chief() {
		if logPath, err = f.OutPath("metrics.jsonl"); err != nil {
			return err
		}
		if !*resume { // a fresh run starts a fresh history
			if err := os.Remove(logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		handlers = append(handlers, &estimator.MetricsLog{Path: logPath, Trainer: trainer})
	}
	handlers = append(handlers, ckpt, &seen)
	tb, closeTB, err := f.TensorBoard(params, job.Chief())
	if err != nil {
		return err
	}
	defer common.CloseInto(&err, closeTB)
	handlers = append(handlers, tb...)
	handlers = append(handlers, f.ProfileHandlers(stdout)...)
	goctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stdout, "[INFO] training network: %d epochs, %d batches of %d (%d per context)...\n",
		f.Epochs, trainLoader.Len(), global, f.BatchPerCtx)
	err = est.Fit(goctx, trainLoader, valLoader, f.Epochs, handlers...)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted; the checkpoints in %s keep the finished epochs, -resume continues: %w", ckpt.Dir, err)
	}
	if err != nil {
		return err
	}
	if !job.Chief() {
		return nil // rank 0 saves the parameters, plots its metrics log and reports
	}

	paramsPath, err := f.OutPath(program + ".safetensors")
	if err != nil {
		return err
	}
	if err := params.Save(paramsPath); err != nil {
		return err
	}
	hist, err := readHistory(logPath)
	if err != nil {
		return err
	}
	plotPath, err := f.OutPath("plot.png")
	if err != nil {
		return err
	}
	if err := savePlot(hist, title, plotPath); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "[INFO] wrote %s, %s and %s\n", paramsPath, logPath, plotPath)

	trainable, fixed := paramCount(params)
	last := hist[len(hist)-1]
	return common.Summary{
		Program: program, Epochs: last.Epoch, Contexts: common.ContextNames(devs),
		TrainAcc: finite(last.Acc), ValAcc: finite(last.ValAcc),
		TrainLoss: finite(last.Loss), ValLoss: finite(last.ValLoss),
		SamplesPerSec: seen.rate(job.Size), Seconds: common.Since(start), // all workers
		Params: paramsPath, MetricsLog: logPath,
		Extra: map[string]any{
			"plot": plotPath, "amp": f.AMP, "hybridize": f.Hybridize, "global_batch": global, "processes": job.Size, "steps_per_epoch": trainLoader.Len(),
			"params_trainable": trainable, "params_non_trainable": fixed,
			"last_lr": last.LR, "resumed_from": ckpt.ResumedFrom, "epochs_this_run": seen.epochs,
		},
	}.Print(stdout)
}

// loaders builds the tutorial's input pipeline. Every image is padded by
// pad pixels of zeros on each side (Fashion-MNIST's 28×28 to 32×32), cast to
// float32 (values 0–255, no scaling) and has the per-pixel mean image of
// the training set subtracted; training images are then shifted by up to
// 10% of their width and height (edges repeated, Keras' fill_mode
// "nearest") and flipped left-right half of the time, in that order, as
// Keras' ImageDataGenerator augments the already mean-subtracted arrays.
// Training batches are shuffled and an incomplete last batch is dropped
// (the post's steps_per_epoch = len(trainX) // (64 * G)). Batches have
// batch images, this process's share (-batch-size × contexts); in a
// distributed job the training loader gives this worker only its shard of
// every epoch, and every worker validates on the whole test set.
func loaders(job common.Job, train, test data.Dataset, f *common.Flags, batch, pad int) (tr, val *data.DataLoader, err error) {
	if shard := (train.Len() + job.Size - 1) / job.Size; shard < batch {
		return nil, nil, fmt.Errorf("%d training images do not fill one batch of %d per worker (%d workers, -batch-size %d per context); lower -batch-size or raise -limit",
			train.Len(), batch, job.Size, f.BatchPerCtx)
	}
	toFloat := data.Compose(transforms.Pad(pad, transforms.Constant, 0), transforms.ToFloat())
	mean, err := transforms.MeanImage(train, toFloat)
	if err != nil {
		return nil, nil, err
	}
	centre := data.Compose(toFloat, transforms.SubtractMean(mean))
	augment := data.Compose(centre,
		transforms.RandomShift(0.1, 0.1, transforms.Nearest, 0),
		transforms.RandomFlipLeftRight(0.5))
	opts, err := job.TrainOptions(train.Len(), data.LoaderOpts{
		BatchSize: batch, Shuffle: true, Seed: f.Seed, LastBatch: data.Discard, Workers: f.Workers,
	})
	if err != nil {
		return nil, nil, err
	}
	tr, err = data.NewDataLoader(data.TransformFirst(train, augment), opts)
	if err != nil {
		return nil, nil, err
	}
	val, err = data.NewDataLoader(data.TransformFirst(test, centre), data.LoaderOpts{
		BatchSize: batch, Workers: f.Workers,
	})
	return tr, val, err
}

// polyDecay is the tutorial's poly_decay learning-rate schedule,
//
//	alpha = baseLR * (1 - epoch/maxEpochs) ** power
//
// as a function of the 0-based epoch, which is the index Keras'
// LearningRateScheduler passes and estimator.EpochLR too: the first epoch
// runs at baseLR, the last at baseLR/maxEpochs (power 1). It is
// optimizer.Poly (MXNet's PolyScheduler) evaluated at the epoch index
// instead of the update number.
func polyDecay(maxEpochs int, baseLR, power float64) func(epoch int) float64 {
	s, err := optimizer.NewPoly(optimizer.PolyOpts{MaxUpdate: maxEpochs, BaseLR: baseLR, Pwr: power, FinalLR: 0})
	if err != nil { // only for arguments run has already checked
		panic(err)
	}
	return s.LR
}

// tally adds up the epochs this run trained, for the summary's throughput.
type tally struct {
	estimator.NopHandler
	epochs  int
	samples int
	train   time.Duration
}

// EpochEnd counts the epoch's training samples and time (validation
// excluded).
func (t *tally) EpochEnd(s *estimator.State) error {
	t.epochs++
	t.samples += s.Samples
	t.train += s.EpochTime
	return nil
}

// rate returns the training throughput of a job of that many workers,
// each as fast as this one.
func (t *tally) rate(workers int) float64 {
	if t.train <= 0 {
		return 0
	}
	return float64(int(float64(t.samples*workers)/t.train.Seconds()*10)) / 10
}

// finite maps a NaN or infinity, which JSON cannot hold, to 0.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Command mnist-convnet-bn is Goluon's version of the Keras/TensorFlow
// multi-GPU notebook that trains a ConvNet with batch normalisation on MNIST
// and times one device against several: the same network (three
// convolutions, one BatchNorm, two dense layers), RMSprop with Keras'
// defaults, 128 samples per context per batch, 12 epochs. Each epoch's line
// carries its time, a "total:" line gives the duration of the whole fit,
// and the trained parameters are saved in a form that loads onto any set of
// contexts.
//
//	go run ./tutorials/mnist-convnet-bn -contexts cpu:0       # one context
//	go run ./tutorials/mnist-convnet-bn -contexts cpu:0,cpu:1 # two contexts
//
// It trains on Fashion-MNIST (same format as MNIST) unless -dataset mnist is
// given. After every epoch it writes a checkpoint into -out/checkpoints;
// -resume continues an interrupted run from the latest one (the epoch
// lines and metrics.jsonl go on from there). The last line of output is the
// tutorials' JSON summary.
//
// Several processes (MPI): with -kvstore dist_sync the program is one
// worker of an MPI job. Each worker trains on its shard of every epoch on
// its own -contexts, the gradients are summed over all workers, and only
// rank 0 prints and writes files (BatchNorm's running statistics are not
// exchanged: the saved ones are rank 0's):
//
//	go build -tags mpi -o mnist-convnet-bn ./tutorials/mnist-convnet-bn
//	mpirun -np 2 ./mnist-convnet-bn -kvstore dist_sync -contexts cpu:0 # as root add --allow-run-as-root
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
	"strconv"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

const program = "mnist-convnet-bn"

// paramsFile is the name of the saved parameters inside -out.
const paramsFile = "mnist-convnet-bn.safetensors"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // -h: the usage is printed already
		}
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
}

// run trains as the command-line arguments say, writing the epoch lines,
// the total duration and the JSON summary to stdout.
func run(args []string, stdout io.Writer) error {
	_, err := train(args, stdout)
	return err
}

// outcome is what a training run leaves behind.
type outcome struct {
	Net      *nn.Sequential // the trained network, on Contexts
	Contexts []ctx.Context
	Params   string // path of the saved parameters
	Summary  common.Summary
}

// train parses args, trains and saves the network and prints the summary.
// In a distributed job (-kvstore dist_sync) only rank 0 prints and writes;
// the outcome of another rank names the file rank 0 wrote.
func train(args []string, w io.Writer) (_ *outcome, err error) {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	f := common.Register(fs, common.Flags{
		Contexts: "cpu:0,cpu:1", KVStore: "device", Epochs: 12, BatchPerCtx: 128,
		LR: 1e-3, Seed: 42, Out: "out/" + program, Workers: 1,
	})
	dataset := fs.String("dataset", dsFashion, "data set: fashion-mnist or mnist (same file format)")
	resume := fs.Bool("resume", false, "continue from the latest checkpoint in -out/checkpoints")
	syncBN := fs.Bool("sync-bn", false, "normalise with the statistics of the whole batch over all contexts and MPI processes (SyncBatchNorm) instead of each context's part")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.Epochs <= 0 || f.BatchPerCtx <= 0 {
		return nil, fmt.Errorf("-epochs and -batch-size must be positive (got %d and %d)", f.Epochs, f.BatchPerCtx)
	}
	devs, err := f.Devices()
	if err != nil {
		return nil, err
	}
	// With -kvstore dist_sync this process is one worker of an MPI job;
	// only rank 0 prints and writes files.
	job, err := f.Job()
	if err != nil {
		return nil, err
	}
	defer job.Finish(&err)
	w = job.Out(w)
	nd.Seed(f.Seed) // weights and dropout masks

	// Data: the notebook's x / 255, batches of 128 per context.
	trainDS, testDS, err := loadData(f, *dataset, w)
	if err != nil {
		return nil, err
	}
	batch := f.BatchPerCtx * len(devs) // this process's batch
	globalBatch := batch * job.Size    // over all workers
	trainL, valL, err := newLoaders(job, trainDS, testDS, batch, f.Workers, f.Seed)
	if err != nil {
		return nil, err
	}

	// Model, built "inside the strategy scope": the parameters get one
	// replica per context, all with the same Glorot-uniform start
	// (Keras' default; MXNet's Xavier()).
	net := newNet(*syncBN)
	if err := gluon.Initialize(net, initializer.Xavier{}, devs...); err != nil {
		return nil, err
	}

	// Compile: optimizer, loss and metrics.
	trainer, err := gluon.NewTrainer(gluon.CollectParams(net), newOptimizer(f.LR), f.KVStore, gluon.TrainerOpts{})
	if err != nil {
		return nil, err
	}
	accuracy := func() metric.Metric { return metric.NewAccuracy() }
	est, err := estimator.New(f.Model(net), loss.NewSoftmaxCrossEntropy(), trainer, devs, accuracy)
	if err != nil {
		return nil, err
	}

	// Fit, validating on the test set after every epoch.
	logPath, err := outPath(f, job, "metrics.jsonl")
	if err != nil {
		return nil, err
	}
	handlers := []estimator.Handler{&estimator.Logger{W: w}}
	if job.Chief() {
		if !*resume {
			if err := os.Remove(logPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err // MetricsLog appends; start a fresh run's log afresh
			}
		}
		handlers = append(handlers, &estimator.MetricsLog{Path: logPath, Trainer: trainer})
	}
	// Checkpoints after every epoch (rank 0 writes them; other workers of
	// a distributed job resume from them).
	ckpt := &estimator.Checkpoint{Dir: filepath.Join(f.Out, "checkpoints"), Resume: *resume,
		Params: gluon.CollectParams(net), Trainer: trainer, Contexts: devs, ReadOnly: !job.Chief(),
		Settings: f.Settings(map[string]string{"dataset": *dataset, "sync-bn": strconv.FormatBool(*syncBN)})}
	rec := &epochRecorder{}
	handlers = append(handlers, ckpt, rec)
	tb, closeTB, err := f.TensorBoard(gluon.CollectParams(net), job.Chief())
	if err != nil {
		return nil, err
	}
	defer common.CloseInto(&err, closeTB)
	handlers = append(handlers, tb...)
	handlers = append(handlers, f.ProfileHandlers(w)...)
	where := fmt.Sprintf("contexts %v", common.ContextNames(devs))
	if job.Size > 1 {
		where = fmt.Sprintf("%d workers × contexts %v", job.Size, common.ContextNames(devs))
	}
	fmt.Fprintf(w, "%s on %s: %d training, %d test samples; %s, batch %d per context (%d in all), kvstore %s\n",
		program, *dataset, trainDS.Len(), testDS.Len(), where, f.BatchPerCtx, globalBatch, f.KVStore)
	goctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	err = est.Fit(goctx, trainL, valL, f.Epochs, handlers...)
	seconds := common.Since(start)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("interrupted; the checkpoints in %s keep the finished epochs, -resume continues: %w", ckpt.Dir, err)
	}
	if err != nil {
		return nil, err
	}
	if len(rec.seconds) == 0 {
		return nil, fmt.Errorf("nothing to train: the checkpoint in %s is at epoch %d of %d", ckpt.Dir, ckpt.ResumedFrom, f.Epochs)
	}

	// Save the base parameters: one copy of each, loadable on any contexts.
	paramsPath, err := outPath(f, job, paramsFile)
	if err != nil {
		return nil, err
	}
	if job.Chief() {
		if err := gluon.SaveParameters(net, paramsPath); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(w, "saved parameters to %s\n", paramsPath)
	fmt.Fprintf(w, "total: %.1fs - %d epoch(s) - mean epoch %.1fs - %d context(s)\n",
		seconds, len(rec.seconds), rec.meanEpoch(), len(devs))

	sum := common.Summary{
		Program:       program,
		Epochs:        rec.last.Epoch,
		Contexts:      common.ContextNames(devs),
		TrainAcc:      rec.last.Train["accuracy"],
		ValAcc:        rec.last.Val["accuracy"],
		TrainLoss:     rec.last.Train["loss"],
		ValLoss:       rec.last.Val["loss"],
		SamplesPerSec: rec.samplesPerSec(job.Size), // all workers
		Seconds:       seconds,
		Params:        paramsPath,
		MetricsLog:    logPath,
		Extra: map[string]any{
			"dataset":       *dataset,
			"batch_per_ctx": f.BatchPerCtx,
			"processes":     job.Size,
			"kvstore":       f.KVStore,
			"epoch_seconds": rec.seconds, // this run's epochs
			"resumed_from":  ckpt.ResumedFrom,
		},
	}
	if err := sum.Print(w); err != nil {
		return nil, err
	}
	return &outcome{Net: net, Contexts: devs, Params: paramsPath, Summary: sum}, nil
}

// epochRecorder is an estimator handler that keeps every epoch's training
// time (validation excluded) and sample count, and the last epoch's metrics.
type epochRecorder struct {
	estimator.NopHandler
	seconds  []float64
	training float64 // sum of the epochs' training times, unrounded
	samples  int
	last     estimator.State
}

// EpochEnd records the epoch that just ended.
func (r *epochRecorder) EpochEnd(s *estimator.State) error {
	t := s.EpochTime.Seconds()
	r.seconds = append(r.seconds, math.Round(t*1000)/1000)
	r.training += t
	r.samples += s.Samples
	r.last = *s
	return nil
}

// meanEpoch returns the mean training time of an epoch in seconds.
func (r *epochRecorder) meanEpoch() float64 {
	if len(r.seconds) == 0 {
		return 0
	}
	return r.training / float64(len(r.seconds))
}

// samplesPerSec returns the training throughput over all epochs of a job
// of that many workers, each as fast as this one.
func (r *epochRecorder) samplesPerSec(workers int) float64 {
	if r.training == 0 {
		return 0
	}
	return math.Round(float64(r.samples*workers)/r.training*10) / 10
}

// outPath returns the path of the named file in -out. Rank 0 creates -out
// (it alone writes); the other workers of a distributed job only name it.
func outPath(f *common.Flags, job common.Job, name string) (string, error) {
	if !job.Chief() {
		return filepath.Join(f.Out, name), nil
	}
	return f.OutPath(name)
}

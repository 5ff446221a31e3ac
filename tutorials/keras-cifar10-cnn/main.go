// Command keras-cifar10-cnn is the Go version of the Keras-MXNet multi-GPU
// tutorial, which trains the Keras example cifar10_cnn.py on several GPUs:
// a small CNN on CIFAR-10 with RMSprop (lr 1e-4, Keras' time-based decay
// 1e-6), 32 samples per context, inputs scaled to [0, 1], real-time data
// augmentation (width and height shift 0.1, horizontal flip) and
// validation on the test set after every epoch. Where Keras calls
// model.fit_generator, this program calls the Estimator's Fit.
//
//	go run ./tutorials/keras-cifar10-cnn -data ~/data            # cpu:0,cpu:1, 50 epochs
//	go run ./tutorials/keras-cifar10-cnn -contexts cpu:0 -epochs 1
//	go run -tags cuda ./tutorials/keras-cifar10-cnn -contexts gpu:0,gpu:1,gpu:2,gpu:3
//	go run ./tutorials/keras-cifar10-cnn -resume                 # continue after an interruption
//
// Several processes (MPI): with -kvstore dist_sync the program is one
// worker of an MPI job. Each worker trains on its shard of every epoch on
// its own -contexts, the gradients are summed over all workers, and only
// rank 0 prints and writes files (the other workers resume from rank 0's
// checkpoints, so -out must then be on a file system they all see):
//
//	go build -tags mpi -o keras-cifar10-cnn ./tutorials/keras-cifar10-cnn
//	mpirun -np 2 ./keras-cifar10-cnn -kvstore dist_sync -contexts cpu:0 # as root add --allow-run-as-root
//
// CIFAR-10 (the binary version) is read from -data, the per-user cache or
// $GOLUON_DATA; when it is missing the error says where to get it, and
// -download fetches it where the network is reachable.
//
// It prints a progress bar while an epoch runs, a Keras-like line per
// epoch, writes the trained parameters, a metrics log (metrics.jsonl) and
// per-epoch checkpoints into -out, and ends with one JSON summary line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data/vision"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// program names the tutorial in its summary line.
const program = "keras-cifar10-cnn"

// defaults are the tutorial's settings: 32 samples per context, RMSprop
// lr 1e-4, and its 50 epochs ("increase this to 200 for higher accuracy").
var defaults = common.Flags{
	Contexts:    "cpu:0,cpu:1",
	KVStore:     "device",
	Epochs:      50,
	BatchPerCtx: 32,
	Seed:        42,
	Out:         "out/keras-cifar10-cnn",
	Workers:     2,
	LR:          1e-4,
}

// Files written into -out.
const (
	paramsFile  = "keras_cifar10_trained_model.safetensors"
	metricsFile = "metrics.jsonl"
	ckptDir     = "checkpoints"
)

// options are the common flags plus this program's own.
type options struct {
	*common.Flags
	decay   float64
	resume  bool
	augment bool
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

// parseFlags reads the command line.
func parseFlags(args []string, out io.Writer) (*options, error) {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(out)
	o := &options{Flags: common.Register(fs, defaults)}
	fs.Float64Var(&o.decay, "decay", 1e-6, "Keras' time-based learning-rate decay: lr/(1 + decay·iterations)")
	fs.BoolVar(&o.resume, "resume", false, "continue from the latest checkpoint in -out")
	fs.BoolVar(&o.augment, "augment", true, "real-time data augmentation (shift 0.1, horizontal flip), as the Keras example's data_augmentation")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Epochs <= 0 || o.BatchPerCtx <= 0 {
		return nil, fmt.Errorf("-epochs (%d) and -batch-size (%d) must be positive", o.Epochs, o.BatchPerCtx)
	}
	if _, err := newOptimizer(o.LR, o.decay); err != nil {
		return nil, err
	}
	return o, nil
}

// run trains the CNN as the tutorial does and prints the progress, one
// line per epoch, the test score and, last, the summary JSON line to
// stdout.
func run(args []string, stdout io.Writer) (err error) {
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	devs, err := o.Devices()
	if err != nil {
		return err
	}
	// With -kvstore dist_sync this process is one worker of an MPI job;
	// only rank 0 prints and writes files.
	job, err := o.Job()
	if err != nil {
		return err
	}
	defer job.Finish(&err)
	stdout = job.Out(stdout)
	begin := time.Now()

	// Prepare the data: CIFAR-10 as HWC uint8 images and class labels.
	trainSet, testSet, err := common.CIFAR10(o.Flags, stdout)
	if errors.Is(err, vision.ErrNotFound) {
		return fmt.Errorf("CIFAR-10 is not on this machine. Get the binary version "+
			"(https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, 162 MiB), unpack it "+
			"and pass the directory that holds cifar-10-batches-bin with -data, "+
			"or rerun with -download where the network is reachable.\n%w", err)
	}
	if err != nil {
		return err
	}
	first, err := trainSet.Get(0, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "x_train shape: (%d, %d, %d, %d)\n", trainSet.Len(), first.Data.Shape[0], first.Data.Shape[1], first.Data.Shape[2])
	fmt.Fprintf(stdout, "%d train samples\n%d test samples\n", trainSet.Len(), testSet.Len())

	// Build the network; Xavier() is Keras' glorot_uniform, biases start at 0.
	nd.Seed(o.Seed)
	net := newModel()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		return err
	}
	nParams := summarize(stdout, params)

	// Compile: the optimizer, the loss and the metrics, on every context.
	opt, err := newOptimizer(o.LR, o.decay)
	if err != nil {
		return err
	}
	tr, err := gluon.NewTrainer(params, opt, o.KVStore, gluon.TrainerOpts{})
	if err != nil {
		return err
	}
	_, ampOff, err := common.MixedPrecision(o.AMP, tr) // the estimator scales the loss
	if err != nil {
		return err
	}
	defer ampOff()
	est, err := estimator.New(o.Model(net), loss.NewSoftmaxCrossEntropy(), tr, devs,
		func() metric.Metric { return metric.NewAccuracy() })
	if err != nil {
		return err
	}
	batch := o.BatchPerCtx * len(devs) // this process's batch
	globalBatch := batch * job.Size    // over all workers
	train, val, err := loaders(job, trainSet, testSet, o.augment, batch, o.Workers, o.Seed)
	if err != nil {
		return err
	}

	// Outputs: checkpoints, the metrics log and the trained parameters.
	// Only rank 0 writes them; the other workers of a distributed job
	// resume from its checkpoints (ReadOnly) and write nothing.
	paramsPath := filepath.Join(o.Out, paramsFile)
	metricsPath := filepath.Join(o.Out, metricsFile)
	ckpt := &estimator.Checkpoint{Dir: filepath.Join(o.Out, ckptDir), Resume: o.resume, Params: params, Trainer: tr, Contexts: devs,
		ReadOnly: !job.Chief(), Settings: o.Settings(map[string]string{
			"decay": strconv.FormatFloat(o.decay, 'g', -1, 64), "augment": strconv.FormatBool(o.augment)})}
	if job.Chief() {
		if paramsPath, err = o.OutPath(paramsFile); err != nil {
			return err
		}
		if err := prepareOutputs(ckpt.Dir, metricsPath, o.resume); err != nil {
			return err
		}
	}

	// Fit, as model.fit_generator(datagen.flow(...), validation_data=(x_test, y_test)).
	if o.augment {
		fmt.Fprintln(stdout, "Using real-time data augmentation.")
	} else {
		fmt.Fprintln(stdout, "Not using data augmentation.")
	}
	where := strings.Join(common.ContextNames(devs), ", ")
	if job.Size > 1 {
		where = fmt.Sprintf("%d workers × %s", job.Size, where)
	}
	fmt.Fprintf(stdout, "Training on %s: %d epochs, batch %d per context (%d in all), %d steps per epoch\n",
		where, o.Epochs, o.BatchPerCtx, globalBatch, train.Len())
	hist := &history{}
	handlers := []estimator.Handler{
		ckpt, // first, so that a resume sets the starting epoch before the others look
		resumeNote{W: stdout, Ckpt: ckpt},
		&estimator.Logger{W: stdout},
		// Each worker trains on its shard: ⌈N/workers⌉ samples per epoch.
		&estimate{W: stdout, After: 20, Samples: (trainSet.Len() + job.Size - 1) / job.Size},
	}
	if job.Chief() {
		handlers = append(handlers, &estimator.MetricsLog{Path: metricsPath, Trainer: tr})
	}
	handlers = append(handlers, hist)
	tb, closeTB, err := o.Flags.TensorBoard(gluon.CollectParams(net), job.Chief())
	if err != nil {
		return err
	}
	defer common.CloseInto(&err, closeTB)
	handlers = append(handlers, tb...)
	handlers = append(handlers, o.Flags.ProfileHandlers(stdout)...)
	goctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := est.Fit(goctx, train, val, o.Epochs, handlers...); err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted; rerun with -resume to continue from the last checkpoint in %s", ckpt.Dir)
		}
		return err
	}
	if hist.epochs == 0 { // resumed a finished run: score it anyway
		if hist.val, err = est.Evaluate(goctx, val); err != nil {
			return err
		}
		hist.last, hist.train = ckpt.ResumedFrom, lastLogged(metricsPath)
	}

	if job.Chief() {
		if err := gluon.SaveParameters(net, paramsPath); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "Saved trained model at %s\n", paramsPath)
	fmt.Fprintf(stdout, "Test loss: %.4f\nTest accuracy: %.4f\n", hist.val["loss"], hist.val["accuracy"])

	return common.Summary{
		Program:       program,
		Epochs:        hist.last,
		Contexts:      common.ContextNames(devs),
		TrainAcc:      hist.train["accuracy"],
		ValAcc:        hist.val["accuracy"],
		TrainLoss:     hist.train["loss"],
		ValLoss:       hist.val["loss"],
		SamplesPerSec: hist.rate() * float64(job.Size), // all workers
		Seconds:       common.Since(begin),
		Params:        paramsPath,
		MetricsLog:    metricsPath,
		Extra: map[string]any{
			"amp":               o.AMP,
			"hybridize":         o.Hybridize,
			"batch_per_context": o.BatchPerCtx,
			"global_batch":      globalBatch,
			"processes":         job.Size,
			"kvstore":           o.KVStore,
			"augment":           o.augment,
			"parameters":        nParams,
			"epochs_this_run":   hist.epochs,
			"resumed_from":      ckpt.ResumedFrom,
			"next_lr":           tr.LearningRate(),
		},
	}.Print(stdout)
}

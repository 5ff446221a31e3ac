// Command vae trains a variational autoencoder on Fashion-MNIST (PyTorch's
// examples/vae: a 784-400-20 encoder, a 20-400-784 decoder, Bernoulli
// pixels, Adam with learning rate 1e-3), data-parallel over two CPU
// contexts by default. Its loss, the negative evidence lower bound, comes
// from gluon/probability: a reparameterised sample of the encoder's
// normal posterior, the decoder's Bernoulli log-likelihood and the KL
// divergence from the standard normal prior.
//
//	go run ./tutorials/vae -download
//	go run ./tutorials/vae -epochs 20 -latent 2
//
// It prints a progress bar while an epoch runs and a line per epoch with
// the train and test loss (nats per image), and writes into -out the
// parameters (vae.safetensors), the loss curve (loss.png), 64 images
// decoded from the prior (samples.png) and 8 test images above their
// reconstructions (reconstructions.png). Its last line is the JSON summary
// every tutorial prints.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/progress"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

const program = "vae"

var defaults = common.Flags{
	Contexts:    "cpu:0,cpu:1",
	KVStore:     "device",
	Epochs:      10,
	BatchPerCtx: 64,
	Seed:        42,
	Out:         "out/vae",
	Workers:     2,
	LR:          1e-3,
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

// epochLoss is one epoch's mean losses, in nats per image.
type epochLoss struct{ Train, Test float64 }

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stdout)
	f := common.Register(fs, defaults)
	latent := fs.Int("latent", 20, "the latent space's dimension")
	hidden := fs.Int("hidden", 400, "the encoder's and the decoder's hidden width")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.Epochs <= 0 || f.BatchPerCtx <= 0 || *latent <= 0 || *hidden <= 0 {
		return fmt.Errorf("-epochs, -batch-size, -latent and -hidden must be positive")
	}
	devs, err := f.Devices()
	if err != nil {
		return err
	}
	start := time.Now()
	trainSet, testSet, err := common.FashionMNIST(f, stdout)
	if err != nil {
		return err
	}
	batch := f.BatchPerCtx * len(devs)
	toTensor := transforms.ToTensor() // pixels in [0, 1]: the Bernoulli targets
	trainLoader, err := data.NewDataLoader(data.TransformFirst(trainSet, toTensor), data.LoaderOpts{
		BatchSize: batch, Shuffle: true, Seed: f.Seed, Workers: f.Workers})
	if err != nil {
		return err
	}
	testLoader, err := data.NewDataLoader(data.TransformFirst(testSet, toTensor), data.LoaderOpts{BatchSize: batch, Workers: f.Workers})
	if err != nil {
		return err
	}

	nd.Seed(f.Seed)
	net := newVAE(*hidden, *latent)
	if err := gluon.Initialize(net, initializer.Xavier{}, devs...); err != nil {
		return err
	}
	trainer, err := gluon.NewTrainer(gluon.CollectParams(net), optimizer.NewAdam(f.LR), f.KVStore, gluon.TrainerOpts{})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "training a VAE (latent %d, hidden %d) on %d Fashion-MNIST images (testing on %d) with contexts %v, batch %d, Adam lr %g\n",
		*latent, *hidden, trainSet.Len(), testSet.Len(), devs, batch, f.LR)
	var hist []epochLoss
	var samples int
	var trainSeconds float64
	for epoch := 1; epoch <= f.Epochs; epoch++ {
		t0 := time.Now()
		bar := progress.New(stdout, int64(trainLoader.Len()), progress.Opts{Prefix: fmt.Sprintf("Epoch %d/%d", epoch, f.Epochs), Unit: "batches"})
		tr, n, err := pass(net, trainLoader, devs, trainer, bar)
		bar.Finish()
		if err != nil {
			return fmt.Errorf("epoch %d: %w", epoch, err)
		}
		samples += n
		trainSeconds += common.Since(t0)
		te, _, err := pass(net, testLoader, devs, nil, nil)
		if err != nil {
			return fmt.Errorf("epoch %d: test: %w", epoch, err)
		}
		hist = append(hist, epochLoss{tr, te})
		fmt.Fprintf(stdout, "Epoch %d/%d - loss %.2f - test loss %.2f nats per image - %.1fs\n", epoch, f.Epochs, tr, te, common.Since(t0))
	}

	out := func(name string) (string, error) { return f.OutPath(name) }
	paramsPath, err := out("vae.safetensors")
	if err != nil {
		return err
	}
	if err := gluon.SaveParameters(net, paramsPath); err != nil {
		return err
	}
	if err := saveImages(net, testSet, devs[0], *latent, out); err != nil {
		return err
	}
	plotPath, err := out("loss.png")
	if err != nil {
		return err
	}
	if err := savePlot(plotPath, hist); err != nil {
		return err
	}
	last := hist[len(hist)-1]
	fmt.Fprintf(stdout, "test loss %.2f nats per image after %d epochs; parameters, loss curve and images in %s\n", last.Test, f.Epochs, f.Out)
	return common.Summary{
		Program: program, Epochs: f.Epochs, Contexts: common.ContextNames(devs),
		TrainLoss: last.Train, ValLoss: last.Test,
		SamplesPerSec: float64(int64(float64(samples)/max(trainSeconds, 1e-9) + 0.5)),
		Seconds:       common.Since(start), Params: paramsPath,
		Extra: map[string]any{"latent": *latent, "hidden": *hidden, "batch_per_ctx": f.BatchPerCtx, "lr": f.LR},
	}.Print(stdout)
}

// pass runs the network over a loader, split over the contexts: with a
// trainer, recorded with a backward pass and a step per batch; without, in
// predict mode. It returns the mean loss per image and the images seen.
func pass(net *vae, loader *data.DataLoader, devs []ctx.Context, trainer *gluon.Trainer, bar *progress.Bar) (float64, int, error) {
	it := loader.Iter(context.Background())
	defer it.Close()
	total, n := 0.0, 0
	for it.Next() {
		b := it.Batch()
		sc := nd.NewScope()
		xs, err := gluon.SplitAndLoad(b.Data, devs, false)
		if err != nil {
			sc.Close()
			return 0, n, err
		}
		sums := make([]float64, len(xs))
		step := func(i int, _ ctx.Context) error {
			l := net.Forward(xs[i])
			if trainer != nil {
				autograd.Backward(l)
			}
			sums[i] = nd.Sum(l.Detach()).Scalar()
			return nil
		}
		if trainer != nil {
			autograd.Record(func() { err = gluon.ForEachDevice(devs[:len(xs)], step) })
		} else {
			autograd.PredictMode(func() { err = gluon.ForEachDevice(devs[:len(xs)], step) })
		}
		if err == nil && trainer != nil {
			err = trainer.Step(b.Data.Shape()[0])
		}
		sc.Close()
		if err != nil {
			return 0, n, err
		}
		for _, s := range sums {
			total += s
		}
		n += b.Data.Shape()[0]
		if bar != nil {
			bar.Add(1)
		}
	}
	if err := it.Err(); err != nil {
		return 0, n, err
	}
	return total / float64(max(n, 1)), n, nil
}

// Command wgan-gp trains a Wasserstein GAN with gradient penalty
// (Gulrajani et al., "Improved Training of Wasserstein GANs", 2017) on
// Fashion-MNIST, data-parallel over two CPU contexts by default: a
// DCGAN-style generator against a critic whose loss is
// D(fake) − D(real) + λ·(‖∇D(x̂)‖₂ − 1)² on random interpolates x̂ of real
// and generated images. The penalty's gradient with respect to the
// critic's weights is a second derivative: autograd.GradWith with
// CreateGraph records ∇D(x̂), so that Backward differentiates through it.
// Adam at 1e-4 with β = (0.5, 0.9), five critic steps per generator step,
// λ = 10, as in the paper.
//
//	go run ./tutorials/wgan-gp -download
//	go run ./tutorials/wgan-gp -epochs 10
//
// It prints a progress bar while an epoch runs and a line per epoch with
// the critic's estimate of the Wasserstein distance (mean D(real) −
// mean D(fake)), the mean penalty and the generator's loss, and writes
// into -out the generator's parameters (generator.safetensors), the
// curves (loss.png) and 64 generated images (samples.png). Its last line
// is the JSON summary every tutorial prints.
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
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/progress"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

const program = "wgan-gp"

var defaults = common.Flags{
	Contexts:    "cpu:0,cpu:1",
	KVStore:     "device",
	Epochs:      5,
	BatchPerCtx: 32,
	Seed:        42,
	Out:         "out/wgan-gp",
	Workers:     2,
	LR:          1e-4,
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

// epochStats are one epoch's means per image: the critic's Wasserstein
// estimate, its gradient penalty (before λ) and the generator's loss.
type epochStats struct{ Wasserstein, Penalty, GenLoss float64 }

// gan holds the two networks, their trainers and the settings of a run.
type gan struct {
	gen, critic    *nn.Sequential
	gTrain, dTrain *gluon.Trainer
	devs           []ctx.Context
	latent         int
	lambda         float64
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stdout)
	f := common.Register(fs, defaults)
	latent := fs.Int("latent", 64, "the generator's input dimension")
	nCritic := fs.Int("critic-steps", 5, "critic steps per generator step")
	lambda := fs.Float64("lambda", 10, "the gradient penalty's weight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if f.Epochs <= 0 || f.BatchPerCtx <= 0 || *latent <= 0 || *nCritic <= 0 || !(*lambda >= 0) {
		return fmt.Errorf("-epochs, -batch-size, -latent and -critic-steps must be positive and -lambda not negative")
	}
	devs, err := f.Devices()
	if err != nil {
		return err
	}
	start := time.Now()
	trainSet, _, err := common.FashionMNIST(f, stdout)
	if err != nil {
		return err
	}
	batch := f.BatchPerCtx * len(devs)
	loader, err := data.NewDataLoader(data.TransformFirst(trainSet, transforms.ToTensor()), data.LoaderOpts{
		BatchSize: batch, Shuffle: true, Seed: f.Seed, Workers: f.Workers})
	if err != nil {
		return err
	}

	nd.Seed(f.Seed)
	g := &gan{gen: newGenerator(*latent), critic: newCritic(), devs: devs, latent: *latent, lambda: *lambda}
	for _, net := range []gluon.Block{g.gen, g.critic} {
		if err := gluon.Initialize(net, initializer.Xavier{}, devs...); err != nil {
			return err
		}
	}
	adam := func() *optimizer.Adam {
		o := optimizer.NewAdam(f.LR)
		o.Beta1, o.Beta2 = 0.5, 0.9
		return o
	}
	if g.gTrain, err = gluon.NewTrainer(gluon.CollectParams(g.gen), adam(), f.KVStore, gluon.TrainerOpts{}); err != nil {
		return err
	}
	if g.dTrain, err = gluon.NewTrainer(gluon.CollectParams(g.critic), adam(), f.KVStore, gluon.TrainerOpts{}); err != nil {
		return err
	}
	fixedZ := nd.RandomNormal(devs[0], nd.Float32, 0, 1, 64, *latent) // the samples' latents, the same every epoch
	fmt.Fprintf(stdout, "training a WGAN-GP (latent %d, %d critic steps per generator step, λ %g) on %d Fashion-MNIST images with contexts %v, batch %d, Adam lr %g\n",
		*latent, *nCritic, *lambda, trainSet.Len(), devs, batch, f.LR)
	var hist []epochStats
	var images int
	var trainSeconds float64
	for epoch := 1; epoch <= f.Epochs; epoch++ {
		t0 := time.Now()
		bar := progress.New(stdout, int64(loader.Len()), progress.Opts{Prefix: fmt.Sprintf("Epoch %d/%d", epoch, f.Epochs), Unit: "batches"})
		st, n, err := g.epoch(loader, *nCritic, bar)
		bar.Finish()
		if err != nil {
			return fmt.Errorf("epoch %d: %w", epoch, err)
		}
		images += n
		trainSeconds += common.Since(t0)
		hist = append(hist, st)
		fmt.Fprintf(stdout, "Epoch %d/%d - Wasserstein estimate %.4f - penalty %.4f - generator loss %.4f - %.1fs\n",
			epoch, f.Epochs, st.Wasserstein, st.Penalty, st.GenLoss, common.Since(t0))
	}

	out := func(name string) (string, error) { return f.OutPath(name) }
	paramsPath, err := out("generator.safetensors")
	if err != nil {
		return err
	}
	if err := gluon.SaveParameters(g.gen, paramsPath); err != nil {
		return err
	}
	if err := saveSamples(g.gen, fixedZ, out); err != nil {
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
	fmt.Fprintf(stdout, "Wasserstein estimate %.4f after %d epochs; generator, curves and samples in %s\n", last.Wasserstein, f.Epochs, f.Out)
	return common.Summary{
		Program: program, Epochs: f.Epochs, Contexts: common.ContextNames(devs),
		TrainLoss:     last.Penalty*g.lambda - last.Wasserstein, // the critic's loss per image
		SamplesPerSec: float64(int64(float64(images)/max(trainSeconds, 1e-9) + 0.5)),
		Seconds:       common.Since(start), Params: paramsPath,
		Extra: map[string]any{"wasserstein": last.Wasserstein, "penalty": last.Penalty, "generator_loss": last.GenLoss,
			"latent": g.latent, "critic_steps": *nCritic, "lambda": g.lambda, "batch_per_ctx": f.BatchPerCtx, "lr": f.LR},
	}.Print(stdout)
}

// epoch runs one pass over the loader: a critic step per batch and a
// generator step after every nCritic of them. It returns the epoch's
// means per image and the number of real images seen.
func (g *gan) epoch(loader *data.DataLoader, nCritic int, bar *progress.Bar) (epochStats, int, error) {
	it := loader.Iter(context.Background())
	defer it.Close()
	var sum epochStats
	n, genImages, steps := 0, 0, 0
	for it.Next() {
		b := it.Batch()
		sc := nd.NewScope()
		w, pen, err := g.criticStep(b.Data)
		if err == nil && (steps+1)%nCritic == 0 {
			var gl float64
			gl, err = g.generatorStep(b.Data.Shape()[0])
			sum.GenLoss += gl
			genImages += b.Data.Shape()[0]
		}
		sc.Close()
		if err != nil {
			return epochStats{}, n, err
		}
		steps++
		sum.Wasserstein += w
		sum.Penalty += pen
		n += b.Data.Shape()[0]
		bar.Add(1)
	}
	if err := it.Err(); err != nil {
		return epochStats{}, n, err
	}
	return epochStats{sum.Wasserstein / float64(max(n, 1)), sum.Penalty / float64(max(n, 1)), sum.GenLoss / float64(max(genImages, 1))}, n, nil
}

// criticStep trains the critic on a batch of real images (pixels in
// [0, 1]) against as many generated ones, split over the contexts. It
// returns the sums over the batch of D(real) − D(fake) and of the
// penalty.
func (g *gan) criticStep(images *nd.NDArray) (wass, pen float64, err error) {
	xs, err := gluon.SplitAndLoad(images, g.devs, false)
	if err != nil {
		return 0, 0, err
	}
	devs := g.devs[:len(xs)]
	// The fakes, in training mode (the generator's batch statistics) but
	// not recorded: this step trains the critic only.
	fakes := make([]*nd.NDArray, len(xs))
	autograd.PauseMode(true, func() {
		err = gluon.ForEachDevice(devs, func(i int, dev ctx.Context) error {
			fakes[i] = g.gen.Forward(nd.RandomNormal(dev, nd.Float32, 0, 1, xs[i].Shape()[0], g.latent))
			return nil
		})
	})
	if err != nil {
		return 0, 0, err
	}
	ws, ps := make([]float64, len(xs)), make([]float64, len(xs))
	autograd.Record(func() {
		err = gluon.ForEachDevice(devs, func(i int, dev ctx.Context) error {
			n := xs[i].Shape()[0]
			real := nd.AddScalar(nd.MulScalar(xs[i], 2), -1) // pixels in [−1, 1], as the generator's tanh
			eps := nd.RandomUniform(dev, nd.Float32, 0, 1, n, 1, 1, 1)
			xhat := nd.Add(nd.Mul(eps, real), nd.Mul(nd.RSubScalar(1, eps), fakes[i])).Detach()
			xhat.AttachGrad(nd.GradWrite)
			dReal := nd.Reshape(g.critic.Forward(real), n)
			dFake := nd.Reshape(g.critic.Forward(fakes[i]), n)
			// ∇D(x̂) per image, recorded (CreateGraph) so that the penalty
			// on its norm trains the critic's weights.
			grad := autograd.GradWith([]*nd.NDArray{nd.Sum(g.critic.Forward(xhat))}, []*nd.NDArray{xhat}, autograd.GradOpts{CreateGraph: true})[0]
			penalty := nd.Square(nd.AddScalar(nd.Norm(nd.Reshape(grad, n, -1), 2, 1), -1))
			autograd.Backward(nd.Add(nd.Sub(dFake, dReal), nd.MulScalar(penalty, g.lambda)))
			ws[i] = nd.Sum(nd.Sub(dReal, dFake).Detach()).Scalar()
			ps[i] = nd.Sum(penalty.Detach()).Scalar()
			return nil
		})
	})
	if err != nil {
		return 0, 0, err
	}
	if err := g.dTrain.Step(images.Shape()[0]); err != nil {
		return 0, 0, err
	}
	for i := range ws {
		wass += ws[i]
		pen += ps[i]
	}
	return wass, pen, nil
}

// generatorStep trains the generator on batch fresh latents, split over
// the contexts, to raise the critic's scores of its images. It returns
// the sum of −D(fake) over the batch.
func (g *gan) generatorStep(batch int) (float64, error) {
	per := make([]int, len(g.devs))
	for i := range batch {
		per[i%len(g.devs)]++
	}
	var devs []ctx.Context
	for i, d := range g.devs {
		if per[i] > 0 {
			devs = append(devs, d)
		}
	}
	ls := make([]float64, len(devs))
	var err error
	autograd.Record(func() {
		err = gluon.ForEachDevice(devs, func(i int, dev ctx.Context) error {
			z := nd.RandomNormal(dev, nd.Float32, 0, 1, per[i], g.latent)
			l := nd.Neg(nd.Reshape(g.critic.Forward(g.gen.Forward(z)), per[i]))
			autograd.Backward(l)
			ls[i] = nd.Sum(l.Detach()).Scalar()
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	if err := g.gTrain.Step(batch); err != nil {
		return 0, err
	}
	total := 0.0
	for _, l := range ls {
		total += l
	}
	return total, nil
}

// Package traintest holds what the training tests and benchmarks share: a
// data-parallel forward and backward pass, a timed training-step
// benchmark, snapshots of a network's parameters and their relative
// difference.
package traintest

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// SoftmaxCE is the per-sample softmax cross-entropy of logits against
// class labels, written with nd ops only.
func SoftmaxCE(logits, labels *nd.NDArray) *nd.NDArray {
	return nd.Neg(nd.Pick(nd.LogSoftmax(logits, -1), labels, 1))
}

// Loss is a per-sample loss of predictions against labels.
type Loss = gluon.LossFunc

// Backward runs one data-parallel forward and backward pass: x and y are
// split over devs (evenly, or failing, when even is set), each device's
// slice goes through net and lossFn inside one recording scope, and each
// device's loss is back-propagated; with fewer samples than devices the
// last devices get none and run nothing. The caller then steps a Trainer.
func Backward(net gluon.Block, lossFn Loss, x, y *nd.NDArray, devs []ctx.Context, even bool) error {
	xs, err := gluon.SplitAndLoad(x, devs, even)
	if err != nil {
		return err
	}
	ys, err := gluon.SplitAndLoad(y, devs, even)
	if err != nil {
		return err
	}
	autograd.Record(func() {
		err = gluon.ForEachDevice(devs[:len(xs)], func(i int, _ ctx.Context) error {
			autograd.Backward(lossFn(net.Forward(xs[i]), ys[i]))
			return nil
		})
	})
	return err
}

// NewStep prepares full training steps (forward, softmax cross-entropy,
// backward, trainer step through the device kvstore) of net on one batch
// of random inputs of shape (the batch first, labels i mod 10) split over
// devs: it seeds nd with 1, initialises net's parameters on devs and
// returns the step, each run in a scope of its own.
func NewStep(net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context) (func() error, error) {
	b, err := newBatch(net, opt, shape, devs)
	if err != nil {
		return nil, err
	}
	return func() error {
		s := nd.NewScope()
		defer s.Close()
		if err := Backward(net, b.lossFn, b.x, b.y, devs, false); err != nil {
			return err
		}
		return b.tr.Step(shape[0])
	}, nil
}

// NewCompiledStep is NewStep through gluon.CompileStep with opts (its
// Contexts are devs).
func NewCompiledStep(net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context, opts gluon.StepOpts) (func() error, error) {
	b, err := newBatch(net, opt, shape, devs)
	if err != nil {
		return nil, err
	}
	opts.Contexts = devs
	step, err := gluon.CompileStep(net, b.lossFn, b.tr, opts)
	if err != nil {
		return nil, err
	}
	return func() error {
		s := nd.NewScope()
		defer s.Close()
		_, err := step.Run(b.x, b.y)
		return err
	}, nil
}

// batch is what NewStep and NewCompiledStep train on.
type batch struct {
	tr     *gluon.Trainer
	lossFn gluon.LossFunc
	x, y   *nd.NDArray
}

func newBatch(net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context) (batch, error) {
	nd.Seed(1)
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		return batch{}, err
	}
	tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
	if err != nil {
		return batch{}, err
	}
	labels := make([]float32, shape[0])
	for i := range labels {
		labels[i] = float32(i % 10)
	}
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, shape...)
	return batch{tr: tr, lossFn: loss.NewSoftmaxCrossEntropy().Forward, x: x, y: nd.FromSlice(ctx.CPU(0), labels)}, nil
}

// StepBench measures NewStep's training steps and reports samples/s.
// wait, when not nil, blocks until the devices' queued work is done
// (asynchronous backends); it runs after the warm-up steps and after the
// timed loop.
func StepBench(b *testing.B, net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context, wait func()) {
	run, err := NewStep(net, opt, shape, devs)
	if err != nil {
		b.Fatal(err)
	}
	timeSteps(b, run, shape[0], wait)
}

// CompiledStepBench is StepBench through gluon.CompileStep.
func CompiledStepBench(b *testing.B, net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context, opts gluon.StepOpts, wait func()) {
	run, err := NewCompiledStep(net, opt, shape, devs, opts)
	if err != nil {
		b.Fatal(err)
	}
	timeSteps(b, run, shape[0], wait)
}

// timeSteps runs three warm-up steps (deferred shapes, traces, device
// graph captures, pools), then the timed loop, and reports samples/s.
func timeSteps(b *testing.B, run func() error, batch int, wait func()) {
	step := func() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	if wait == nil {
		wait = func() {}
	}
	step()
	step()
	step()
	wait()
	for b.Loop() {
		step()
	}
	wait()
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
}

// Snapshot returns every parameter's value by name (its first replica),
// and an error when a replica differs from the first.
func Snapshot(params *gluon.ParamDict) (map[string][]float32, error) {
	out := map[string][]float32{}
	for _, name := range params.Names() {
		reps := params.Get(name).ListData()
		first := reps[0].Float32s()
		for d, r := range reps[1:] {
			if !slices.Equal(first, r.Float32s()) {
				return nil, fmt.Errorf("%s: replica %d differs from replica 0", name, d+1)
			}
		}
		out[name] = first
	}
	return out, nil
}

// RelDiff is ‖a−b‖ / ‖a‖ (NaN when a is all zeros and b equals it).
func RelDiff(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(a[i]) * float64(a[i])
	}
	return math.Sqrt(num / den)
}

// AMPNet is a network of the mixed-precision benchmarks (bench/amp_test.go,
// cuda/hybrid_test.go): its constructors and the shape of its batch.
type AMPNet struct {
	Name  string
	Net   func() gluon.Block
	Opt   func() optimizer.Optimizer
	Shape []int
}

// AMPNets are LeNet (SGD, batch 128) and the Keras CIFAR-10 CNN (RMSprop,
// batch cifarBatch).
func AMPNets(cifarBatch int) []AMPNet {
	return []AMPNet{
		{"LeNet", func() gluon.Block { return modelzoo.LeNet() }, func() optimizer.Optimizer { return optimizer.NewSGD(0.04) }, []int{128, 1, 28, 28}},
		{"KerasCIFAR", func() gluon.Block { return modelzoo.KerasCIFARCNN() }, func() optimizer.Optimizer { return optimizer.NewRMSProp(1e-4) }, []int{cifarBatch, 3, 32, 32}},
	}
}

// AMPDTypes are the variants the mixed-precision benchmarks run: float32
// and autocast to each half-precision dtype.
var AMPDTypes = []nd.DType{nd.Float32, nd.Float16, nd.BFloat16}

// NewAMPStep is NewStep in mixed precision as a training program runs it:
// under autocast to dt, with the loss scaled by a gluon/amp.LossScaler
// that the Trainer unscales with (dynamic for Float16, fixed at 1 for
// BFloat16, as torch.autocast with a GradScaler). For Float32 it is
// NewStep.
func NewAMPStep(net gluon.Block, opt optimizer.Optimizer, shape []int, devs []ctx.Context, dt nd.DType) (func() error, error) {
	if dt == nd.Float32 {
		return NewStep(net, opt, shape, devs)
	}
	b, err := newBatch(net, opt, shape, devs)
	if err != nil {
		return nil, err
	}
	sc := amp.NewLossScaler(amp.ScalerOpts{DType: dt})
	if err := b.tr.SetGradScaler(sc); err != nil {
		return nil, err
	}
	scaled := func(out, y *nd.NDArray) *nd.NDArray { return sc.Scale(b.lossFn(out, y)) }
	return func() error {
		defer nd.EnterAutocast(dt)()
		s := nd.NewScope()
		defer s.Close()
		if err := Backward(net, scaled, b.x, b.y, devs, false); err != nil {
			return err
		}
		return b.tr.Step(shape[0])
	}, nil
}

// Autocast runs run under autocast to dt (as it is for Float32).
func Autocast(dt nd.DType, run func() error) error {
	if dt != nd.Float32 {
		defer nd.EnterAutocast(dt)()
	}
	return run()
}

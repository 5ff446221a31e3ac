package gluon_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// stepRun trains a fresh network four steps on fixed batches and returns
// every step's losses and outputs and the final parameters.
type stepRun func(net gluon.Block, lossFn gluon.LossFunc, tr *gluon.Trainer, devs []ctx.Context, x, y *nd.NDArray) ([][]float32, error)

// eagerSteps is the training loop CompileStep replaces, written out.
func eagerSteps(net gluon.Block, lossFn gluon.LossFunc, tr *gluon.Trainer, devs []ctx.Context, x, y *nd.NDArray) ([][]float32, error) {
	var got [][]float32
	for range 4 {
		xs, err := gluon.SplitAndLoad(x, devs, false)
		if err != nil {
			return nil, err
		}
		ys, _ := gluon.SplitAndLoad(y, devs, false)
		losses, outs := make([]*nd.NDArray, len(devs)), make([]*nd.NDArray, len(devs))
		autograd.Record(func() {
			err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				outs[i] = net.Forward(xs[i])
				losses[i] = lossFn(outs[i], ys[i])
				autograd.Backward(losses[i])
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
		if err := tr.Step(x.Shape()[0]); err != nil {
			return nil, err
		}
		for i := range devs {
			got = append(got, losses[i].Float32s(), outs[i].Float32s())
		}
	}
	return got, nil
}

func compiledSteps(eager bool) stepRun {
	return func(net gluon.Block, lossFn gluon.LossFunc, tr *gluon.Trainer, devs []ctx.Context, x, y *nd.NDArray) ([][]float32, error) {
		step, err := gluon.CompileStep(net, lossFn, tr, gluon.StepOpts{Eager: eager})
		if err != nil {
			return nil, err
		}
		var got [][]float32
		for range 4 {
			res, err := step.Run(x, y)
			if err != nil {
				return nil, err
			}
			for i := range devs {
				got = append(got, res.Losses[i].Float32s(), res.Outputs[i].Float32s())
			}
		}
		if st := step.Stats(); !eager && (st.Traces != len(devs) || st.Replays < 2*len(devs)) {
			return nil, fmt.Errorf("stats %+v: want a trace per context and replays after", st)
		}
		return got, nil
	}
}

// TestCompileStep trains LeNet and the Keras CIFAR CNN (dropout) four
// steps on one and two contexts with CompileStep, traced and eager, and
// with the written-out loop: losses, outputs and parameters agree bit for
// bit.
func TestCompileStep(t *testing.T) {
	cpu := ctx.CPU
	cases := []struct {
		name  string
		net   func() gluon.Block
		shape []int
	}{
		{"lenet", func() gluon.Block { return modelzoo.LeNet() }, []int{6, 1, 28, 28}},
		{"keras-cifar-dropout", func() gluon.Block { return modelzoo.KerasCIFARCNN() }, []int{4, 3, 32, 32}},
	}
	for _, c := range cases {
		for _, devs := range [][]ctx.Context{{cpu(0)}, {cpu(0), cpu(1)}} {
			t.Run(fmt.Sprintf("%s/%dctx", c.name, len(devs)), func(t *testing.T) {
				train := func(run stepRun) ([][]float32, map[string][]float32) {
					net := c.net()
					params := gluon.CollectParams(net)
					nd.Seed(1)
					if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
						t.Fatal(err)
					}
					opt := optimizer.NewSGD(0.05)
					opt.Momentum = 0.9
					tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
					if err != nil {
						t.Fatal(err)
					}
					nd.Seed(2)
					x := nd.RandomNormal(cpu(0), nd.Float32, 0, 1, c.shape...)
					labels := make([]float32, c.shape[0])
					for i := range labels {
						labels[i] = float32(i % 10)
					}
					y := nd.FromSlice(cpu(0), labels)
					got, err := run(net, loss.NewSoftmaxCrossEntropy().Forward, tr, devs, x, y)
					if err != nil {
						t.Fatal(err)
					}
					final := map[string][]float32{}
					for _, name := range params.Names() {
						final[name] = params.Get(name).Data(cpu(0)).Float32s()
					}
					return got, final
				}
				wantSteps, wantParams := train(eagerSteps)
				for _, mode := range []struct {
					name string
					run  stepRun
				}{{"compiled", compiledSteps(false)}, {"eager", compiledSteps(true)}} {
					gotSteps, gotParams := train(mode.run)
					for i := range wantSteps {
						if !equalF32(gotSteps[i], wantSteps[i]) {
							t.Fatalf("%s: step array %d differs from the written-out loop", mode.name, i)
						}
					}
					for name, w := range wantParams {
						if !equalF32(gotParams[name], w) {
							t.Fatalf("%s: parameter %s differs from the written-out loop", mode.name, name)
						}
					}
				}
			})
		}
	}
}

// TestCompileStepErrors: bad arguments and batches are errors, and a
// failed Run leaves the parameters as they were.
func TestCompileStepErrors(t *testing.T) {
	net := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
	params := gluon.CollectParams(net)
	lossFn := loss.NewL2().Forward
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gluon.CompileStep(nil, lossFn, tr, gluon.StepOpts{}); err == nil {
		t.Error("a nil network is no error")
	}
	if _, err := gluon.CompileStep(net, lossFn, tr, gluon.StepOpts{}); err == nil || !strings.Contains(err.Error(), "not initialised") {
		t.Errorf("uninitialised parameters: %v", err)
	}
	dev := ctx.CPU(0)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	step, err := gluon.CompileStep(net, lossFn, tr, gluon.StepOpts{EvenSplit: true, Contexts: []ctx.Context{dev, ctx.CPU(1)}})
	if err != nil {
		t.Fatal(err)
	}
	before := net.Meta().Params()[0].Data(dev).Float32s()
	x, y := nd.Ones(dev, nd.Float32, 3, 4), nd.Ones(dev, nd.Float32, 3, 3)
	if _, err := step.Run(x, y); err == nil {
		t.Error("a batch of 3 split evenly over 2 contexts is no error")
	}
	if _, err := step.Run(x, nd.Ones(dev, nd.Float32, 2, 3)); err == nil {
		t.Error("data and labels of different batch sizes are no error")
	}
	if !equalF32(net.Meta().Params()[0].Data(dev).Float32s(), before) {
		t.Error("a failed Run changed the parameters")
	}
}

// TestCompileStepFewSamples: a batch with fewer samples than contexts
// trains the contexts that got a share, as the written-out loop does (the
// Trainer leaves the others out of the sums), with Step and with
// StepIgnoreStale.
func TestCompileStepFewSamples(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	train := func(compiled, stale bool) []float32 {
		net := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
		params := gluon.CollectParams(net)
		nd.Seed(1)
		if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		lossFn := loss.NewL2().Forward
		x, y := nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 1, 4), nd.Ones(ctx.CPU(0), nd.Float32, 1, 3)
		step, err := gluon.CompileStep(net, lossFn, tr, gluon.StepOpts{IgnoreStale: stale})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if compiled {
				res, err := step.Run(x, y)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Losses) != 1 {
					t.Fatalf("%d losses for a batch of one", len(res.Losses))
				}
				continue
			}
			xs, _ := gluon.SplitAndLoad(x, devs, false)
			ys, _ := gluon.SplitAndLoad(y, devs, false)
			autograd.Record(func() { autograd.Backward(lossFn(net.Forward(xs[0]), ys[0])) })
			if err := tr.Step(1); err != nil {
				t.Fatal(err)
			}
		}
		return net.Meta().Params()[0].Data(devs[1]).Float32s()
	}
	want := train(false, false)
	for _, stale := range []bool{false, true} {
		if got := train(true, stale); !equalF32(got, want) {
			t.Errorf("IgnoreStale %v: parameters differ from the written-out loop", stale)
		}
	}
}

// hostReader reads its input on the host, so it cannot be traced; it says
// so with EagerOnly.
type hostReader struct{ *nn.Dense }

func (h hostReader) EagerOnly() string { return "reads its input on the host" }

func (h hostReader) Forward(x *nd.NDArray) *nd.NDArray {
	_ = x.Float32s()
	return h.Dense.Forward(x)
}

// TestCompileStepEagerOnly: a network that is EagerOnly itself runs its
// compiled steps eagerly, as Hybridize runs it.
func TestCompileStepEagerOnly(t *testing.T) {
	net := hostReader{nn.NewDense(3, nn.DenseOpts{InUnits: 4})}
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	step, err := gluon.CompileStep(net, loss.NewL2().Forward, tr, gluon.StepOpts{})
	if err != nil {
		t.Fatal(err)
	}
	x, y := nd.Ones(ctx.CPU(0), nd.Float32, 2, 4), nd.Ones(ctx.CPU(0), nd.Float32, 2, 3)
	for range 3 {
		if _, err := step.Run(x, y); err != nil {
			t.Fatal(err)
		}
	}
	if st := step.Stats(); st.Traces != 0 || st.Eager != 3 {
		t.Errorf("stats %+v: want 3 eager calls and no trace", st)
	}
}

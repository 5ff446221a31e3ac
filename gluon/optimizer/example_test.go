package optimizer_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// Two steps of SGD with momentum 0.9 on a two-element weight: the
// momentum buffer m = 0.9·m − lr·g carries the first step into the second.
func ExampleSGD() {
	dev := ctx.CPU(0)
	w := nd.FromSlice(dev, []float64{1, 2})
	g := nd.FromSlice(dev, []float64{0.5, -0.5})

	opt := optimizer.NewSGD(0.1)
	opt.Momentum = 0.9
	state := opt.CreateState(w)
	for step := 1; step <= 2; step++ {
		opt.Update(optimizer.Param{Name: "w", Step: step, LRMult: 1, WDMult: 1}, w, g, state)
		fmt.Printf("step %d: w = %.4f\n", step, w.Float64s())
	}
	// Output:
	// step 1: w = [0.9500 2.0500]
	// step 2: w = [0.8550 2.1450]
}

// The poly_decay of the MiniGoogLeNet tutorial, base·(1 − epoch/maxEpochs),
// is a Poly schedule of power 1 asked with the 0-based epoch.
func ExampleNewPoly() {
	sched, err := optimizer.NewPoly(optimizer.PolyOpts{MaxUpdate: 70, BaseLR: 5e-3, Pwr: 1, FinalLR: 0})
	if err != nil {
		panic(err)
	}
	for _, epoch := range []int{0, 10, 35, 69, 70} {
		fmt.Printf("epoch %2d: lr %.6f\n", epoch, sched.LR(epoch))
	}
	// Output:
	// epoch  0: lr 0.005000
	// epoch 10: lr 0.004286
	// epoch 35: lr 0.002500
	// epoch 69: lr 0.000071
	// epoch 70: lr 0.000000
}

// A cosine schedule over 100 updates after 10 updates of linear warm-up,
// attached to Adam: the Trainer passes each update's number as Param.Step.
func ExampleNewCosine() {
	sched, err := optimizer.NewCosine(optimizer.CosineOpts{MaxUpdate: 100, BaseLR: 0.1, FinalLR: 0, Warmup: optimizer.Warmup{Steps: 10, BeginLR: 0, Mode: optimizer.WarmupLinear}})
	if err != nil {
		panic(err)
	}
	opt := optimizer.NewAdam(0.1)
	opt.Scheduler = sched
	for _, step := range []int{1, 5, 10, 55, 100} {
		fmt.Printf("update %3d: lr %.4f\n", step, opt.LearningRate(step))
	}
	// Output:
	// update   1: lr 0.0100
	// update   5: lr 0.0500
	// update  10: lr 0.1000
	// update  55: lr 0.0500
	// update 100: lr 0.0000
}

// Create builds an optimizer by name, as mx.optimizer.create does.
func ExampleCreate() {
	opt, err := optimizer.Create("rmsprop", 1e-3)
	if err != nil {
		panic(err)
	}
	fmt.Println(opt.Name(), opt.Hyperparams().LR)
	_, err = optimizer.Create("adafactor", 1e-3)
	fmt.Println(err)
	// Output:
	// rmsprop 0.001
	// optimizer: unknown optimizer "adafactor"; known: adadelta, adagrad, adam, adamax, adamw, ftrl, lamb, lars, nadam, nag, radam, rmsprop, sgd, signsgd, signum
}

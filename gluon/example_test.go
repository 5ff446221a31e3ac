package gluon_test

import (
	"fmt"
	"os"
	"slices"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

func ExampleParameter() {
	p := gluon.NewParameter("weight", 2, 0) // second dimension inferred later
	_ = p.Initialize(initializer.One(), []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, false)
	fmt.Println(p.Initialized())
	p.InferShape(2, 3) // what a layer does at its first forward pass
	fmt.Println(p.Shape(), p.Contexts(), p.Data(ctx.CPU(1)))
	// Output:
	// false
	// [2 3] [cpu(0) cpu(1)] NDArray[2 3] float32 @cpu(1) [1 1 1 1 1 1]
}

func ExampleSplitAndLoad() {
	batch := nd.FromSlice(ctx.CPU(0), []float32{0, 1, 2, 3, 4}, 5, 1)
	parts, _ := gluon.SplitAndLoad(batch, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, false)
	for _, p := range parts {
		fmt.Println(p)
	}
	_, err := gluon.SplitAndLoad(batch, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, true)
	fmt.Println(err)
	// Output:
	// NDArray[3 1] float32 @cpu(0) [0 1 2]
	// NDArray[2 1] float32 @cpu(1) [3 4]
	// gluon: split: batch of 5 samples does not divide evenly over 2 contexts (pass evenSplit=false to balance the slices)
}

// The multi-device training loop of the Gluon tutorial: shard the batch,
// forward and backward on every device inside one recording scope, then
// one trainer step with the global batch size.
func ExampleTrainer() {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	nd.Seed(1)
	net := nn.NewSequential(nn.NewDense(1, nn.DenseOpts{InUnits: 2}))
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.Zero(), devs, false)
	trainer, _ := gluon.NewTrainer(params, optimizer.NewSGD(0.3), "device", gluon.TrainerOpts{})

	x := nd.FromSlice(ctx.CPU(0), []float32{1, 0, 0, 1, 1, 1, 2, 0}, 4, 2)
	y := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 2}, 4, 1) // y = x₁ + 2x₂
	for range 1000 {
		xs, _ := gluon.SplitAndLoad(x, devs, true)
		ys, _ := gluon.SplitAndLoad(y, devs, true)
		autograd.Record(func() {
			_ = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				diff := nd.Sub(net.Forward(xs[i]), ys[i])
				autograd.Backward(nd.MulScalar(nd.Square(diff), 0.5))
				return nil
			})
		})
		_ = trainer.Step(4) // the global batch
	}
	fmt.Printf("%.2f\n", params.Get("dense0.weight").Data(ctx.CPU(1)).Float32s())
	// Output: [1.00 2.00]
}

// The Trainer's gradient buckets on two contexts, filled in reverse order
// of registration: the 16 KiB first bucket takes the last layer and the
// first layer's bias, the first layer's weight does not fit and starts a
// second; both were summed during
// backward and updated with one optimizer call per context. CPU contexts
// share the host's memory, so the backend sums the buckets in place: cpu(1)
// received only its half of the batch. (Contexts without such a
// collective receive half of each bucket twice: reduce-scatter, then
// all-gather.)
func ExampleTrainer_Stats() {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	nd.Seed(1)
	net := nn.NewSequential(nn.NewDense(64, nn.DenseOpts{InUnits: 64, Act: "relu"}), nn.NewDense(10, nn.DenseOpts{InUnits: 64}))
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.Xavier{}, devs, false)
	trainer, _ := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{FirstBucketBytes: 16 << 10})
	defer trainer.Close()
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, 8, 64)
	for range 2 {
		xs, _ := gluon.SplitAndLoad(x, devs, true)
		autograd.Record(func() {
			_ = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
				autograd.Backward(nd.Sum(net.Forward(xs[i])))
				return nil
			})
		})
		_ = trainer.Step(8)
	}
	s := trainer.Stats()
	fmt.Println("buckets:", s.Buckets, s.BucketBytes, "fused updates:", s.Fused)
	fmt.Println("bytes into cpu(1):", s.Contexts[1].BytesIn, "of which the batch:", 4*64*4)
	// Output:
	// buckets: 2 [2856 16384] fused updates: 2
	// bytes into cpu(1): 1024 of which the batch: 1024
}

// Gradient accumulation: two half-batches add their gradients (GradAdd),
// the accumulated gradients of every replica are clipped to a global norm,
// then one AdamW step covers the whole batch and the gradients are zeroed
// for the next.
func ExampleClipGlobalNorm() {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net := nn.NewSequential(nn.NewDense(1, nn.DenseOpts{InUnits: 2, NoBias: true}))
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.Zero(), devs, false)
	params.SetGradReq(nd.GradAdd)
	trainer, _ := gluon.NewTrainer(params, optimizer.NewAdamW(0.1, 0.01), "device", gluon.TrainerOpts{})

	x := nd.FromSlice(ctx.CPU(0), []float32{1, 0, 0, 1, 1, 1, 2, 0}, 4, 2)
	y := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 2}, 4, 1) // y = x₁ + 2x₂
	var norm float64
	for range 300 {
		for half := range 2 { // two micro-batches of 2 samples
			xs, _ := gluon.SplitAndLoad(nd.SliceAxis(x, 2*half, 2*half+2, 0), devs, true)
			ys, _ := gluon.SplitAndLoad(nd.SliceAxis(y, 2*half, 2*half+2, 0), devs, true)
			autograd.Record(func() {
				_ = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
					autograd.Backward(nd.Square(nd.Sub(net.Forward(xs[i]), ys[i])))
					return nil
				})
			})
		}
		norm, _ = gluon.ClipGlobalNorm(params.Grads(), 1)
		_ = trainer.Step(4) // the whole accumulated batch
		params.ZeroGrad()
	}
	fmt.Printf("weight %.1f, last gradient norm < 0.1: %v\n", params.Get("dense0.weight").Data(ctx.CPU(1)).Float32s(), norm < 0.1)
	// Output: weight [1.0 2.0], last gradient norm < 0.1: true
}

// A model summary, as Keras' model.summary: each layer's output shape and
// parameter count for a batch of two 1×8×8 images.
func ExampleSummary() {
	net := nn.NewSequential(
		nn.NewConv2D(4, 3, nn.Conv2DOpts{Act: "relu"}),
		nn.NewBatchNorm(nn.BatchNormOpts{}),
		nn.NewMaxPool2D(2, nn.PoolOpts{}),
		nn.NewDense(10, nn.DenseOpts{}),
	)
	_ = gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false)
	_, err := gluon.Summary(os.Stdout, net, nd.Zeros(ctx.CPU(0), nd.Float32, 2, 1, 8, 8))
	fmt.Println(err)
	// Output:
	// Layer (type)            Output shape  Params
	// input                   [2 1 8 8]     -
	// conv0 (Conv2D)          [2 4 6 6]     40
	// batchnorm0 (BatchNorm)  [2 4 6 6]     16
	// pool0 (Pool2D)          [2 4 3 3]     0
	// dense0 (Dense)          [2 10]        370
	// Total params: 426 (trainable 418, fixed 8)
	// <nil>
}

// ExampleHybridize runs a network through traced graphs: the first call
// of a signature traces its kernels, later calls replay them, with the
// eager network's results.
func ExampleHybridize() {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := modelzoo.MLP(3, 8)
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		panic(err)
	}
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, 2, 4)
	eager := net.Forward(x).Float32s() // also infers the deferred shapes
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	for range 3 {
		same := slices.Equal(h.Forward(x).Float32s(), eager)
		fmt.Println("same as eager:", same)
	}
	fmt.Printf("%+v\n", h.Stats())
	// Output:
	// same as eager: true
	// same as eager: true
	// same as eager: true
	// {Traces:1 Replays:2 Eager:0 Graphs:1 Folded:0 FusedBackward:0 DeviceGraphLaunches:0}
}

// Fine-tuning with one Trainer, as in Gluon: a parameter whose GradReq is
// GradNull when Step runs is skipped, also one that was frozen when the
// Trainer was made, and is trained again once unfrozen.
func ExampleTrainer_freeze() {
	dev := ctx.CPU(0)
	net := nn.NewSequential(nn.NewDense(1, nn.DenseOpts{InUnits: 1, NoBias: true}), nn.NewDense(1, nn.DenseOpts{InUnits: 1, NoBias: true}))
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.One(), []ctx.Context{dev}, false)
	body, head := params.Get("dense0.weight"), params.Get("dense1.weight")
	body.SetGradReq(nd.GradNull) // train the head first
	trainer, _ := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})

	x, y := nd.FromSlice(dev, []float32{1}, 1, 1), nd.FromSlice(dev, []float32{3}, 1, 1)
	step := func() {
		autograd.Record(func() {
			autograd.Backward(nd.MulScalar(nd.Square(nd.Sub(net.Forward(x), y)), 0.5))
		})
		_ = trainer.Step(1)
		fmt.Printf("body %.2f head %.2f\n", body.Data(dev).Float32s(), head.Data(dev).Float32s())
	}
	step()
	body.SetGradReq(nd.GradWrite) // then fine-tune everything
	step()
	// Output:
	// body [1.00] head [1.20]
	// body [1.22] head [1.38]
}

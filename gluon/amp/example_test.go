package amp_test

import (
	"fmt"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// Mixed-precision training: float32 parameters, Dense layers computing in
// float16, the loss in float32, and a dynamic loss scale.
func Example() {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := nn.NewSequential(nn.NewDense(32, nn.DenseOpts{Act: "relu"}), nn.NewDense(3, nn.DenseOpts{}))
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		panic(err)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 10)
	y := nd.RandomInt(dev, nd.Int64, 0, 3, 64)

	off := amp.Init(nd.Float16) // the default session's ops autocast
	defer off()
	net.Forward(x) // infer the deferred shapes before making the Trainer
	tr, err := gluon.NewTrainer(gluon.CollectParams(net), optimizer.NewAdam(0.01), "local", gluon.TrainerOpts{})
	if err != nil {
		panic(err)
	}
	scaler := amp.NewLossScaler(amp.ScalerOpts{})
	if err := tr.SetGradScaler(scaler); err != nil {
		panic(err)
	}
	ce := loss.NewSoftmaxCrossEntropy()
	var first, last float64
	for i := range 50 {
		var l, scaled *nd.NDArray
		autograd.Record(func() {
			out := net.Forward(x)
			l = nd.Mean(ce.Forward(out, y))
			scaled = scaler.Scale(l)
			if i == 0 {
				fmt.Println("logits:", out.DType(), "loss:", l.DType())
			}
		})
		autograd.Backward(scaled)
		if err := tr.Step(1); err != nil { // the loss is a mean already
			panic(err)
		}
		if i == 0 {
			first = l.Float64s()[0]
		}
		last = l.Float64s()[0]
	}
	fmt.Println("loss fell:", last < first/2)
	fmt.Println("weights:", gluon.CollectParams(net).Get("dense0.weight").DType())
	// Output:
	// logits: float16 loss: float32
	// loss fell: true
	// weights: float32
}

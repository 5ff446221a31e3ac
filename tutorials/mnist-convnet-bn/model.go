package main

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
)

// Keras' BatchNormalization defaults. Gluon's momentum has the same meaning
// (running = momentum·running + (1−momentum)·batch); only the values differ
// from Gluon's defaults (0.9, 1e-5).
const (
	bnMomentum = 0.99
	bnEpsilon  = 1e-3
)

// newNet builds the notebook's ConvNet for 1×28×28 images:
//
//	Conv 32@3x3 relu → Conv 256@3x3 relu → BatchNorm → Conv 128@3x3 relu →
//	MaxPool 2 → Dropout .25 → Flatten → Dense 128 relu → Dropout .5 → Dense 10
//
// The last layer gives logits: the softmax of Keras' last Dense layer is
// folded into the softmax cross-entropy loss, which is the same function
// computed more stably. Input sizes are inferred at the first forward pass.
// With syncBN the BatchNorm layer is a SyncBatchNorm: the statistics of the
// whole batch over every context, whatever the number of contexts.
func newNet(syncBN bool) *nn.Sequential {
	bnOpts := nn.BatchNormOpts{Momentum: new(bnMomentum), Epsilon: new(bnEpsilon)}
	var bn gluon.Block = nn.NewBatchNorm(bnOpts)
	if syncBN {
		bn = nn.NewSyncBatchNorm(bnOpts)
	}
	return nn.NewSequential(
		nn.NewConv2D(32, 3, nn.Conv2DOpts{Act: "relu"}),  // 28×28 → 26×26
		nn.NewConv2D(256, 3, nn.Conv2DOpts{Act: "relu"}), // 26×26 → 24×24
		bn,
		nn.NewConv2D(128, 3, nn.Conv2DOpts{Act: "relu"}), // 24×24 → 22×22
		nn.NewMaxPool2D(2, nn.PoolOpts{}),                // 22×22 → 11×11
		nn.NewDropout(0.25),
		nn.NewFlatten(), // 128·11·11 = 15488
		nn.NewDense(128, nn.DenseOpts{Act: "relu"}),
		nn.NewDropout(0.5),
		nn.NewDense(10, nn.DenseOpts{}),
	)
}

// newOptimizer returns RMSprop with Keras' defaults for the given learning
// rate (Keras: 1e-3): rho 0.9 and ε = 1e-7 added after the square root, as
// tf.keras' RMSprop does without momentum: w -= lr·g/(sqrt(n) + ε).
func newOptimizer(lr float64) *optimizer.RMSProp {
	o := optimizer.NewRMSProp(lr)
	o.Gamma1 = 0.9 // Keras' rho
	o.Epsilon = 1e-7
	o.KerasEpsilon = true
	return o
}

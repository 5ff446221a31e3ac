package main

import (
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// newGenerator returns a DCGAN-style generator for 28×28 images: a latent
// vector through a dense layer to 128 maps of 7×7, then two transposed
// convolutions that double the side each time, the last with tanh (pixels
// in [−1, 1]).
func newGenerator(latent int) *nn.Sequential {
	return nn.NewSequential(
		nn.NewDense(128*7*7, nn.DenseOpts{InUnits: latent, Act: "relu"}),
		nn.NewLambda(func(x *nd.NDArray) *nd.NDArray { return nd.Reshape(x, -1, 128, 7, 7) }),
		nn.NewConv2DTranspose(64, 4, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, InChannels: 128}),
		nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 64}),
		nn.NewActivation("relu"),
		nn.NewConv2DTranspose(1, 4, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, InChannels: 64, Act: "tanh"}),
	)
}

// newCritic returns the critic: two strided convolutions with leaky ReLUs
// and a dense layer to one score per image. Like the WGAN-GP paper's, it
// has no batch normalisation, which would make each image's score (and
// so the per-image gradient penalty) depend on the rest of the batch.
func newCritic() *nn.Sequential {
	return nn.NewSequential(
		nn.NewConv2D(64, 4, nn.Conv2DOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, InChannels: 1}),
		nn.NewLeakyReLU(0.2),
		nn.NewConv2D(128, 4, nn.Conv2DOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, InChannels: 64}),
		nn.NewLeakyReLU(0.2),
		nn.NewFlatten(),
		nn.NewDense(1, nn.DenseOpts{InUnits: 128 * 7 * 7}),
	)
}

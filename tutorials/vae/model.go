package main

import (
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/probability"
	"github.com/goluon/goluon/nd"
)

// vae is the variational autoencoder of Kingma and Welling (PyTorch's
// examples/vae): an encoder from 784 pixels through a hidden layer to the
// mean and log-variance of a diagonal normal q(z|x) over the latent space,
// and a decoder from z back to 784 Bernoulli logits.
type vae struct {
	gluon.BlockMeta
	enc, mu, logVar, dec *nn.Sequential
}

func newVAE(hidden, latent int) *vae {
	v := &vae{BlockMeta: gluon.NewBlockMeta("vae")}
	v.enc = nn.NewSequential(nn.NewDense(hidden, nn.DenseOpts{InUnits: 784, Act: "relu"}))
	v.mu = nn.NewSequential(nn.NewDense(latent, nn.DenseOpts{InUnits: hidden}))
	v.logVar = nn.NewSequential(nn.NewDense(latent, nn.DenseOpts{InUnits: hidden}))
	v.dec = nn.NewSequential(nn.NewDense(hidden, nn.DenseOpts{InUnits: latent, Act: "relu"}),
		nn.NewDense(784, nn.DenseOpts{InUnits: hidden}))
	for _, c := range []gluon.Component{v.enc, v.mu, v.logVar, v.dec} {
		v.AddChild(c)
	}
	return v
}

// posterior returns q(z|x) for images x [N, 1, 28, 28] (or [N, 784]).
func (v *vae) posterior(x *nd.NDArray) probability.Normal {
	h := v.enc.Forward(nd.Reshape(x, x.Shape()[0], 784))
	return probability.NewNormal(v.mu.Forward(h), nd.Exp(nd.MulScalar(v.logVar.Forward(h), 0.5)))
}

// decode returns the pixels' Bernoulli logits [N, 784] for latents z.
func (v *vae) decode(z *nd.NDArray) *nd.NDArray { return v.dec.Forward(z) }

// Forward returns each image's negative evidence lower bound [N] (nats):
// the reconstruction's negative log-likelihood under the decoder's
// Bernoulli pixels for one reparameterised draw z ~ q(z|x), plus
// KL(q(z|x) ‖ N(0, I)).
func (v *vae) Forward(x *nd.NDArray) *nd.NDArray {
	q := v.posterior(x)
	logits := v.decode(q.RSample())
	pixels := nd.Reshape(x, x.Shape()[0], 784)
	rec := nd.Neg(nd.Sum(probability.NewBernoulli(logits).LogProb(pixels), 1))
	prior := probability.NewNormal(nd.ZerosLike(q.Loc), nd.OnesLike(q.Scale))
	return nd.Add(rec, nd.Sum(probability.KLNormal(q, prior), 1))
}

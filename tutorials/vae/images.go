package main

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// saveImages writes samples.png (64 images decoded from the prior, 8×8)
// and reconstructions.png (8 test images above their reconstructions from
// the posterior mean), on dev in predict mode.
func saveImages(net *vae, test data.Dataset, dev ctx.Context, latent int, path func(string) (string, error)) error {
	var pixels [][]float32 // the first test images, uint8 values 0–255
	for i := range min(8, test.Len()) {
		s, err := test.Get(i, nil)
		if err != nil {
			return fmt.Errorf("images: %w", err)
		}
		pixels = append(pixels, s.Data.Float32s())
	}
	var samples, pairs []float64
	err := nd.Catch(func() {
		sc := nd.NewScope()
		defer sc.Close()
		z := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, latent)
		samples = nd.Sigmoid(net.decode(z)).Float64s()
		if len(pixels) == 0 {
			return
		}
		var imgs []*nd.NDArray
		for _, v := range pixels {
			imgs = append(imgs, nd.FromSlice(dev, v, 1, len(v)))
		}
		x := nd.DivScalar(nd.Concat(imgs, 0), 255)
		recon := nd.Sigmoid(net.decode(net.posterior(x).Loc))
		pairs = append(x.Float64s(), recon.Float64s()...)
	})
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	for _, im := range []struct {
		name       string
		v          []float64
		rows, cols int
	}{{"samples.png", samples, 8, 8}, {"reconstructions.png", pairs, 2, len(pairs) / 784 / 2}} {
		if len(im.v) == 0 {
			continue
		}
		p, err := path(im.name)
		if err != nil {
			return err
		}
		if err := common.WriteGrid(p, im.v, im.rows, im.cols, 28); err != nil {
			return err
		}
	}
	return nil
}

// savePlot draws the train and test loss per epoch.
func savePlot(path string, hist []epochLoss) error {
	var tr, te []float64
	for _, e := range hist {
		tr, te = append(tr, e.Train), append(te, e.Test)
	}
	return common.EpochPlot(path, "VAE on Fashion-MNIST", "negative ELBO (nats per image)",
		common.Series{Label: "train", Values: tr}, common.Series{Label: "test", Values: te})
}

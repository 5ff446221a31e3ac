package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

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
	p := plot.New()
	p.Title.Text = "VAE on Fashion-MNIST"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "negative ELBO (nats per image)"
	p.Add(plotter.NewGrid())
	for i, s := range []struct {
		label string
		value func(epochLoss) float64
	}{{"train", func(e epochLoss) float64 { return e.Train }}, {"test", func(e epochLoss) float64 { return e.Test }}} {
		xys := make(plotter.XYs, len(hist))
		for j, e := range hist {
			xys[j] = plotter.XY{X: float64(j + 1), Y: s.value(e)}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.label, line)
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

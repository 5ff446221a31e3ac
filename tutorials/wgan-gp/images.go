package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// saveSamples writes samples.png: the generator's images (predict mode,
// running statistics) for the 64 latents z, 8×8.
func saveSamples(gen *nn.Sequential, z *nd.NDArray, path func(string) (string, error)) error {
	var v []float64
	err := nd.Catch(func() {
		sc := nd.NewScope()
		defer sc.Close()
		autograd.PredictMode(func() {
			v = nd.MulScalar(nd.AddScalar(gen.Forward(z), 1), 0.5).Float64s() // [−1, 1] to [0, 1]
		})
	})
	if err != nil {
		return fmt.Errorf("samples: %w", err)
	}
	p, err := path("samples.png")
	if err != nil {
		return err
	}
	return common.WriteGrid(p, v, 8, 8, 28)
}

// savePlot draws the critic's Wasserstein estimate and the penalty per
// epoch.
func savePlot(path string, hist []epochStats) error {
	p := plot.New()
	p.Title.Text = "WGAN-GP on Fashion-MNIST"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "per image"
	p.Add(plotter.NewGrid())
	for i, s := range []struct {
		label string
		value func(epochStats) float64
	}{
		{"Wasserstein estimate", func(e epochStats) float64 { return e.Wasserstein }},
		{"gradient penalty", func(e epochStats) float64 { return e.Penalty }},
	} {
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

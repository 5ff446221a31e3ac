package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// savePlot draws the loss curve: every step's training-batch loss (thin,
// light) and the train and validation estimates at each evaluation (lines
// with points), against the step; the extension of path picks the format.
func savePlot(path string, c *config, hist []evalPoint, stepLoss []float64) error {
	if len(hist) == 0 {
		return fmt.Errorf("plot: no evaluations")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("char-lm: %s, %d steps of %d×%d bytes", c.Model, c.Steps, c.Batch, c.Context)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "cross-entropy (nats per byte)"
	p.Add(plotter.NewGrid())

	steps := make(plotter.XYs, len(stepLoss))
	for i, l := range stepLoss {
		steps[i] = plotter.XY{X: float64(i + 1), Y: l}
	}
	if len(steps) > 0 {
		line, err := plotter.NewLine(steps)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		line.Color = color.RGBA{R: 160, G: 160, B: 200, A: 255}
		line.Width = vg.Points(0.5)
		p.Add(line)
		p.Legend.Add("batch loss", line)
	}
	for i, s := range []struct {
		label string
		value func(evalPoint) float64
	}{
		{"train loss", func(e evalPoint) float64 { return e.Train }},
		{"val loss", func(e evalPoint) float64 { return e.Val }},
	} {
		xys := make(plotter.XYs, len(hist))
		for j, e := range hist {
			xys[j] = plotter.XY{X: float64(e.Step), Y: s.value(e)}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot: %s: %w", s.label, err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(2)
		p.Add(line, points)
		p.Legend.Add(s.label, line, points)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

package main

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// curve is one phase's history, drawn as one line of the plot.
type curve struct {
	label string
	hist  []epochResult
}

// savePlot draws the test accuracy after every epoch of each curve
// against the epoch, and writes the figure to path (the extension picks
// the format: .png, .svg, .pdf).
func savePlot(path, title string, curves []curve) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "test accuracy"
	p.Add(plotter.NewGrid())
	lo, epochs := 1.0, 0
	for i, c := range curves {
		if len(c.hist) == 0 {
			return fmt.Errorf("plot: %s: no epochs", c.label)
		}
		xys := make(plotter.XYs, len(c.hist))
		for j, r := range c.hist {
			xys[j] = plotter.XY{X: float64(r.Epoch), Y: r.ValAcc}
			lo = math.Min(lo, r.ValAcc)
			epochs = max(epochs, r.Epoch)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot: %s: %w", c.label, err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(2.5)
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("%s: %.2f%%", c.label, 100*c.hist[len(c.hist)-1].ValAcc), line, points)
	}
	p.Legend.Top = false // bottom right, below the curves
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	p.X.Min, p.X.Max = 0.5, float64(epochs)+0.5
	p.X.Tick.Marker = epochTicks{}
	// Room below the lowest point for the legend.
	p.Y.Min = math.Max(0, math.Floor((lo-0.1*(1-lo)-0.05)*20)/20)
	p.Y.Max = 1
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// epochTicks marks whole epochs, at most about ten of them.
type epochTicks struct{}

// Ticks returns the ticks between min and max.
func (epochTicks) Ticks(min, max float64) []plot.Tick {
	step := int(math.Ceil((max - min) / 10))
	step = int(math.Max(1, float64(step)))
	var ticks []plot.Tick
	for e := int(math.Ceil(min)); float64(e) <= max; e += step {
		ticks = append(ticks, plot.Tick{Value: float64(e), Label: fmt.Sprint(e)})
	}
	return ticks
}

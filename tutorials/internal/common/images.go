package common

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/goluon/goluon/internal/atomicfile"
)

// WriteGrid writes rows×cols square grey images of side×side pixels with
// values in [0, 1] (v holds them one after another, row-major) as a PNG
// grid with a pixel's gap between them, atomically.
func WriteGrid(path string, v []float64, rows, cols, side int) error {
	const gap = 1
	if rows < 0 || cols < 0 || side <= 0 || len(v) < rows*cols*side*side {
		return fmt.Errorf("grid %s: %d values for %d×%d images of %d×%d pixels", path, len(v), rows, cols, side, side)
	}
	img := image.NewGray(image.Rect(0, 0, cols*(side+gap)+gap, rows*(side+gap)+gap))
	for k := range rows * cols {
		r, c := k/cols, k%cols
		for y := range side {
			for x := range side {
				p := v[k*side*side+y*side+x]
				img.SetGray(gap+c*(side+gap)+x, gap+r*(side+gap)+y, color.Gray{Y: uint8(math.Round(255 * min(max(p, 0), 1)))})
			}
		}
	}
	return atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, img) })
}

// Series is one named curve of EpochPlot: a value per epoch, the first
// for epoch 1.
type Series struct {
	Label  string
	Values []float64
}

// EpochPlot draws each series against the epoch, one colour per series
// with its points marked, and writes the figure to path (the extension
// picks the format: .png, .svg, .pdf).
func EpochPlot(path, title, yLabel string, series ...Series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = yLabel
	p.Add(plotter.NewGrid())
	for i, s := range series {
		xys := make(plotter.XYs, len(s.Values))
		for j, v := range s.Values {
			xys[j] = plotter.XY{X: float64(j + 1), Y: v}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("plot: %s: %w", s.Label, err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = draw.CircleGlyph{}
		p.Add(line, points)
		p.Legend.Add(s.Label, line)
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

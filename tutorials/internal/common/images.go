package common

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

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

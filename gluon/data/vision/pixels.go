package vision

import (
	"image"
	"image/color"

	"github.com/goluon/goluon/gluon/data"
)

// pixels returns img as an HWC uint8 tensor of 3 channels (RGB, alpha
// dropped from the non-premultiplied values, as PIL's convert("RGB") drops
// it) or of 1 (luma). The decoders' usual image types are read directly;
// others through rgbOf.
func pixels(img image.Image, gray bool) data.Tensor {
	r := img.Bounds()
	h, w := r.Dy(), r.Dx()
	c := 3
	if gray {
		c = 1
	}
	out := make([]uint8, h*w*c)
	put := func(i int, p [3]uint8) { // pixel i, in row-major order
		if gray {
			out[i] = lumaRGB(p[0], p[1], p[2])
			return
		}
		out[3*i], out[3*i+1], out[3*i+2] = p[0], p[1], p[2]
	}
	i := 0
	each := func(f func(x, y int)) {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				f(x, y)
				i++
			}
		}
	}
	switch m := img.(type) {
	case *image.YCbCr:
		each(func(x, y int) {
			ci := m.COffset(x, y)
			cr, cg, cb := color.YCbCrToRGB(m.Y[m.YOffset(x, y)], m.Cb[ci], m.Cr[ci])
			put(i, [3]uint8{cr, cg, cb})
		})
	case *image.Gray:
		each(func(x, y int) {
			v := m.Pix[m.PixOffset(x, y)]
			put(i, [3]uint8{v, v, v})
		})
	case *image.NRGBA:
		each(func(x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			put(i, [3]uint8{p[0], p[1], p[2]})
		})
	case *image.RGBA: // opaque truecolour PNGs
		each(func(x, y int) {
			p := m.Pix[m.PixOffset(x, y):]
			if p[3] == 0xff {
				put(i, [3]uint8{p[0], p[1], p[2]})
				return
			}
			put(i, rgbOf(color.RGBA{p[0], p[1], p[2], p[3]}))
		})
	case *image.Paletted:
		pal := make([][3]uint8, len(m.Palette))
		for k, col := range m.Palette {
			pal[k] = rgbOf(col)
		}
		each(func(x, y int) {
			var p [3]uint8
			if k := int(m.Pix[m.PixOffset(x, y)]); k < len(pal) {
				p = pal[k]
			}
			put(i, p)
		})
	default:
		each(func(x, y int) { put(i, rgbOf(img.At(x, y))) })
	}
	return data.Tensor{Shape: []int{h, w, c}, U8: out}
}

// rgbOf returns a colour's 8-bit red, green and blue without alpha: a
// non-premultiplied colour's own channels (PIL drops alpha the same way),
// the high bytes of 16-bit ones, and premultiplied colours divided by
// their alpha.
func rgbOf(c color.Color) [3]uint8 {
	switch p := c.(type) {
	case color.NRGBA:
		return [3]uint8{p.R, p.G, p.B}
	case color.NRGBA64:
		return [3]uint8{uint8(p.R >> 8), uint8(p.G >> 8), uint8(p.B >> 8)}
	case color.Gray:
		return [3]uint8{p.Y, p.Y, p.Y}
	case color.Gray16:
		y := uint8(p.Y >> 8)
		return [3]uint8{y, y, y}
	case color.RGBA64:
		if p.A == 0xffff {
			return [3]uint8{uint8(p.R >> 8), uint8(p.G >> 8), uint8(p.B >> 8)}
		}
	}
	q := color.NRGBAModel.Convert(c).(color.NRGBA)
	return [3]uint8{q.R, q.G, q.B}
}

// lumaRGB is PIL's convert("L") of one RGB pixel (ITU-R 601-2 luma in
// 16-bit fixed point, rounded).
func lumaRGB(r, g, b uint8) uint8 {
	return uint8((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16)
}

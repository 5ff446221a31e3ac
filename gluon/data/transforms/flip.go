package transforms

import (
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// RandomFlipLeftRight returns Gluon's RandomFlipLeftRight with a flip
// probability: it draws one rng.Float64() per call and mirrors the image
// left to right when the draw is below p. Gluon's transform, and Keras's
// horizontal_flip, flip with probability 0.5, so pass 0.5 for their
// behaviour. It works on HWC/HW uint8 and CHW/HW float32 images (see the
// package documentation on layout); an image left unflipped is returned
// as is. A p outside [0, 1] is an argument error.
func RandomFlipLeftRight(p float64) data.Transform {
	const op = "RandomFlipLeftRight"
	if !(p >= 0 && p <= 1) {
		return argError(op, "probability %v is outside [0, 1]", p)
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if rng.Float64() >= p {
			return x, nil
		}
		return flipLR(x, g), nil
	}
}

// FlipLeftRight returns a transform that always mirrors the image left to
// right, on the same layouts as RandomFlipLeftRight.
func FlipLeftRight() data.Transform {
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		g, err := geometry("FlipLeftRight", x)
		if err != nil {
			return data.Tensor{}, err
		}
		return flipLR(x, g), nil
	}
}

// flipLR mirrors every row of x into a new tensor.
func flipLR(x data.Tensor, g geom) data.Tensor {
	planes, pix := g.planes()
	rows := planes * g.h
	if x.U8 != nil {
		dst := make([]uint8, len(x.U8))
		mirror(dst, x.U8, rows, g.w, pix)
		return data.Tensor{Shape: x.Shape, U8: dst}
	}
	dst := make([]float32, len(x.F32))
	mirror(dst, x.F32, rows, g.w, pix)
	return data.Tensor{Shape: x.Shape, F32: dst}
}

// mirror writes src's rows (w pixels of c values each) reversed into dst.
func mirror[T uint8 | float32](dst, src []T, rows, w, c int) {
	n := w * c
	for r := range rows {
		d, s := dst[r*n:(r+1)*n], src[r*n:(r+1)*n]
		switch c {
		case 1:
			for i, j := 0, len(d)-1; i < len(s) && j >= 0; i, j = i+1, j-1 {
				d[j] = s[i]
			}
		case 3:
			for j := len(d) - 3; j >= 0 && len(s) >= 3; j -= 3 {
				dj := d[j : j+3 : j+3]
				dj[0], dj[1], dj[2] = s[0], s[1], s[2]
				s = s[3:]
			}
		default:
			for i := 0; i < n; i += c {
				copy(d[n-c-i:n-i], s[i:i+c])
			}
		}
	}
}

// RandomFlipTopBottom returns Gluon's RandomFlipTopBottom with a flip
// probability (torchvision's RandomVerticalFlip(p)): it draws one
// rng.Float64() per call and mirrors the image top to bottom when the draw
// is below p. Layouts and the unflipped case are as RandomFlipLeftRight's;
// a p outside [0, 1] is an argument error.
func RandomFlipTopBottom(p float64) data.Transform {
	const op = "RandomFlipTopBottom"
	if !(p >= 0 && p <= 1) {
		return argError(op, "probability %v is outside [0, 1]", p)
	}
	return func(x data.Tensor, rng *rand.Rand) (data.Tensor, error) {
		if err := needRNG(op, rng); err != nil {
			return data.Tensor{}, err
		}
		g, err := geometry(op, x)
		if err != nil {
			return data.Tensor{}, err
		}
		if rng.Float64() >= p {
			return x, nil
		}
		return flipTB(x, g), nil
	}
}

// flipTB reverses the order of the rows of every plane of x into a new
// tensor.
func flipTB(x data.Tensor, g geom) data.Tensor {
	planes, pix := g.planes()
	if x.U8 != nil {
		dst := make([]uint8, len(x.U8))
		upend(dst, x.U8, planes, g.h, g.w*pix)
		return data.Tensor{Shape: x.Shape, U8: dst}
	}
	dst := make([]float32, len(x.F32))
	upend(dst, x.F32, planes, g.h, g.w*pix)
	return data.Tensor{Shape: x.Shape, F32: dst}
}

// upend copies each of planes planes of h rows of n values from src to
// dst with its rows in reverse order.
func upend[T uint8 | float32](dst, src []T, planes, h, n int) {
	for p := range planes {
		d, s := dst[p*h*n:(p+1)*h*n], src[p*h*n:(p+1)*h*n]
		for r := range h {
			copy(d[(h-1-r)*n:(h-r)*n], s[r*n:(r+1)*n])
		}
	}
}

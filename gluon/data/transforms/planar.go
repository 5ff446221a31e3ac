package transforms

import (
	"math"

	"github.com/goluon/goluon/gluon/data"
)

// planar is an image held as float32 planes, one per channel, whatever its
// element type and layout: the colour, rotation and blur transforms
// compute on it in float32, as torchvision computes on tensors, and
// convert back at the end. u8 records that the image was uint8 (values
// 0–255, HWC or HW), and so must be quantized back. buf, when set, is the
// CHW concatenation of planes the transform allocated itself (like), which
// a float32 result can use without a copy.
type planar struct {
	g   geom
	u8  bool
	p   [][]float32
	buf []float32
}

// newPlanes returns c planes of n values, backed by one allocation in
// channel order, so that buf is their CHW concatenation.
func newPlanes(c, n int) (buf []float32, p [][]float32) {
	buf = make([]float32, c*n)
	p = make([][]float32, c)
	for k := range p {
		p[k] = buf[k*n : (k+1)*n : (k+1)*n]
	}
	return buf, p
}

// toPlanar reads x (geometry g). The planes of a float32 image alias x's
// values, so they must only be read.
func toPlanar(x data.Tensor, g geom) planar {
	n := g.h * g.w
	if x.U8 == nil {
		p := make([][]float32, g.c)
		for k := range p {
			p[k] = x.F32[k*n : (k+1)*n : (k+1)*n]
		}
		return planar{g: g, p: p}
	}
	_, p := newPlanes(g.c, n)
	src := x.U8[:n*g.c]
	for k, pl := range p {
		for i := range pl {
			pl[i] = raw[src[i*g.c+k]]
		}
	}
	return planar{g: g, u8: true, p: p}
}

// like returns a planar of the same geometry and element type with new
// planes of n values each (c of them).
func (im planar) like(c, n int) planar {
	buf, p := newPlanes(c, n)
	return planar{g: im.g, u8: im.u8, p: p, buf: buf}
}

// quantize maps a float32 value to uint8 as a cast of a float tensor to
// torch.uint8 does after the op's clamp: truncation toward zero (round
// false, as torchvision's colour adjustments convert), or after rounding
// half to even (round true, as its geometric ops and blur round before
// casting). Values outside [0, 255], which torch would wrap, are clamped,
// and NaN becomes 0.
func quantize(v float32, round bool) uint8 {
	if !(v > 0) {
		return 0
	}
	if round {
		v = float32(math.RoundToEven(float64(v)))
	}
	return uint8(min(v, 255))
}

// tensor returns the image as a Tensor of its element type and layout with
// h rows and w columns (the planes' size); uint8 values are quantized by
// quantize(v, round). The shape keeps the input's rank: a rank-2 image
// stays HW when it still has one channel.
func (im planar) tensor(h, w int, round bool) data.Tensor {
	c := len(im.p)
	g := im.g
	g.c = c
	g.rank2 = g.rank2 && c == 1
	shape := g.shape(h, w)
	n := h * w
	if !im.u8 {
		if im.buf != nil {
			return data.Tensor{Shape: shape, F32: im.buf}
		}
		buf := make([]float32, 0, c*n)
		for _, pl := range im.p {
			buf = append(buf, pl...)
		}
		return data.Tensor{Shape: shape, F32: buf}
	}
	out := make([]uint8, c*n)
	for k, pl := range im.p {
		for i, v := range pl {
			out[i*c+k] = quantize(v, round)
		}
	}
	return data.Tensor{Shape: shape, U8: out}
}

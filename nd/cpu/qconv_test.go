package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeNHWCU8: every byte is quantizeU8Go's of its value, at its
// NHWC place, for channel and pixel counts that leave tails of the
// 64-pixel blocks, of the AVX-512 kernel's 16×16 tiles and of the AVX2
// kernel's 32 values, row strides above c (the bytes beyond c
// untouched), and an input large enough for several cores.
func TestQuantizeNHWCU8(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	cases := []struct{ n, c, hw, ld int }{
		{1, 1, 1, 1}, {1, 3, 31, 3}, {2, 3, 33, 4}, {1, 5, 64, 8}, {3, 16, 65, 16},
		{1, 64, 100, 64}, {2, 7, 129, 9}, {1, 1, 200, 4}, {2, 20, 50, 24}, {1, 33, 47, 40},
		{4, 64, 56 * 56, 64},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%dx%d/ld%d", c.n, c.c, c.hw, c.ld), func(t *testing.T) {
			inv, zero := float32(7.3), int32(r.IntN(128))
			x := qInputs(r, c.n*c.c*c.hw, inv, true)
			got := make([]uint8, c.n*c.hw*c.ld)
			for i := range got {
				got[i] = 0xAB
			}
			QuantizeNHWCU8(got, c.ld, x, c.n, c.c, c.hw, inv, zero)
			var one [1]uint8
			for i := range c.n {
				for p := range c.hw {
					for ch := range c.ld {
						g := got[(i*c.hw+p)*c.ld+ch]
						if ch >= c.c {
							if g != 0xAB {
								t.Fatalf("padding byte %d of pixel %d overwritten", ch, p)
							}
							continue
						}
						quantizeU8Go(one[:], x[(i*c.c+ch)*c.hw+p:][:1], inv, zero)
						if g != one[0] {
							t.Fatalf("image %d pixel %d channel %d: %d, want %d", i, p, ch, g, one[0])
						}
					}
				}
			}
		})
	}
}

// refIm2Row is Im2RowU8 by its definition, one byte at a time.
func refIm2Row(x []uint8, ldx int, g Im2RowGeom, c0, cg int, zero uint8, lda int) []uint8 {
	rows := g.N * g.OutH * g.OutW
	out := make([]uint8, rows*lda)
	for i := range g.N {
		for oh := range g.OutH {
			for ow := range g.OutW {
				row := out[((i*g.OutH+oh)*g.OutW+ow)*lda:]
				for kh := range g.KH {
					for kw := range g.KW {
						ih := oh*g.StrideH - g.PadH + kh*g.DilateH
						iw := ow*g.StrideW - g.PadW + kw*g.DilateW
						for c := range cg {
							v := zero
							if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
								v = x[((i*g.H+ih)*g.W+iw)*ldx+c0+c]
							}
							row[(kh*g.KW+kw)*cg+c] = v
						}
					}
				}
			}
		}
	}
	return out
}

// geom fills in a geometry's output size.
func geom(g Im2RowGeom) Im2RowGeom {
	g.OutH = (g.H+2*g.PadH-g.DilateH*(g.KH-1)-1)/g.StrideH + 1
	g.OutW = (g.W+2*g.PadW-g.DilateW*(g.KW-1)-1)/g.StrideW + 1
	return g
}

// im2rowCases are convolutions of every kind Im2RowU8 distinguishes:
// whole-row copies (one group, dilation 1) with and without padding and
// stride, taps one at a time (groups, dilation, strided rows), kernels
// wider than the input with padding, and a ResNet stem.
var im2rowCases = []struct {
	name   string
	g      Im2RowGeom
	groups int
	ldx    int // 0: C
}{
	{"1x1", Im2RowGeom{N: 2, H: 5, W: 6, C: 8, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilateH: 1, DilateW: 1}, 1, 0},
	{"3x3-pad1", Im2RowGeom{N: 2, H: 7, W: 9, C: 5, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1}, 1, 0},
	{"3x3-stride2", Im2RowGeom{N: 1, H: 8, W: 9, C: 4, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1}, 1, 0},
	{"5x3-rect-pad", Im2RowGeom{N: 1, H: 6, W: 7, C: 3, KH: 5, KW: 3, StrideH: 1, StrideW: 2, PadH: 2, PadW: 0, DilateH: 1, DilateW: 1}, 1, 0},
	{"dilated", Im2RowGeom{N: 2, H: 9, W: 8, C: 6, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 2, PadW: 2, DilateH: 2, DilateW: 2}, 1, 0},
	{"groups2", Im2RowGeom{N: 2, H: 6, W: 6, C: 8, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1}, 2, 0},
	{"depthwise-s2", Im2RowGeom{N: 1, H: 7, W: 7, C: 6, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1}, 6, 0},
	{"kernel>input", Im2RowGeom{N: 1, H: 2, W: 3, C: 2, KH: 5, KW: 5, StrideH: 1, StrideW: 1, PadH: 2, PadW: 2, DilateH: 1, DilateW: 1}, 1, 0},
	{"ldx>C", Im2RowGeom{N: 2, H: 4, W: 5, C: 3, KH: 3, KW: 2, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1}, 1, 4},
	{"stem7x7", Im2RowGeom{N: 1, H: 32, W: 32, C: 3, KH: 7, KW: 7, StrideH: 2, StrideW: 2, PadH: 3, PadW: 3, DilateH: 1, DilateW: 1}, 1, 0},
	{"big", Im2RowGeom{N: 2, H: 28, W: 28, C: 64, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1}, 1, 0},
}

// TestIm2RowU8: the rows are the definition's, byte for byte, for every
// group of every case, with rows padded to a multiple of 4 (the padding
// zeroed) and zero points 0 and not.
func TestIm2RowU8(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, c := range im2rowCases {
		g := geom(c.g)
		ldx := c.ldx
		if ldx == 0 {
			ldx = g.C
		}
		x := randU8(r, g.N*g.H*g.W*ldx, 255)
		cg := g.C / c.groups
		k := g.KH * g.KW * cg
		lda := (k + 3) &^ 3
		for _, zero := range []uint8{0, 77} {
			for grp := range c.groups {
				want := refIm2Row(x, ldx, g, grp*cg, cg, zero, lda)
				got := make([]uint8, len(want))
				for i := range got {
					got[i] = 0xCD
				}
				Im2RowU8(got, lda, x, ldx, g, grp*cg, cg, zero)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s zero %d group %d: byte %d (row %d, col %d) = %d, want %d", c.name, zero, grp, i, i/lda, i%lda, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestQConvSums: Im2RowU8 rows times weights packed in [out][kh][kw][in]
// order (GemmU8S8) give a direct convolution's exact int32 sums, on the
// kernel the active level picks, for every group of every case.
func TestQConvSums(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, c := range im2rowCases {
		g := geom(c.g)
		ldx := c.ldx
		if ldx == 0 {
			ldx = g.C
		}
		x := randU8(r, g.N*g.H*g.W*ldx, 255)
		cg := g.C / c.groups
		ocg := 5
		k := g.KH * g.KW * cg
		lda := (k + 3) &^ 3
		for grp := range c.groups {
			// OIHW weights of this group, and their [o][kh][kw][in] order.
			w := randS8(r, ocg*cg*g.KH*g.KW)
			wp := make([]int8, len(w))
			for o := range ocg {
				for ci := range cg {
					for kh := range g.KH {
						for kw := range g.KW {
							wp[o*k+(kh*g.KW+kw)*cg+ci] = w[((o*cg+ci)*g.KH+kh)*g.KW+kw]
						}
					}
				}
			}
			a := make([]uint8, g.N*g.OutH*g.OutW*lda)
			Im2RowU8(a, lda, x, ldx, g, grp*cg, cg, 0)
			rows := g.N * g.OutH * g.OutW
			got := make([]int32, rows*ocg)
			GemmU8S8(rows, a, lda, PackInt8(wp, ocg, k), got, ocg)
			for i := range g.N {
				for oh := range g.OutH {
					for ow := range g.OutW {
						for o := range ocg {
							var s int32
							for ci := range cg {
								for kh := range g.KH {
									for kw := range g.KW {
										ih := oh*g.StrideH - g.PadH + kh*g.DilateH
										iw := ow*g.StrideW - g.PadW + kw*g.DilateW
										if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
											continue
										}
										s += int32(x[((i*g.H+ih)*g.W+iw)*ldx+grp*cg+ci]) * int32(w[((o*cg+ci)*g.KH+kh)*g.KW+kw])
									}
								}
							}
							if v := got[((i*g.OutH+oh)*g.OutW+ow)*ocg+o]; v != s {
								t.Fatalf("%s group %d: image %d pixel (%d, %d) out %d: %d, want %d", c.name, grp, i, oh, ow, o, v, s)
							}
						}
					}
				}
			}
		}
	}
}

// TestNHWCToNCHWF32: the transpose, with and without ReLU (−0 to +0, NaN
// kept), for sizes around the 16×16 tiles and strides above c.
func TestNHWCToNCHWF32(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, c := range []struct{ n, hw, c, ld int }{
		{1, 1, 1, 1}, {2, 15, 17, 17}, {1, 16, 16, 20}, {3, 33, 5, 8}, {2, 49, 64, 64}, {2, 3136, 64, 64},
	} {
		src := randF32(r, c.n*c.hw*c.ld)
		src[0] = float32(math.Copysign(0, -1))
		if len(src) > 1 {
			src[1] = float32(math.NaN())
		}
		for _, relu := range []bool{false, true} {
			dst := make([]float32, c.n*c.c*c.hw)
			NHWCToNCHWF32(dst, src, c.ld, c.n, c.hw, c.c, relu)
			for i := range c.n {
				for p := range c.hw {
					for ch := range c.c {
						want := src[(i*c.hw+p)*c.ld+ch]
						if relu {
							want = max(want, 0)
						}
						got := dst[(i*c.c+ch)*c.hw+p]
						if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
							t.Fatalf("%+v relu %v: image %d pixel %d channel %d: %v, want %v", c, relu, i, p, ch, got, want)
						}
					}
				}
			}
		}
	}
}

// TestQConvBadInput: bad geometries and short slices panic.
func TestQConvBadInput(t *testing.T) {
	g := geom(Im2RowGeom{N: 1, H: 4, W: 4, C: 2, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilateH: 1, DilateW: 1})
	bad := g
	bad.OutW++
	x := make([]uint8, 32)
	for name, f := range map[string]func(){
		"out size":       func() { Im2RowU8(make([]uint8, 100), 20, x, 2, bad, 0, 2, 0) },
		"channels":       func() { Im2RowU8(make([]uint8, 100), 20, x, 2, g, 1, 2, 0) },
		"short dst":      func() { Im2RowU8(make([]uint8, 10), 20, x, 2, g, 0, 2, 0) },
		"lda":            func() { Im2RowU8(make([]uint8, 100), 17, x, 2, g, 0, 2, 0) },
		"quantize ld":    func() { QuantizeNHWCU8(make([]uint8, 32), 1, make([]float32, 32), 1, 2, 16, 1, 0) },
		"quantize zero":  func() { QuantizeNHWCU8(make([]uint8, 32), 2, make([]float32, 32), 1, 2, 16, 1, 256) },
		"transpose src":  func() { NHWCToNCHWF32(make([]float32, 32), make([]float32, 31), 2, 1, 16, 2, false) },
		"transpose size": func() { NHWCToNCHWF32(make([]float32, 31), make([]float32, 32), 2, 1, 16, 2, false) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

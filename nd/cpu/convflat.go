package cpu

import "github.com/goluon/goluon/nd/backend"

// The flat forward convolution (AVX-512), for layers with few filters on
// planes whose rows do not fill the direct kernel's tiles: LeNet's first
// layer (6 filters, 5×5 taps, 24×24 outputs). The direct kernel computes
// a wide grid (rows as wide as the padded input: 24 of 28 columns kept),
// so about 86% of its FMAs count (with its 6-channel tiles). Here
// each image's input is laid out by (channel, kernel column) as for the
// flat filter gradient (convfilterf.go): tap (c, kh, kw) reads the flat
// output plane shifted by kh·OutW, so 48 consecutive positions fill three
// vectors wherever rows break, and the kernel takes filters six at a
// time. The sums run over the taps in the same order for every position;
// the epilogue (bias, ReLU) is the direct path's, per image.

// useFlatConvOn lets tests and benchmarks turn the flat form off.
var useFlatConvOn = true

// flatConvFilters is how many filters one kernel call takes.
const flatConvFilters = 6

// flatConvMaxPlanes bounds the planes an image's input is laid out into
// (channels × kernel columns): LeNet's second layer's input gradient as a
// flat convolution (16 channels, 3 columns: 48 planes, and a padded copy
// first) ran at 0.87× the direct kernel although it takes 0.56 of its
// FMAs; the copies took as long as the kernel (CPU profile).
const flatConvMaxPlanes = 16

// useFlatConv reports whether flatConv computes s's forward pass
// (useDirectConv has accepted it): float32 on AVX-512, stride 1, no
// dilation, at most flatConvMaxPlanes laid-out planes and an image's
// operands within flatMaxImageBytes, and at most 0.9 of the direct
// kernel's vector FMAs (wide grid and its 8- and 6-channel tiles
// included). LeNet's first layer takes 0.86 of them (batch 128: flat
// 58–61µs, direct 67–68; BenchmarkConv); its second (1.27) and the CIFAR
// CNN's first (1.09) stay direct.
func useFlatConv(s convShape) bool {
	if !useFlatConvOn || !useZMMKernel || s.DType != backend.Float32 || s.Groups != 1 || s.StrideH != 1 || s.StrideW != 1 ||
		s.DilateH > 1 || s.DilateW > 1 || s.N == 0 || s.ohw == 0 || s.InC*s.KW > flatConvMaxPlanes {
		return false
	}
	inW := s.InW + 2*s.PadW
	if s.OutH+s.KH-1 != s.InH+2*s.PadH || s.OutW+s.KW-1 != inW || !flatFits(s, flatConvFilters) {
		return false
	}
	flat := ceilDiv(s.OutC, flatConvFilters) * flatConvFilters * s.kk * ceilDiv(s.ohw, 48) * 48
	rows := ceilDiv(s.OutC, 8) * 8 // tilesZ's channels
	if r := s.OutC % 8; r == 5 || r == 6 {
		rows -= 2
	}
	direct := rows * s.kk * ceilDiv(s.OutH*inW, 16) * 16
	return 10*flat <= 9*direct
}

// flatConv writes y = the convolution of x with w (s: useFlatConv), then
// e on each image.
func flatConv(s convShape, y, x, w []float32, e epilogue[float32]) {
	s, x, done := zeroBordered(s, x)
	defer done()
	outImg := s.OutC * s.ohw
	l := newFlatLayout(s)
	fgs := ceilDiv(s.OutC, flatConvFilters)
	// Each tap's first input in the layout (bytes), and the weights as
	// wp[group][tap][6], a short last group padded with zeros.
	toffs := make([]int64, s.kk)
	for t := range toffs {
		toffs[t] = l.tap(t)
	}
	wp := scratch[float32](fgs * s.kk * flatConvFilters)
	defer release(wp)
	clear(wp)
	for f := range s.OutC {
		g, j := f/flatConvFilters, f%flatConvFilters
		for t := range s.kk {
			wp[(g*s.kk+t)*flatConvFilters+j] = w[f*s.kk+t]
		}
	}
	triples, rest := s.ohw/48, s.ohw%48
	tail := uint64(1)<<rest - 1
	parallelFor(s.N, 1, func(lo, hi int) {
		// 48 spare values: the masked last group never reads them, but
		// a vector past the plane's end stays inside the buffer.
		xs := scratch[float32](l.image + 48)
		defer release(xs)
		var dump []float32 // the outputs of a short last group's spare filters
		if s.OutC%flatConvFilters != 0 {
			dump = scratch[float32](s.ohw)
			defer release(dump)
		}
		var ptrs [flatConvFilters]*float32
		for n := lo; n < hi; n++ {
			l.layOut(xs, x, n)
			yn := y[n*outImg : (n+1)*outImg]
			for g := range fgs {
				for j := range ptrs {
					if f := g*flatConvFilters + j; f < s.OutC {
						ptrs[j] = &yn[f*s.ohw]
					} else {
						ptrs[j] = &dump[0]
					}
				}
				convFlatF32x512(&ptrs, &xs[0], &wp[g*s.kk*flatConvFilters], &toffs[0], s.kk, triples, tail)
			}
			e.image(yn, s.OutC, s.ohw)
		}
	})
}

package cpu

// The direct filter gradient over whole planes (AVX-512), for layers with
// few filters on rows that do not fill vectors: LeNet's first layer (6
// filters, rows of 24 outputs, 25 taps). directFilter puts 16 positions of
// a row in a vector, so a row of 24 takes a full and a half-empty vector,
// and it takes taps eight at a time (25 take 32 slots), re-reading the
// input for every pair of filters. Here each image's input is first laid
// out again, once per input channel and kernel column kw, as the plane
// xs[c][kw][h][ow] = x[c][h][ow+kw] (InH rows of OutW): tap (c, kh, kw)
// then meets the output position p = oh·OutW+ow at xs[c][kw][p + kh·OutW],
// a shift of the flat plane, so 16 consecutive positions of the plane fill
// a vector wherever the rows break (only the plane's last vector is
// masked). The kernel keeps six filters' sums for four taps (24
// accumulators) and loads each vector of the output gradient once per
// four taps; it runs image by image over the filter and tap groups, so
// that an image's operands are read from L1 (a block of images at a time
// was bound by the L2's bandwidth, 1.7× slower). The images are summed in
// flatUnits fixed ranges, added in order at the end, so the result does
// not depend on how the ranges are split over the cores.

// useFlatFilterOn lets tests and benchmarks turn the flat form off.
var useFlatFilterOn = true

// flatUnits is the most ranges of images flatFilter sums separately, and
// flatImages the fewest images a range holds (each range's accumulators
// are added at the end): fixed, so that the partial sums, and their
// order, do not depend on the cores.
const (
	flatUnits  = 16
	flatImages = 4
)

// Filters and taps one call of the kernel takes.
const (
	flatFilters = 6
	flatTaps    = 4
)

// flatMaxImageBytes bounds what one kernel call reads per image: the
// laid-out input and six planes of output gradient. The shapes measured
// (LeNet's first layer, 27 KiB; the CIFAR CNN's first layer and ResNet's
// stem, 62 KiB) stay near L1; larger planes would stream from L2 over
// every tap group, as the blocked loop did.
const flatMaxImageBytes = 64 << 10

// flatLayout is an image's input laid out by (channel, kernel column) for
// the flat kernels (flatFilter, flatConv): plane (c, kw) holds
// x[c][h][ow+kw], InH rows of OutW, for a shape without padding
// (zeroBordered).
type flatLayout struct {
	s            convShape
	plane, image int // floats per plane, per image
}

func newFlatLayout(s convShape) flatLayout {
	plane := s.InH * s.OutW
	return flatLayout{s: s, plane: plane, image: s.InC * s.KW * plane}
}

// flatFits reports whether one image of s (padding included) laid out,
// and filters planes of output, fit flatMaxImageBytes.
func flatFits(s convShape, filters int) bool {
	return 4*(s.InC*s.KW*(s.InH+2*s.PadH)*s.OutW+filters*s.ohw) <= flatMaxImageBytes
}

// tap returns the byte offset in the layout of tap t's (c, kh, kw) first
// input: plane (c, kw) shifted by kh rows.
func (l flatLayout) tap(t int) int64 {
	s := l.s
	c, kh, kw := t/(s.KH*s.KW), t/s.KW%s.KH, t%s.KW
	return int64(4 * ((c*s.KW+kw)*l.plane + kh*s.OutW))
}

// layOut writes image n of x into xs.
func (l flatLayout) layOut(xs, x []float32, n int) {
	s := l.s
	plane := s.InH * s.InW
	for c := range s.InC {
		src := x[(n*s.InC+c)*plane:]
		for kw := range s.KW {
			copyRows(xs[(c*s.KW+kw)*l.plane:], src[kw:], s.InH, s.OutW, s.OutW, s.InW)
		}
	}
}

// useFlatFilter reports whether flatFilter computes s's filter gradient
// (useDirectFilter has accepted the shape and useBcastFilter has not): an
// image's operands fit flatMaxImageBytes and it takes at most as many
// vector FMAs as directFilter, lanes and tap slots wasted included. (At
// 0.98 and 0.90 of them, the CIFAR CNN's first layer and ResNet's stem,
// BenchmarkDirectFilter measured it 1.2–1.35× faster: its loads stay in
// L1 over an image.)
func useFlatFilter(s convShape) bool {
	if !useFlatFilterOn || !flatFits(s, flatFilters) {
		return false
	}
	flat := ceilDiv(s.OutC, flatFilters) * flatFilters * ceilDiv(s.kk, flatTaps) * flatTaps * ceilDiv(s.ohw, 16)
	direct := ceilDiv(s.OutC, 2) * 2 * ceilDiv(s.kk, 8) * 8 * s.OutH * ceilDiv(s.OutW, 16)
	return flat <= direct
}

// directFilterForm returns the direct filter gradient that computes s's
// (useDirectFilter has accepted the shape), and its name: the
// filter-vectorised form where useBcastFilter holds, else the flat form
// where useFlatFilter holds, else the first form.
func directFilterForm(s convShape) (string, func(s convShape, dw, x, dy []float32)) {
	switch {
	case useBcastFilter(s):
		return "bcast", bcastFilter
	case useFlatFilter(s):
		return "flat", flatFilter
	}
	return "direct", directFilter
}

// flatFilter writes dw = the filter gradient of s from x and dy, for the
// shapes useDirectFilter and useFlatFilter accept.
func flatFilter(s convShape, dw, x, dy []float32) {
	s, x, done := zeroBordered(s, x)
	defer done()
	outImg := s.OutC * s.ohw
	l := newFlatLayout(s)
	fgs, tgs := ceilDiv(s.OutC, flatFilters), ceilDiv(s.kk, flatTaps)
	// Byte offsets: of each filter's plane from a filter group's first
	// (a short last group repeats its last filter), and of each tap's
	// first input in xs (a short last group repeats its last tap); the
	// repeated sums are dropped.
	foffs := make([]int64, fgs*flatFilters)
	for i := range foffs {
		g := i / flatFilters
		foffs[i] = int64(4 * (min(i, s.OutC-1) - g*flatFilters) * s.ohw)
	}
	toffs := make([]int64, tgs*flatTaps)
	for i := range toffs {
		toffs[i] = l.tap(min(i, s.kk-1))
	}
	full, rest := s.ohw/16, s.ohw%16
	tail := 1<<rest - 1
	// Units: up to flatUnits ranges of at least flatImages images, each
	// summed in image order into its own accumulators, then added in unit
	// order; the ranges depend on N alone.
	units := min(flatUnits, ceilDiv(s.N, flatImages))
	perUnit := fgs * tgs * flatFilters * flatTaps * 16
	acc := scratch[float32](units * perUnit)
	defer release(acc)
	clear(acc)
	parallelFor(units, 1, func(lo, hi int) {
		xs := scratch[float32](l.image)
		defer release(xs)
		for u := lo; u < hi; u++ {
			a := acc[u*perUnit:]
			for n := u * s.N / units; n < (u+1)*s.N/units; n++ {
				// The image laid out, then every filter and tap group
				// over it while it is in L1.
				l.layOut(xs, x, n)
				for fg := range fgs {
					d := &dy[n*outImg+fg*flatFilters*s.ohw]
					for tg := range tgs {
						filterFlatF32x512(&a[(fg*tgs+tg)*flatFilters*flatTaps*16], d, &xs[0], &foffs[fg*flatFilters], &toffs[tg*flatTaps], full, tail)
					}
				}
			}
		}
	})
	// Unit 0's sums, then all units': each element adds the units in
	// order, the elements split over the cores when there are many (at
	// least 64 Ki additions a core).
	first := acc[:perUnit]
	parallelFor(perUnit/16, max(1, 4096/max(units-1, 1)), func(lo, hi int) {
		for u := 1; u < units; u++ {
			addF32(&first[16*lo], &first[16*lo], &acc[u*perUnit+16*lo], 16*(hi-lo))
		}
	})
	for fg := range fgs {
		for tg := range tgs {
			a := first[(fg*tgs+tg)*flatFilters*flatTaps*16:]
			for f := range min(flatFilters, s.OutC-fg*flatFilters) {
				for j := range min(flatTaps, s.kk-tg*flatTaps) {
					var sum float32
					for _, v := range a[(f*flatTaps+j)*16:][:16] {
						sum += v
					}
					dw[(fg*flatFilters+f)*s.kk+tg*flatTaps+j] = sum
				}
			}
		}
	}
}

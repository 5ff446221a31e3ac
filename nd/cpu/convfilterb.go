package cpu

// The direct filter gradient vectorised over filters instead of output
// positions (AVX-512). directFilter puts 16 output positions of a row in a
// vector, so a row of 10 (LeNet's second layer) fills 10 of 16 lanes, and
// it takes taps eight at a time, so 54 taps take 56 slots. Here a vector
// holds one position's output gradients for 16 filters (the output
// gradient transposed to [position][filter] first), and each tap's input
// value at that position is broadcast into the FMA: every lane is used
// when the filters come in sixteens, whatever the row length. The kernel
// keeps the sums of whole kernel rows, nine rows of three taps or five of
// five (27 or 25 accumulators). A unit of work is a block of bcastImages
// images, a block of 16 filters and a group of kernel rows, summing over
// its images' positions in order; the blocks' sums are added in image
// order at the end, so the result does not depend on how the units are
// split over the cores.

// useBcastFilterOn lets tests and benchmarks turn the filter-vectorised
// form off.
var useBcastFilterOn = true

// bcastImages is how many images one unit of bcastFilter sums (the last
// block may have fewer): fixed, so that the partial sums, and their
// order, do not depend on the cores.
const bcastImages = 16

// bcastRows is how many kernel rows one call of the kernel for kernels
// kw taps wide takes (0: no kernel for that width).
func bcastRows(kw int) int {
	switch kw {
	case 3:
		return 9
	case 5:
		return 5
	}
	return 0
}

// useBcastFilter reports whether bcastFilter computes s's filter gradient
// (useDirectFilter has accepted the shape; directFilterForm asks it
// first): its kernel exists for s's kernel width and it takes at most 3/4
// of directFilter's vector FMAs per output row, lanes and tap slots wasted
// included. (Each of its FMAs loads a broadcast and it transposes the
// output gradient first: at 0.84 of the FMAs, the CIFAR CNN's first layer
// and ResNet's stem, BenchmarkDirectFilter measured it slower than
// directFilter; those layers take the flat form.)
func useBcastFilter(s convShape) bool {
	r := bcastRows(s.KW)
	if !useBcastFilterOn || r == 0 {
		return false
	}
	bcast := ceilDiv(s.OutC, 16) * ceilDiv(s.InC*s.KH, r) * r * s.KW * s.OutW
	direct := ceilDiv(s.OutC, 2) * ceilDiv(s.kk, 8) * ceilDiv(s.OutW, 16) * 16
	return 4*bcast <= 3*direct
}

// bcastFilter writes dw = the filter gradient of s from x and dy, for the
// shapes useDirectFilter and useBcastFilter accept.
func bcastFilter(s convShape, dw, x, dy []float32) {
	s, x, done := zeroBordered(s, x)
	defer done()
	plane, inImg, outImg := s.InH*s.InW, s.InC*s.InH*s.InW, s.OutC*s.ohw
	fbs, r := ceilDiv(s.OutC, 16), bcastRows(s.KW)
	rows := s.InC * s.KH
	groups := ceilDiv(rows, r)
	vecs := r * s.KW // accumulators per unit
	// The output gradients as dyt[fb][n][position][16]; a last block of
	// fewer than 16 filters repeats its last filter in the spare lanes.
	dyt := scratch[float32](fbs * s.N * s.ohw * 16)
	defer release(dyt)
	parallelFor(fbs*s.N, 1, func(lo, hi int) {
		var ptrs [16]*float32
		for u := lo; u < hi; u++ {
			fb, n := u/s.N, u%s.N
			nf := min(16, s.OutC-16*fb)
			src := dy[n*outImg+16*fb*s.ohw:]
			for j := range ptrs {
				ptrs[j] = &src[min(j, nf-1)*s.ohw]
			}
			d := dyt[u*s.ohw*16:][:s.ohw*16]
			k8 := s.ohw &^ 7
			if k8 > 0 {
				packB16T(k8, &ptrs, &d[0])
			}
			for p := k8; p < s.ohw; p++ {
				for j := range 16 {
					d[p*16+j] = src[min(j, nf-1)*s.ohw+p]
				}
			}
		}
	})
	// Kernel rows (c, kh) as byte offsets from a position's input; a
	// short last group repeats offset 0 and drops those sums.
	offs := make([]int64, groups*r)
	for i := range rows {
		offs[i] = int64(4 * (i/s.KH*plane + i%s.KH*s.InW))
	}
	kernel := filterBcast3F32x512
	if s.KW == 5 {
		kernel = filterBcast5F32x512
	}
	// A unit is a block of bcastImages images, a block of 16 filters and
	// a group of kernel rows, in image-block order so that a core's units
	// cover the images the forward pass gave it. The image blocks' sums
	// are added in order at the end.
	blocks := ceilDiv(s.N, bcastImages)
	units := blocks * fbs * groups
	acc := scratch[float32](units * vecs * 16)
	defer release(acc)
	clear(acc)
	xrow, ximg := 4*(s.InW-s.OutW), 4*(inImg-s.OutH*s.InW)
	parallelFor(units, 1, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			b, fb, g := u/(fbs*groups), u/groups%fbs, u%groups
			n0 := b * bcastImages
			imgs := min(bcastImages, s.N-n0)
			kernel(&acc[u*vecs*16], &dyt[(fb*s.N+n0)*s.ohw*16], &x[n0*inImg], s.OutH, s.OutW, imgs, xrow, ximg, 0, &offs[g*r])
		}
	})
	first := acc[:fbs*groups*vecs*16] // block 0's sums, then all blocks'
	for b := 1; b < blocks; b++ {
		next := acc[b*len(first):][:len(first)]
		addF32(&first[0], &first[0], &next[0], len(first))
	}
	for fb := range fbs {
		nf := min(16, s.OutC-16*fb)
		for g := range groups {
			a := first[(fb*groups+g)*vecs*16:]
			for i := range min(r, rows-g*r) {
				for k := range s.KW {
					v := a[(i*s.KW+k)*16:][:nf]
					t := (g*r+i)*s.KW + k
					for lane, sum := range v {
						dw[(16*fb+lane)*s.kk+t] = sum
					}
				}
			}
		}
	}
}

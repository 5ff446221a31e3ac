package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// A direct filter gradient for convolutions whose column matrix is small
// (LeNet's layers: one or six input channels, six or sixteen filters).
// There, im2col writes each image's kk×OH·OW column matrix, the GEMM packs
// it again, and a 6×25 or 16×54 product per image leaves most of the
// micro-kernel idle (BenchmarkConv's lenet rows).
//
// The direct form reads the operands where they lie (a padded convolution
// reads a padded copy of its input). With stride 1 and no padding, output
// position (oh, ow) meets tap (c, kh, kw) at input
// (c, oh+kh, ow+kw): along an output row, every tap is the input row
// shifted by its offset c·InH·InW + kh·InW + kw. So each filter-gradient
// value is a sum, over images and output rows, of a dot product of an
// output-gradient row with a shifted input row. The kernel takes two
// filters and eight taps at a time, 16 output columns per vector (a
// row's last block masked), and keeps per-lane sums over all images; the
// lanes are added at the end in a fixed order, so the result does not
// depend on how the work is split over the cores.

// useDirectFilterOn lets tests turn the direct filter gradient off.
var useDirectFilterOn = true

// directFilterMaxKK is the largest column matrix (Cin·KH·KW rows) the
// direct form takes. Larger ones fill the GEMM's micro-kernel: the CIFAR
// CNN's later layers (288–576 rows) reach 200+ GFLOP/s through im2col
// (BenchmarkConv), and the direct form was not measured there.
const directFilterMaxKK = 64

// directFilterMinOW and directFilterMaxOC bound the shapes the direct form
// takes (useDirectFilter): narrower rows leave most of each vector's
// lanes masked, and each pair of filters reads the whole input again (a
// review measured 3×3 layers with 256 and 512 filters on 8×8 and 2×2
// planes 2–7× slower than the GEMM).
const (
	directFilterMinOW = 8
	directFilterMaxOC = 64
)

// directFilterBlockBytes is about how much input and output gradient a
// core works through before its next block of images: a fraction of a
// 1 MiB L2 cache.
const directFilterBlockBytes = 256 << 10

// useDirectFilter reports whether a direct form computes p's filter
// gradient (directFilterForm picks which): float32 on AVX-512, one group, stride 1, no dilation, a small
// column matrix (padding is copied in), and shapes where the vectors are
// mostly full and the input is not streamed once per filter pair too
// often: rows of at least directFilterMinOW outputs, at most
// directFilterMaxOC filters, no 1×1 kernels (their column matrix is the
// input itself, which the GEMM reads as it is), and tap offsets within
// int32.
func useDirectFilter(p backend.ConvParams) bool {
	return useZMMKernel && useDirectFilterOn && p.DType == backend.Float32 && p.Groups == 1 &&
		p.StrideH == 1 && p.StrideW == 1 && p.PadH >= 0 && p.PadW >= 0 &&
		p.DilateH <= 1 && p.DilateW <= 1 && p.N > 0 && p.OutH > 0 && p.OutW >= directFilterMinOW &&
		p.OutC <= directFilterMaxOC && p.KH*p.KW > 1 && p.InC*p.KH*p.KW <= directFilterMaxKK &&
		p.OutH+p.KH-1 == p.InH+2*p.PadH && p.OutW+p.KW-1 == p.InW+2*p.PadW &&
		int64(p.InC)*int64(p.InH+2*p.PadH)*int64(p.InW+2*p.PadW) <= math.MaxInt32
}

// padImages returns x with zero borders of ph rows and pw columns around
// every plane (from the scratch pool: the caller releases it).
func padImages(s convShape, x []float32, ph, pw int) []float32 {
	h, w := s.InH+2*ph, s.InW+2*pw
	planes := s.N * s.InC
	xp := scratch[float32](planes * h * w)
	parallelFor(planes, 1, func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			d := xp[pl*h*w:][:h*w]
			clear(d)
			copyRows(d[ph*w+pw:], x[pl*s.InH*s.InW:], s.InH, s.InW, w, s.InW)
		}
	})
	return xp
}

// zeroBordered returns s without padding and the input it then reads: for a
// padded layer, a copy of x with zero borders (from the scratch pool, which
// done gives back), over which the direct forms make the same sums.
func zeroBordered(s convShape, x []float32) (convShape, []float32, func()) {
	if s.PadH == 0 && s.PadW == 0 {
		return s, x, func() {}
	}
	xp := padImages(s, x, s.PadH, s.PadW)
	s.InH, s.InW, s.PadH, s.PadW = s.InH+2*s.PadH, s.InW+2*s.PadW, 0, 0
	return s, xp, func() { release(xp) }
}

// directFilter writes dw = the filter gradient of s from x and dy (see
// useDirectFilter for the shapes it takes).
func directFilter(s convShape, dw, x, dy []float32) {
	s, x, done := zeroBordered(s, x)
	defer done()
	plane, inImg, outImg := s.InH*s.InW, s.InC*s.InH*s.InW, s.OutC*s.ohw
	full, rest := s.OutW/16, s.OutW%16
	tail := 1<<rest - 1
	// Taps in dw's order (c, kh, kw), in groups of eight; a short last
	// group repeats offset 0 and drops those sums.
	taps := s.kk
	groups := ceilDiv(taps, 8)
	offs := make([]int32, groups*8)
	for t := range taps {
		c, k := t/(s.KH*s.KW), t%(s.KH*s.KW)
		offs[t] = int32(c*plane + k/s.KW*s.InW + k%s.KW)
	}
	// Each core takes a range of (filter pair, tap group) units and runs
	// them over blocks of images small enough to stay in its L2 cache,
	// keeping each unit's lane sums between blocks.
	pairs := ceilDiv(s.OutC, 2)
	block := max(1, directFilterBlockBytes/(4*(inImg+outImg)))
	xrow, dyrow := 4*s.InW, 4*s.OutW
	ximg, dyimg := 4*inImg-s.OutH*xrow, 4*outImg-s.OutH*dyrow
	parallelFor(pairs*groups, 1, func(lo, hi int) {
		acc := scratch[float32]((hi - lo) * 2 * 8 * 16)
		defer release(acc)
		clear(acc)
		for n0 := 0; n0 < s.N; n0 += block {
			imgs := min(block, s.N-n0)
			for u := lo; u < hi; u++ {
				pr, g := u/groups, u%groups
				o0 := 2 * pr
				o1 := min(o0+1, s.OutC-1) // an odd last filter is paired with itself
				filterTapsF32x512(&acc[(u-lo)*256], &dy[n0*outImg+o0*s.ohw], &dy[n0*outImg+o1*s.ohw], &x[n0*inImg], &offs[g*8],
					s.OutH, full, tail, imgs, xrow, dyrow, ximg, dyimg, 0)
			}
		}
		for u := lo; u < hi; u++ {
			pr, g := u/groups, u%groups
			o0 := 2 * pr
			for o, oc := range [2]int{o0, min(o0+1, s.OutC-1)} {
				for j := range 8 {
					t := g*8 + j
					if t >= taps {
						break
					}
					var sum float32
					for _, v := range acc[(u-lo)*256+(o*8+j)*16:][:16] {
						sum += v
					}
					dw[oc*taps+t] = sum
				}
			}
		}
	})
}

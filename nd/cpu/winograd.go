package cpu

import "github.com/goluon/goluon/nd/backend"

// Winograd F(2×2, 3×3) convolutions for 3×3 kernels with stride 1 and no
// dilation (Lavin & Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015). Each 2×2 block of outputs (a tile) is computed from the
// 4×4 input window under it as
//
//	Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A
//
// so that, summed over the input channels, the 16 positions ξ of the 4×4
// transformed tiles are 16 independent matrix products
//
//	M_ξ[oc][t] = Σ_c U_ξ[oc][c] · V_ξ[c][t]      (U = G g Gᵀ, V = Bᵀ d B)
//
// with 16 multiplications per tile and channel pair instead of im2col's 36.
// The transforms are additions only (the filter's has halves), which keeps
// float32 results as accurate as the direct sum.
//
// The three passes of a training step use it:
//   - forward: the above;
//   - backward data: dx is the "full" convolution of dy with the filter
//     rotated by 180° and its channel axes swapped, padded by 2−pad: the
//     same forward computation on other operands (so pad must be ≤ 2);
//   - backward filter: the transpose of the forward computation,
//     dU_ξ = Σ_t (A dY_t Aᵀ)_ξ · V_ξ[t]ᵀ and dg = Gᵀ dU G.
//
// Layout. The tiles of an image are numbered row by row, t = th·tilesW + tw,
// and a group of images is transformed into V [16][C][ldV] (image i's tiles
// at i·T, T = tilesH·tilesW tiles per image). The row kernels handle 8 tiles
// at a time and always write whole groups of 8: the extra slots of a tile
// row spill into the next row's slots, which are written afterwards, and
// the last row's into ldV's slack. Inputs are read from a plane padded with
// zeros to whole tiles and whole 8-tile groups, outputs written to a padded
// plane and copied out, so the row kernels have no edge cases.

// winoProblem is a forward Winograd convolution: x [N, ci, h, w] padded by
// ph, pw, with a 3×3 filter [co, ci], into y [N, co, h+2ph−2, w+2pw−2].
type winoProblem struct {
	n, ci, h, w, ph, pw, co int

	oh, ow         int  // output size
	tilesH, tilesW int  // 2×2 output tiles per column and row
	tw8            int  // tilesW rounded up to whole 8-tile groups
	t              int  // tiles per image
	padH, padW     int  // size of the zero-padded input plane
	group          int  // images transformed together
	ldV            int  // row stride of V and M
	batch          bool // transforms by winobatch.go's kernels (float32 only, see batched)
}

// winoTargetCols is the number of tiles (GEMM columns) a group of images
// aims at: fewer make short, inefficient products; more spill the
// transformed data out of the caches.
var winoTargetCols = 256

func newWinoProblem(n, ci, h, w, ph, pw, co int) winoProblem {
	p := winoProblem{n: n, ci: ci, h: h, w: w, ph: ph, pw: pw, co: co}
	p.oh, p.ow = h+2*ph-2, w+2*pw-2
	p.tilesH, p.tilesW = ceilDiv(p.oh, 2), ceilDiv(p.ow, 2)
	p.tw8 = ceilDiv(p.tilesW, 8) * 8
	p.t = p.tilesH * p.tilesW
	p.padH, p.padW = 2*p.tilesH+2, 2*p.tw8+2
	p.group = max(1, min(n, ceilDiv(winoTargetCols, p.t)))
	// 8 slots of slack for the last row's spill; a stride that is a
	// multiple of 32 values would make the GEMM's rows of B collide in L1.
	p.ldV = ceilDiv(p.group*p.t+8, 8) * 8
	if p.ldV%32 == 0 {
		p.ldV += 8
	}
	return p
}

// useWinograd reports whether the float32 convolution p runs as Winograd
// F(2×2, 3×3): 3×3, stride 1, no dilation, one group, padding at most 2
// (for the backward-data pass), the AVX2 kernels available, and enough
// channels on both sides for the 16 smaller products to beat one im2col
// product (measured per layer in bench/ and nd/cpu's BenchmarkConv). For
// a batch, output planes smaller than batchedMaxOHW take it only where the
// batched transforms are on (AVX-512) and its tiles do well under 0.6 of
// the direct multiplications (winoSmallPays); the others go to the batched
// kernels of convbatch.go. Each pass's problem then picks its transforms
// (winoProblem.batched): a backward-data problem with padding 0 is wider
// than the output and may run on the row kernels.
func useWinograd(p backend.ConvParams) bool {
	return useAsmKernel && p.DType == backend.Float32 && winoShape(p) &&
		p.InC >= winoMinChannels && p.OutC >= winoMinChannels &&
		(p.N <= 1 || p.OutH*p.OutW >= batchedMaxOHW || winoSmallPays(p))
}

// winoSmallPays reports whether a small plane of p takes Winograd: the
// batched transforms are on (AVX-512) and the 16 products per 2×2 tile
// are at most 0.6 of the 9 per output of the direct sums. 2×2 and 4×4
// outputs qualify (16 and 64 against 36 and 144); 1×1, 3×3 and 5×5 do
// not (16/9, 64/81, 144/225).
func winoSmallPays(p backend.ConvParams) bool {
	tiles := ceilDiv(p.OutH, 2) * ceilDiv(p.OutW, 2)
	return useZMMKernel && useWinoBatch && 16*tiles*5 <= 9*p.OutH*p.OutW*3 &&
		ceilDiv(p.OutW, 2) <= winoBatchMaxTilesW
}

// winoShape reports whether the kernels of winograd.go can compute p.
func winoShape(p backend.ConvParams) bool {
	return p.KH == 3 && p.KW == 3 && p.StrideH == 1 && p.StrideW == 1 &&
		p.DilateH == 1 && p.DilateW == 1 && p.Groups == 1 &&
		p.PadH <= 2 && p.PadW <= 2
}

// winoMinChannels is the fewest input and output channels for which
// useWinograd picks the Winograd kernels.
var winoMinChannels = 16

// winoFilter computes U [16][co][ci] = G g Gᵀ for every filter g of
// w [co][ci][3][3], as one GEMM: U = T·Wᵀ with W the filters as rows of 9
// and T = G ⊗ G (winoFilterMatrix). T's entries (0, ±1/4, ±1/2, 1) make
// every product exact; the sums of up to 9 products round in float32 as
// they go, so U can differ from G g Gᵀ rounded once in the last bit.
func winoFilter[T Float](u, w []T, co, ci int) {
	plane := co * ci
	gemmSlices(false, true, 16, plane, 9, 1, winoFilterMatrix[T](false), 9, w, 9, 0, u, plane, true)
}

// winoFilterRotated computes U [16][co][ci] = G ĝ Gᵀ for the filters ĝ
// of w [co][ci][3][3] rotated by 180° (ĝ[r][s] = g[2−r][2−s]), as
// winoFilter with T's columns reversed: the filters of the backward-data
// pass, whose channel axes it leaves as they are (winoForward's tA).
func winoFilterRotated[T Float](u, w []T, co, ci int) {
	plane := co * ci
	gemmSlices(false, true, 16, plane, 9, 1, winoFilterMatrix[T](true), 9, w, 9, 0, u, plane, true)
}

// winoFilterGrad computes dw [co][ci][3][3] = Gᵀ dU G from
// du [16][co][ci], the adjoint of winoFilter: dW = dUᵀ·T.
func winoFilterGrad[T Float](dw, du []T, co, ci int) {
	plane := co * ci
	gemmSlices(true, false, plane, 9, 16, 1, du, plane, winoFilterMatrix[T](false), 9, 0, dw, 9, true)
}

// winoG is the filter transform G of F(2×2, 3×3).
var winoG = [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}

// winoFilterMatrix returns T [16][9], T[4i+j][3r+s] = G[i][r]·G[j][s], so
// that row ξ = 4i+j of T·g is (G g Gᵀ)[i][j] for a filter g as 9 values;
// with rotated, T[4i+j][8−3r−s], the same for g rotated by 180°.
func winoFilterMatrix[T Float](rotated bool) []T {
	t := make([]T, 16*9)
	for i := range 4 {
		for j := range 4 {
			for r := range 3 {
				for s := range 3 {
					k := 3*r + s
					if rotated {
						k = 8 - k
					}
					t[(4*i+j)*9+k] = T(winoG[i][r] * winoG[j][s])
				}
			}
		}
	}
	return t
}

// winoForward computes y = conv(x, w) for the problem p, where u holds
// winoFilter(w), [16][co][ci], or with tA its channel axes swapped,
// [16][ci][co]. Images are split over the cores; each chunk transforms
// groups of p.group images, runs the 16 products and transforms back.
// Small float32 planes go to winoBatchForward instead.
func winoForward[T Float](p winoProblem, y, x, u []T, tA bool, e epilogue[T]) {
	if q := p.batched(); q.batch && isFloat32[T]() {
		winoBatchForward(q, asF32s(y), asF32s(x), asF32s(u), tA, any(e).(epilogue[float32]))
		return
	}
	lda := p.ci
	if tA {
		lda = p.co
	}
	inImg, outImg := p.ci*p.h*p.w, p.co*p.oh*p.ow
	par := innerParallel(p.n)
	parallelFor(p.n, 1, func(lo, hi int) {
		plane := scratch[T](p.padH * p.padW)
		v := scratch[T](16 * p.ci * p.ldV)
		m := scratch[T](16 * p.co * p.ldV)
		// All tile rows of a plane go through the output transform in one
		// call: tile t = th·tilesW + tw lands in columns 2t, 2t+1 of two
		// long rows, which hold output rows 2th and 2th+1 at th·2·tilesW.
		groups := ceilDiv(p.t, 8)
		ldo := 16 * groups
		out := scratch[T](2 * ldo)
		defer release(plane)
		defer release(v)
		defer release(m)
		defer release(out)
		clear(plane)
		for g0 := lo; g0 < hi; g0 += p.group {
			nb := min(p.group, hi-g0)
			for i := 0; i < nb; i++ {
				winoInput(p, plane, x[(g0+i)*inImg:], v[i*p.t:])
			}
			cols := nb * p.t
			for xi := 0; xi < 16; xi++ {
				gemmSlices(tA, false, p.co, cols, p.ci, 1, u[xi*p.co*p.ci:], lda,
					v[xi*p.ci*p.ldV:], p.ldV, 0, m[xi*p.co*p.ldV:], p.ldV, par)
			}
			for i := 0; i < nb; i++ {
				yi := y[(g0+i)*outImg:]
				for oc := 0; oc < p.co; oc++ {
					winoOutputRow(m[oc*p.ldV+i*p.t:], p.co*p.ldV, out, ldo, groups)
					yo := yi[oc*p.oh*p.ow:]
					copyRows(yo, out, (p.oh+1)/2, p.ow, 2*p.ow, 2*p.tilesW)
					copyRows(yo[p.ow:], out[ldo:], p.oh/2, p.ow, 2*p.ow, 2*p.tilesW)
				}
				e.image(yi[:outImg], p.co, p.oh*p.ow)
			}
		}
	})
}

// winoInput transforms the ci channels of one image x into v (channel c's
// tiles at v[c·ldV:]), through the zero-padded plane, whose border must be
// zero on entry (only its interior is written).
func winoInput[T Float](p winoProblem, plane, x, v []T) {
	hw := p.h * p.w
	for c := 0; c < p.ci; c++ {
		prefetchPlane(x, (c+1)*hw, hw)
		copyRows(plane[p.ph*p.padW+p.pw:], x[c*hw:], p.h, p.w, p.padW, p.w)
		for th := 0; th < p.tilesH; th++ {
			winoInputRow(plane[2*th*p.padW:], p.padW, v[c*p.ldV+th*p.tilesW:], p.ci*p.ldV, p.tw8/8)
		}
	}
}

// winoBackwardData computes dx = convᵀ(dy, w) as the forward convolution
// of dy, padded by 2−pad, with w rotated by 180° and its channel axes
// swapped (the products take the transformed filters transposed).
func winoBackwardData[T Float](s convShape, dx, dy, w []T) {
	p := newWinoProblem(s.N, s.OutC, s.OutH, s.OutW, 2-s.PadH, 2-s.PadW, s.InC)
	u := scratch[T](16 * s.OutC * s.InC)
	defer release(u)
	winoFilterRotated(u, w, s.OutC, s.InC)
	winoForward(p, dx, dy, u, true, epilogue[T]{})
}

// winoConv2D is Conv2D through winoForward.
func winoConv2D[T Float](s convShape, y, x, w []T) { winoConv2DEpi(s, y, x, w, epilogue[T]{}) }

// winoConv2DEpi is winoConv2D with e applied to each output plane as it
// is written.
func winoConv2DEpi[T Float](s convShape, y, x, w []T, e epilogue[T]) {
	p := newWinoProblem(s.N, s.InC, s.InH, s.InW, s.PadH, s.PadW, s.OutC)
	u := scratch[T](16 * s.OutC * s.InC)
	defer release(u)
	winoFilter(u, w, s.OutC, s.InC)
	winoForward(p, y, x, u, false, e)
}

// winoBackwardFilter computes dw = Σₙ dy[n] ⋆ x[n]: per chunk of images,
// dU_ξ = Σ_t dM_ξ[·][t] · V_ξ[·][t]ᵀ with dM = A dY Aᵀ per tile, summed in
// chunk order (reproducibly), then dw = Gᵀ dU G. Small float32 planes go
// to winoBatchFilter instead.
func winoBackwardFilter[T Float](s convShape, dw, x, dy []T) {
	p := newWinoProblem(s.N, s.InC, s.InH, s.InW, s.PadH, s.PadW, s.OutC)
	if q := p.batched(); q.batch && isFloat32[T]() {
		winoBatchFilter(q, asF32s(dw), asF32s(x), asF32s(dy))
		return
	}
	inImg, outImg := p.ci*p.h*p.w, p.co*p.oh*p.ow
	ulen := 16 * p.co * p.ci
	partials := make([][]T, workers())
	par := innerParallel(p.n)
	chunks := parallelChunks(p.n, 1, func(chunk, lo, hi int) {
		du := scratch[T](ulen)
		partials[chunk] = du
		plane := scratch[T](p.padH * p.padW)
		// dY's even and odd rows go into two long rows (row 2th at
		// th·2·tilesW), zero past each row's ow columns and past the last
		// row, so that one call transforms every tile of a plane.
		groups := ceilDiv(p.t, 8)
		ldq := 16 * groups
		dplane := scratch[T](2 * ldq)
		v := scratch[T](16 * p.ci * p.ldV)
		dm := scratch[T](16 * p.co * p.ldV)
		defer release(plane)
		defer release(dplane)
		defer release(v)
		defer release(dm)
		clear(plane)
		clear(dplane)
		for g0 := lo; g0 < hi; g0 += p.group {
			nb := min(p.group, hi-g0)
			for i := 0; i < nb; i++ {
				winoInput(p, plane, x[(g0+i)*inImg:], v[i*p.t:])
				dyi := dy[(g0+i)*outImg:]
				for oc := 0; oc < p.co; oc++ {
					dyo := dyi[oc*p.oh*p.ow:]
					copyRows(dplane, dyo, (p.oh+1)/2, p.ow, 2*p.tilesW, 2*p.ow)
					copyRows(dplane[ldq:], dyo[p.ow:], p.oh/2, p.ow, 2*p.tilesW, 2*p.ow)
					winoGradOutRow(dplane, ldq, dm[oc*p.ldV+i*p.t:], p.co*p.ldV, groups)
				}
			}
			beta := T(1)
			if g0 == lo {
				beta = 0
			}
			for xi := 0; xi < 16; xi++ {
				gemmSlices(false, true, p.co, p.ci, nb*p.t, 1, dm[xi*p.co*p.ldV:], p.ldV,
					v[xi*p.ci*p.ldV:], p.ldV, beta, du[xi*p.co*p.ci:], p.ci, par)
			}
		}
	})
	du := partials[0]
	if p.n == 0 {
		du = scratch[T](ulen)
		clear(du)
	}
	for c := 1; c < chunks; c++ {
		for i, v := range partials[c] {
			du[i] += v
		}
		release(partials[c])
	}
	winoFilterGrad(dw, du, p.co, p.ci)
	release(du)
}

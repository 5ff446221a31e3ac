package cpu

// The row kernels of the Winograd convolutions (winograd.go). Each handles
// one row of tiles, groups·8 tiles, reading a zero-padded plane or writing
// one. The plain Go loops here are the definition: the AVX2 versions in
// winograd_amd64.s do the same float32 operations in the same order, so
// both give the same bits (TestWinoRowKernels).
//
// Transformed data lives in 16 planes ld values apart (plane ξ = 4i+j holds
// position (i, j) of the 4×4 transformed tiles); within a plane the 8 tiles
// of group g are at 8g … 8g+7.

// winoInputRow computes V = Bᵀ d B for the tiles whose 4×4 windows start at
// columns 0, 2, 4, … of the four rows src[0:], src[lds:], src[2lds:],
// src[3lds:] (each read up to column 16·groups+1), into dst[ξ·ldd + tile].
func winoInputRow[T Float](src []T, lds int, dst []T, ldd, groups int) {
	if s, ok := asF32(src); ok && useAsmKernel && groups > 0 {
		d, _ := asF32(dst)
		_, _ = s[3*lds+16*groups+1], d[15*ldd+8*groups-1]
		winoInputRowF32k(&s[0], lds, &d[0], ldd, groups)
		return
	}
	r0, r1, r2, r3 := src, src[lds:], src[2*lds:], src[3*lds:]
	for t := 0; t < 8*groups; t++ {
		c := 2 * t
		for i := 0; i < 4; i++ {
			var w [4]T // row i of Bᵀ d, columns c … c+3
			for k := 0; k < 4; k++ {
				switch i {
				case 0:
					w[k] = r0[c+k] - r2[c+k]
				case 1:
					w[k] = r1[c+k] + r2[c+k]
				case 2:
					w[k] = r2[c+k] - r1[c+k]
				default:
					w[k] = r1[c+k] - r3[c+k]
				}
			}
			o := dst[4*i*ldd+t:]
			o[0] = w[0] - w[2]
			o[ldd] = w[1] + w[2]
			o[2*ldd] = w[2] - w[1]
			o[3*ldd] = w[1] - w[3]
		}
	}
}

// winoOutputRow computes Y = Aᵀ M A for groups·8 tiles of m (plane ξ at
// m[ξ·ldm:]) and writes their 2×2 outputs into two rows of out, ldo apart:
// tile t covers columns 2t and 2t+1.
func winoOutputRow[T Float](m []T, ldm int, out []T, ldo, groups int) {
	if mf, ok := asF32(m); ok && useAsmKernel && groups > 0 {
		o, _ := asF32(out)
		_, _ = mf[15*ldm+8*groups-1], o[ldo+16*groups-1]
		winoOutputRowF32k(&mf[0], ldm, &o[0], ldo, groups)
		return
	}
	for t := 0; t < 8*groups; t++ {
		at := func(i, j int) T { return m[(4*i+j)*ldm+t] }
		var s, d [4]T // rows 0 and 1 of Aᵀ M
		for j := 0; j < 4; j++ {
			s[j] = at(0, j) + at(1, j) + at(2, j)
			d[j] = at(1, j) - at(2, j) - at(3, j)
		}
		out[2*t] = s[0] + s[1] + s[2]
		out[2*t+1] = s[1] - s[2] - s[3]
		out[ldo+2*t] = d[0] + d[1] + d[2]
		out[ldo+2*t+1] = d[1] - d[2] - d[3]
	}
}

// winoGradOutRow computes dM = A dY Aᵀ, the adjoint of winoOutputRow, for
// the groups·8 tiles whose 2×2 output gradients are in columns 2t, 2t+1 of
// the rows dy[0:] and dy[ldy:], into dst[ξ·ldd + tile].
func winoGradOutRow[T Float](dy []T, ldy int, dst []T, ldd, groups int) {
	if s, ok := asF32(dy); ok && useAsmKernel && groups > 0 {
		d, _ := asF32(dst)
		_, _ = s[ldy+16*groups-1], d[15*ldd+8*groups-1]
		winoGradOutRowF32k(&s[0], ldy, &d[0], ldd, groups)
		return
	}
	for t := 0; t < 8*groups; t++ {
		y00, y01, y10, y11 := dy[2*t], dy[2*t+1], dy[ldy+2*t], dy[ldy+2*t+1]
		// Rows of A dY: y0, y0+y1, y0−y1, −y1 (per column).
		a := [4][2]T{{y00, y01}, {y00 + y10, y01 + y11}, {y00 - y10, y01 - y11}, {-y10, -y11}}
		for i := 0; i < 4; i++ {
			o := dst[4*i*ldd+t:]
			o[0] = a[i][0]
			o[ldd] = a[i][0] + a[i][1]
			o[2*ldd] = a[i][0] - a[i][1]
			o[3*ldd] = -a[i][1]
		}
	}
}

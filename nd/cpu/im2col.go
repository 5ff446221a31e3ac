package cpu

// im2col unrolls the receptive fields of x [Cg, H, W] into col [Cg*KH*KW, OH*OW]
// (rows s.ld apart; the padding columns past OH*OW are left alone).
// Each output row is split into a zero border and an interior that is a
// contiguous copy when the stride is 1.
func im2col[T Float](s convShape, x, col []T) { im2colImages(s, x, 0, 1, col) }

// im2colImages unrolls m images, image i at x[i*inImg:], side by side: the
// columns of image i start at column i*OH*OW of each row (rows s.ld
// apart). The border and run arithmetic is done once per row for all of
// them, which matters when the planes are a few pixels (convbatch.go).
func im2colImages[T Float](s convShape, x []T, inImg, m int, col []T) {
	if s.ohw <= tinyPlane {
		im2colTiny(s, x, inImg, m, col, nil)
		return
	}
	if s.StrideW == 1 {
		im2colUnitStride(s, x, inImg, m, col)
		return
	}
	im2colStrided(s, x, inImg, m, col)
}

// im2colStrided is im2colImages for any stride, padding and dilation.
func im2colStrided[T Float](s convShape, x []T, inImg, m int, col []T) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				base := col[((c*s.KH+kh)*s.KW+kw)*s.ld:]
				kwOff := kw * s.DilateW
				owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kwOff, s.InW)
				for i := range m {
					row := base[i*s.ohw:][:s.ohw]
					for oh := 0; oh < s.OutH; oh++ {
						ih := oh*s.StrideH - s.PadH + kh*s.DilateH
						r := row[oh*s.OutW : (oh+1)*s.OutW]
						if ih < 0 || ih >= s.InH || owLo >= owHi {
							clear(r)
							continue
						}
						xr := x[i*inImg+(c*s.InH+ih)*s.InW:][:s.InW]
						clear(r[:owLo])
						clear(r[owHi:])
						iw0 := owLo*s.StrideW - s.PadW + kwOff
						if s.StrideW == 1 {
							copy(r[owLo:owHi], xr[iw0:iw0+owHi-owLo])
							continue
						}
						for ow, iw := owLo, iw0; ow < owHi; ow, iw = ow+1, iw+s.StrideW {
							r[ow] = xr[iw]
						}
					}
				}
			}
		}
	}
}

// unitStrideRun describes, for one row of the column matrix of a
// convolution with unit column stride, the block of it that comes from the
// input: output rows [ohLo, ohHi) and columns [owLo, owHi), whose first
// value is input element xOff and whose rows are StrideH input rows apart.
// Everything else in the row is zero padding.
type unitStrideRun struct {
	r                      int // row of the column matrix
	ohLo, ohHi, owLo, owHi int
	xOff                   int
}

// empty reports whether the run covers nothing (the row is all padding).
func (u unitStrideRun) empty() bool { return u.owLo >= u.owHi || u.ohLo >= u.ohHi }

// forUnitStrideRuns calls fn for every row of the column matrix of s.
func forUnitStrideRuns(s convShape, fn func(u unitStrideRun)) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				u := unitStrideRun{r: (c*s.KH+kh)*s.KW + kw}
				u.owLo, u.owHi = validRange(s.OutW, 1, s.PadW, kw*s.DilateW, s.InW)
				u.ohLo, u.ohHi = validRange(s.OutH, s.StrideH, s.PadH, kh*s.DilateH, s.InH)
				ih := u.ohLo*s.StrideH - s.PadH + kh*s.DilateH
				iw := u.owLo - s.PadW + kw*s.DilateW
				u.xOff = (c*s.InH+ih)*s.InW + iw
				fn(u)
			}
		}
	}
}

// im2colUnitStride is im2colImages for a unit column stride: in each row
// of the column matrix, the output rows whose input row exists hold one
// contiguous run of the input each (copied by copyRows in one call), and
// everything else is zero padding.
func im2colUnitStride[T Float](s convShape, x []T, inImg, m int, col []T) {
	ow := s.OutW
	forUnitStrideRuns(s, func(u unitStrideRun) {
		base := col[u.r*s.ld:]
		for i := range m {
			row := base[i*s.ohw:][:s.ohw]
			if u.empty() {
				clear(row)
				continue
			}
			clear(row[:u.ohLo*ow])
			clear(row[u.ohHi*ow:])
			if u.owLo > 0 || u.owHi < ow {
				for oh := u.ohLo; oh < u.ohHi; oh++ {
					r := row[oh*ow:][:ow]
					zero(r[:u.owLo])
					zero(r[u.owHi:])
				}
			}
			copyRows(row[u.ohLo*ow+u.owLo:], x[i*inImg+u.xOff:], u.ohHi-u.ohLo, u.owHi-u.owLo, ow, s.StrideH*s.InW)
		}
	})
}

// zero sets the few values of a padding border to zero.
func zero[T Float](d []T) {
	for i := range d {
		d[i] = 0
	}
}

// col2im adds col [Cg*KH*KW, OH*OW] back into dx [Cg, H, W].
func col2im[T Float](s convShape, col, dx []T) { col2imImages(s, col, dx, 0, 1) }

// col2imImages is col2im for m images side by side in col (as
// im2colImages lays them out), image i added into dx[i*inImg:].
func col2imImages[T Float](s convShape, col, dx []T, inImg, m int) {
	if s.ohw <= tinyPlane {
		col2imTiny(s, col, dx, inImg, m, nil)
		return
	}
	if s.StrideW == 1 {
		col2imUnitStride(s, col, dx, inImg, m)
		return
	}
	col2imStrided(s, col, dx, inImg, m)
}

// col2imUnitStride is col2imImages for a unit column stride: the mirror of
// im2colUnitStride, one addRows call per row of the column matrix and
// image.
func col2imUnitStride[T Float](s convShape, col, dx []T, inImg, m int) {
	forUnitStrideRuns(s, func(u unitStrideRun) {
		if u.empty() {
			return
		}
		base := col[u.r*s.ld:]
		for i := range m {
			row := base[i*s.ohw:][:s.ohw]
			addRows(dx[i*inImg+u.xOff:], row[u.ohLo*s.OutW+u.owLo:], u.ohHi-u.ohLo, u.owHi-u.owLo, s.StrideH*s.InW, s.OutW)
		}
	})
}

// col2imStrided is col2imImages for any stride, padding and dilation.
func col2imStrided[T Float](s convShape, col, dx []T, inImg, m int) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				base := col[((c*s.KH+kh)*s.KW+kw)*s.ld:]
				kwOff := kw * s.DilateW
				owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kwOff, s.InW)
				if owLo >= owHi {
					continue
				}
				for i := range m {
					row := base[i*s.ohw:][:s.ohw]
					for oh := 0; oh < s.OutH; oh++ {
						ih := oh*s.StrideH - s.PadH + kh*s.DilateH
						if ih < 0 || ih >= s.InH {
							continue
						}
						xr := dx[i*inImg+(c*s.InH+ih)*s.InW:][:s.InW]
						r := row[oh*s.OutW+owLo : oh*s.OutW+owHi]
						iw := owLo*s.StrideW - s.PadW + kwOff
						if s.StrideW == 1 {
							dst := xr[iw : iw+len(r)]
							for j, v := range r {
								dst[j] += v
							}
							continue
						}
						for _, v := range r {
							xr[iw] += v
							iw += s.StrideW
						}
					}
				}
			}
		}
	}
}

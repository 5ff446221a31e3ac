package cpu

// im2col unrolls the receptive fields of x [Cg, H, W] into col [Cg*KH*KW, OH*OW]
// (rows s.ld apart; the padding columns past OH*OW are left alone).
// Each output row is split into a zero border and an interior that is a
// contiguous copy when the stride is 1.
func im2col[T Float](s convShape, x, col []T) {
	if s.StrideW == 1 {
		im2colUnitStride(s, x, col)
		return
	}
	im2colStrided(s, x, col)
}

// im2colStrided is im2col for any stride, padding and dilation.
func im2colStrided[T Float](s convShape, x, col []T) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ld:][:s.ohw]
				kwOff := kw * s.DilateW
				owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kwOff, s.InW)
				for oh := 0; oh < s.OutH; oh++ {
					ih := oh*s.StrideH - s.PadH + kh*s.DilateH
					r := row[oh*s.OutW : (oh+1)*s.OutW]
					if ih < 0 || ih >= s.InH || owLo >= owHi {
						clear(r)
						continue
					}
					xr := x[(c*s.InH+ih)*s.InW:][:s.InW]
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

// im2colUnitStride is im2col for a unit column stride: for each row of
// the column matrix, the output rows whose input row exists hold one
// contiguous run of the input each (copied by copyRows in one call), and
// everything else is zero padding.
func im2colUnitStride[T Float](s convShape, x, col []T) {
	ow := s.OutW
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ld:][:s.ohw]
				owLo, owHi := validRange(ow, 1, s.PadW, kw*s.DilateW, s.InW)
				ohLo, ohHi := validRange(s.OutH, s.StrideH, s.PadH, kh*s.DilateH, s.InH)
				if owLo >= owHi || ohLo >= ohHi {
					clear(row)
					continue
				}
				clear(row[:ohLo*ow])
				clear(row[ohHi*ow:])
				if owLo > 0 || owHi < ow {
					for oh := ohLo; oh < ohHi; oh++ {
						r := row[oh*ow:][:ow]
						zero(r[:owLo])
						zero(r[owHi:])
					}
				}
				ih := ohLo*s.StrideH - s.PadH + kh*s.DilateH
				iw := owLo - s.PadW + kw*s.DilateW
				copyRows(row[ohLo*ow+owLo:], x[(c*s.InH+ih)*s.InW+iw:], ohHi-ohLo, owHi-owLo, ow, s.StrideH*s.InW)
			}
		}
	}
}

// zero sets the few values of a padding border to zero.
func zero[T Float](d []T) {
	for i := range d {
		d[i] = 0
	}
}

// col2im adds col [Cg*KH*KW, OH*OW] back into dx [Cg, H, W].
func col2im[T Float](s convShape, col, dx []T) {
	if s.StrideW == 1 {
		col2imUnitStride(s, col, dx)
		return
	}
	col2imStrided(s, col, dx)
}

// col2imUnitStride is col2im for a unit column stride: the mirror of
// im2colUnitStride, one addRows call per row of the column matrix.
func col2imUnitStride[T Float](s convShape, col, dx []T) {
	ow := s.OutW
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ld:][:s.ohw]
				owLo, owHi := validRange(ow, 1, s.PadW, kw*s.DilateW, s.InW)
				ohLo, ohHi := validRange(s.OutH, s.StrideH, s.PadH, kh*s.DilateH, s.InH)
				if owLo >= owHi || ohLo >= ohHi {
					continue
				}
				ih := ohLo*s.StrideH - s.PadH + kh*s.DilateH
				iw := owLo - s.PadW + kw*s.DilateW
				addRows(dx[(c*s.InH+ih)*s.InW+iw:], row[ohLo*ow+owLo:], ohHi-ohLo, owHi-owLo, s.StrideH*s.InW, ow)
			}
		}
	}
}

// col2imStrided is col2im for any stride, padding and dilation.
func col2imStrided[T Float](s convShape, col, dx []T) {
	for c := 0; c < s.cg; c++ {
		for kh := 0; kh < s.KH; kh++ {
			for kw := 0; kw < s.KW; kw++ {
				row := col[((c*s.KH+kh)*s.KW+kw)*s.ld:][:s.ohw]
				kwOff := kw * s.DilateW
				owLo, owHi := validRange(s.OutW, s.StrideW, s.PadW, kwOff, s.InW)
				if owLo >= owHi {
					continue
				}
				for oh := 0; oh < s.OutH; oh++ {
					ih := oh*s.StrideH - s.PadH + kh*s.DilateH
					if ih < 0 || ih >= s.InH {
						continue
					}
					xr := dx[(c*s.InH+ih)*s.InW:][:s.InW]
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

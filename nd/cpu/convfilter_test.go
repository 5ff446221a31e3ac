package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// naiveFilterGrad is the filter gradient of a stride-1 convolution in
// float64, straight from the definition.
func naiveFilterGrad(p backend.ConvParams, x, dy []float32) []float64 {
	dw := make([]float64, p.OutC*p.InC*p.KH*p.KW)
	for n := range p.N {
		for o := range p.OutC {
			for c := range p.InC {
				for kh := range p.KH {
					for kw := range p.KW {
						var s float64
						for oh := range p.OutH {
							for ow := range p.OutW {
								ih, iw := oh+kh-p.PadH, ow+kw-p.PadW
								if ih < 0 || iw < 0 || ih >= p.InH || iw >= p.InW {
									continue
								}
								s += float64(dy[((n*p.OutC+o)*p.OutH+oh)*p.OutW+ow]) *
									float64(x[((n*p.InC+c)*p.InH+ih)*p.InW+iw])
							}
						}
						dw[((o*p.InC+c)*p.KH+kh)*p.KW+kw] += s
					}
				}
			}
		}
	}
	return dw
}

// filterCase is a stride-1 convolution for the filter gradient tests:
// batch, input channels, height and width, filters, kernel and padding.
type filterCase struct{ n, c, h, w, oc, kh, kw, ph, pw int }

func (tc filterCase) params() backend.ConvParams {
	return backend.ConvParams{N: tc.n, InC: tc.c, InH: tc.h, InW: tc.w, OutC: tc.oc,
		OutH: tc.h + 2*tc.ph - tc.kh + 1, OutW: tc.w + 2*tc.pw - tc.kw + 1, KH: tc.kh, KW: tc.kw,
		PadH: tc.ph, PadW: tc.pw, StrideH: 1, StrideW: 1, Groups: 1, DType: backend.Float32, Device: ctx.CPU(0)}
}

// TestDirectFilter checks every form of the direct filter gradient (the
// first, the flat and, where its kernel exists, the filter-vectorised)
// against the definition in float64 on shapes around their edges,
// including some useDirectFilter sends elsewhere for speed: rows of one
// to several vectors, a last block of one lane, of sixteen and none, odd
// filter counts, tap counts that do not fill a group of eight, padding,
// and many images. The tutorials' layers must take a direct form.
func TestDirectFilter(t *testing.T) {
	if !useZMMKernel {
		t.Skip("needs AVX-512")
	}
	r := rand.New(rand.NewPCG(4, 2))
	cases := []filterCase{
		{32, 1, 28, 28, 6, 5, 5, 0, 0},  // LeNet's first layer
		{32, 6, 12, 12, 16, 3, 3, 0, 0}, // LeNet's second
		{1, 1, 1, 1, 1, 1, 1, 0, 0},
		{2, 1, 5, 5, 3, 5, 5, 0, 0}, // one output position
		{3, 2, 7, 9, 5, 3, 2, 0, 0},
		{2, 3, 17, 17, 7, 1, 1, 0, 0}, // rows of a whole block and one lane
		{1, 1, 4, 20, 2, 1, 5, 0, 0},  // rows of one whole block, no tail
		{5, 7, 9, 6, 17, 3, 3, 0, 0},  // 63 taps, 17 filters
		{2, 4, 6, 40, 9, 4, 2, 0, 0},
		{70, 2, 6, 6, 3, 3, 3, 0, 0},
		{4, 3, 32, 32, 32, 3, 3, 1, 1}, // the CIFAR CNN's first layer
		{2, 2, 5, 7, 3, 3, 5, 2, 1},
		{3, 1, 1, 1, 2, 3, 3, 1, 1}, // all padding but the centre
		// The filter-vectorised form's edges: filters in one block and
		// several, full and not; kernel rows in a group and several,
		// the last not full; one and several image blocks.
		{5, 7, 9, 6, 16, 3, 3, 0, 0},
		{17, 4, 6, 7, 33, 3, 3, 0, 0},
		{40, 2, 11, 13, 20, 5, 5, 2, 1},
		{3, 1, 1, 1, 12, 3, 3, 1, 1},
		{2, 3, 8, 8, 64, 5, 5, 0, 0},
		// The flat form's edges: planes of less than one vector, of whole
		// vectors and not, filter groups full and not, tap groups full
		// and not, one and several image blocks.
		{1, 1, 3, 3, 1, 2, 2, 0, 0},
		{9, 2, 6, 9, 13, 3, 2, 0, 0},
		{4, 1, 11, 8, 12, 4, 4, 0, 0},
		{6, 2, 9, 14, 7, 3, 3, 1, 1},
	}
	for _, tc := range cases {
		p := tc.params()
		t.Run(fmt.Sprintf("%dx%dx%dx%d-oc%d-k%dx%d-p%dx%d", tc.n, tc.c, tc.h, tc.w, tc.oc, tc.kh, tc.kw, tc.ph, tc.pw), func(t *testing.T) {
			if tc.oc == 6 || tc.oc == 16 && tc.c == 6 || tc.oc == 32 && tc.c == 3 {
				if !useDirectFilter(p) {
					t.Fatalf("useDirectFilter(%+v) = false", p)
				}
			}
			s := newConvShape(p)
			x := randSlice(p.N*p.InC*p.InH*p.InW, r)
			dy := randSlice(p.N*p.OutC*s.ohw, r)
			want := naiveFilterGrad(p, x, dy)
			var scale float64
			for _, v := range want {
				scale = max(scale, math.Abs(v))
			}
			forms := []struct {
				name string
				fn   func(convShape, []float32, []float32, []float32)
			}{{"direct", directFilter}, {"flat", flatFilter}}
			if bcastRows(p.KW) > 0 {
				forms = append(forms, struct {
					name string
					fn   func(convShape, []float32, []float32, []float32)
				}{"bcast", bcastFilter})
			}
			for _, f := range forms {
				// A guard after dw catches writes past it.
				dw := make([]float32, p.OutC*s.kk+1)
				dw[len(dw)-1] = 12345
				f.fn(s, dw[:len(dw)-1], x, dy)
				if dw[len(dw)-1] != 12345 {
					t.Fatalf("%s: wrote past dw", f.name)
				}
				for i, v := range want {
					if d := math.Abs(float64(dw[i]) - v); d > 1e-5*max(scale, 1)*math.Sqrt(float64(p.N*s.ohw)) {
						t.Fatalf("%s: dw[%d] = %v, want %v", f.name, i, dw[i], v)
					}
				}
			}
		})
	}
}

// TestDirectFilterForm checks which form of the direct filter gradient
// each shape takes (useBcastFilter first, then useFlatFilter), with the
// vector FMAs each would take against the first form's.
func TestDirectFilterForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    backend.ConvParams
		want string
	}{
		{"LeNet's second layer", convP(32, 6, 12, 16, 3, 0), "bcast"},
		{"LeNet's first layer (6 filters; flat 0.66 of the FMAs)", convP(32, 1, 28, 6, 5, 0), "flat"},
		{"the CIFAR CNN's first layer (bcast 0.84, flat 0.98)", convP(32, 3, 32, 32, 3, 1), "flat"},
		{"no broadcast kernel for 4-wide rows", convP(32, 4, 12, 16, 4, 0), "flat"},
		{"rows of 16, 4 filters (flat 1.25)", convP(8, 2, 18, 4, 3, 0), "direct"},
		{"VGG's first layer (flat 0.90, 2.9 MiB per image)", convP(2, 3, 224, 64, 3, 1), "direct"},
	} {
		if got, _ := directFilterForm(newConvShape(tc.p)); got != tc.want {
			t.Errorf("%s: directFilterForm = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestUseDirectFilter checks the shapes it declines.
func TestUseDirectFilter(t *testing.T) {
	base := backend.ConvParams{N: 4, InC: 2, InH: 10, InW: 10, OutC: 3, OutH: 8, OutW: 8, KH: 3, KW: 3, StrideH: 1, StrideW: 1,
		Groups: 1, DType: backend.Float32, Device: ctx.CPU(0)}
	if useZMMKernel && !useDirectFilter(base) {
		t.Fatal("the base shape should take the direct form")
	}
	for _, tc := range []struct {
		name string
		edit func(*backend.ConvParams)
	}{
		{"float64", func(p *backend.ConvParams) { p.DType = backend.Float64 }},
		{"output not the padded input's", func(p *backend.ConvParams) { p.PadH, p.PadW = 1, 1 }},
		{"strided", func(p *backend.ConvParams) { p.StrideH, p.StrideW = 2, 2 }},
		{"grouped", func(p *backend.ConvParams) { p.Groups, p.OutC = 2, 4 }},
		{"dilated", func(p *backend.ConvParams) { p.DilateH, p.DilateW = 2, 2 }},
		{"many taps", func(p *backend.ConvParams) { p.InC = 8 }},
		{"1x1", func(p *backend.ConvParams) { p.KH, p.KW, p.InH, p.InW = 1, 1, 8, 8 }},
		{"narrow rows", func(p *backend.ConvParams) { p.InW, p.OutW = 9, 7 }},
		{"one more filter than pairs take", func(p *backend.ConvParams) { p.OutC = directFilterMaxOC + 1 }},
		{"offsets past int32", func(p *backend.ConvParams) { p.InH, p.InW, p.OutH, p.OutW = 1<<15, 1<<15, 1<<15-2, 1<<15-2 }},
		{"no images", func(p *backend.ConvParams) { p.N = 0 }},
	} {
		p := base
		tc.edit(&p)
		if useDirectFilter(p) {
			t.Errorf("%s: useDirectFilter = true", tc.name)
		}
	}
}

// BenchmarkDirectFilter times Conv2DBackwardFilter on the layers that take
// a direct form: the filter-vectorised and flat forms where they apply,
// the first form, and the path the backend takes without them (Winograd,
// batched or per-image im2col), at batch 32 and 128.
func BenchmarkDirectFilter(b *testing.B) {
	be := New()
	r := rand.New(rand.NewPCG(5, 6))
	layers := append(convLayers[:len(convLayers):len(convLayers)], struct {
		name string
		p    backend.ConvParams
	}{"resnet-stem", convP(32, 3, 32, 64, 3, 1)})
	for _, n := range []int{32, 128} {
		for _, l := range layers {
			p := l.p
			p.N = n
			if !useDirectFilter(p) {
				continue
			}
			s := newConvShape(p)
			arg := func(k int) backend.Arg {
				return backend.Arg{Buf: &Buffer{dt: backend.Float32, F32: randSlice(k, r)}}
			}
			x, dy, dw := arg(p.N*p.InC*p.InH*p.InW), arg(p.N*p.OutC*s.ohw), arg(p.OutC*s.kk)
			for _, m := range []struct {
				name                string
				direct, bcast, flat bool
			}{{"bcast", true, true, false}, {"flat", true, false, true}, {"direct", true, false, false}, {"other", false, false, false}} {
				if m.bcast && !useBcastFilter(s) || m.flat && (useBcastFilter(s) || !useFlatFilter(s)) {
					continue
				}
				b.Run(fmt.Sprintf("%s-n%d/%s", l.name, n, m.name), func(b *testing.B) {
					defer func(on, bc, fl bool) { useDirectFilterOn, useBcastFilterOn, useFlatFilterOn = on, bc, fl }(useDirectFilterOn, useBcastFilterOn, useFlatFilterOn)
					useDirectFilterOn, useBcastFilterOn, useFlatFilterOn = m.direct, m.bcast, m.flat
					gflops(b, 2*float64(p.N*p.OutC*s.ohw*s.kk), func() { be.Conv2DBackwardFilter(p, dw, x, dy) })
				})
			}
		}
	}
}

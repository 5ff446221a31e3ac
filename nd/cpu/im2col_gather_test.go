//go:build amd64

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// gatherCases are tiny-plane convolutions: every tap, pruned taps,
// strides, dilation, planes that do not divide 16 columns.
var gatherCases = []struct{ n, c, h, w, oc, k, stride, pad, dil int }{
	{40, 5, 4, 4, 3, 3, 1, 1, 1}, // 4×4: one image per panel
	{9, 6, 8, 8, 4, 3, 2, 1, 1},  // stride 2 from 8×8 to 4×4
	{70, 3, 2, 2, 5, 3, 1, 1, 1}, // 2×2, 4 images per panel
	{37, 4, 1, 1, 6, 3, 1, 1, 1}, // 1×1: the centre tap alone
	{23, 3, 3, 3, 2, 3, 1, 1, 1}, // 3×3: 9 columns, panels straddle images
	{11, 2, 5, 4, 3, 3, 2, 0, 1}, // stride 2 without padding, ragged
	{13, 2, 3, 3, 2, 3, 1, 2, 2}, // dilation 2
	{5, 3, 7, 7, 2, 1, 2, 0, 1},  // 1×1 kernel, stride 2
}

func gatherParams(c struct{ n, c, h, w, oc, k, stride, pad, dil int }) backend.ConvParams {
	ext := c.dil*(c.k-1) + 1
	return backend.ConvParams{
		N: c.n, InC: c.c, InH: c.h, InW: c.w, OutC: c.oc, KH: c.k, KW: c.k,
		OutH: (c.h+2*c.pad-ext)/c.stride + 1, OutW: (c.w+2*c.pad-ext)/c.stride + 1,
		StrideH: c.stride, StrideW: c.stride, PadH: c.pad, PadW: c.pad, DilateH: c.dil, DilateW: c.dil, Groups: 1,
	}
}

// gatherKernels are the gather kernels this CPU runs.
func gatherKernels(t *testing.T) map[string]func(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int) {
	if !useAsmKernel {
		t.Skip("no AVX2: the gathers do not run")
	}
	ks := map[string]func(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int){"avx2": gatherRowsF32}
	if DetectedISA() >= ISAAVX512 {
		ks["zmm"] = gatherRowsF32x512
	}
	return ks
}

// TestTinyGather: the gathers make the column matrix im2colTiny makes, bit
// for bit and without touching anything else of the buffer, for whole and
// partial batches; the scatter adds back what col2imTiny adds.
func TestTinyGather(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range gatherCases {
		p := planBatched(newConvShape(gatherParams(c)))
		s := p.bs
		if s.ohw > tinyPlane {
			t.Fatalf("%v: plane of %d pixels is not tiny", c, s.ohw)
		}
		nt := tapCount(s, p.taps)
		tab := gatherTable(s, p.taps, p.inImg, p.b)
		x := randSlice(c.n*p.inImg, r)
		for name, k := range gatherKernels(t) {
			for _, m := range []int{min(p.b, c.n), 1, max(1, min(p.b, c.n)-1)} {
				t.Run(fmt.Sprintf("%v/%s/m=%d", c, name, m), func(t *testing.T) {
					defer func(old func(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int)) {
						gatherRowsF32k = old
					}(gatherRowsF32k)
					gatherRowsF32k = k
					want, got := make([]float32, s.cg*nt*s.ld), make([]float32, s.cg*nt*s.ld)
					for i := range want {
						want[i] = float32(math.NaN())
						got[i] = want[i]
					}
					im2colTiny(s, x, p.inImg, m, want, p.taps)
					im2colGather(s, x, p.inImg, m, got, nt, tab)
					sameF32(t, "im2col", got, want)
					if name != "zmm" {
						return
					}
					col := randSlice(len(want), r)
					dxWant := randSlice(m*p.inImg, r)
					dxGot := append([]float32(nil), dxWant...)
					col2imTiny(s, col, dxWant, p.inImg, m, p.taps)
					col2imGather(s, col, dxGot, p.inImg, m, nt, tab)
					sameF32(t, "col2im", dxGot, dxWant)
				})
			}
		}
	}
}

// TestTinyGatherGuardPage runs the gathers on inputs and column matrices
// that end where an inaccessible page begins: the masked lanes must not
// read or write past them.
func TestTinyGatherGuardPage(t *testing.T) {
	ks := gatherKernels(t)
	defer func(old func(d *float32, ldd int, s *float32, lds int, tab *int32, lanes, rows int)) {
		gatherRowsF32k = old
	}(gatherRowsF32k)
	vals := []float32{1.5, -2, 0.25, 3}
	for _, c := range gatherCases {
		p := planBatched(newConvShape(gatherParams(c)))
		s, m := p.bs, min(p.b, c.n)
		nt := tapCount(s, p.taps)
		tab := gatherTable(s, p.taps, p.inImg, m)
		nx, ncol := (m-1)*p.inImg+s.cg*s.InH*s.InW, (s.cg*nt-1)*s.ld+m*s.ohw
		gx, gc, gd := newGuarded(t, 4*nx), newGuarded(t, 4*ncol), newGuarded(t, 4*nx)
		x, _ := gx.tail(nx, vals)
		want := make([]float32, ncol+s.ld)
		im2colTiny(s, x, p.inImg, m, want, p.taps)
		for name, k := range ks {
			gatherRowsF32k = k
			col, _ := gc.tail(ncol, vals)
			im2colGather(s, x, p.inImg, m, col, nt, tab)
			for row := 0; row < s.cg*nt; row++ { // the columns past the m images are not written
				sameF32(t, fmt.Sprintf("%v %s row %d", c, name, row), col[row*s.ld:][:m*s.ohw], want[row*s.ld:][:m*s.ohw])
			}
			if name == "zmm" {
				dx, _ := gd.tail(nx, vals)
				col2imGather(s, col, dx, p.inImg, m, nt, tab)
			}
		}
	}
}

// TestConvGather: the float32 convolutions give the same bits with the
// gathers as with the one-value loops, forward, backward data and backward
// filter: the batched kernels (with batches that leave a worker a partial
// group of images; the forward pass packing the GEMM's panels from the
// images or through a column matrix) and the per-image ones (strided
// planes, groups).
func TestConvGather(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the gathers do not run")
	}
	r := rand.New(rand.NewPCG(9, 10))
	packed := 0 // batched cases whose forward pass packs the GEMM's panels from the images
	defer func() {
		if packed == 0 && !t.Failed() {
			t.Error("no batched case packed its panels from the images")
		}
	}()
	for _, c := range gatherCases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			p := gatherParams(c)
			plan := planBatched(newConvShape(p))
			if batchGather[float32](plan) == nil {
				t.Fatal("the gathers do not apply")
			}
			if !plan.par {
				packed++
			}
			convGatherCase(t, newConvShape(p), r, true)
		})
	}
	for _, c := range []struct {
		n, c, h, w, oc, k, stride, pad, dil, groups int
	}{
		{3, 3, 32, 32, 8, 7, 2, 3, 1, 1}, // ResNet's stem
		{2, 8, 14, 14, 6, 1, 2, 0, 1, 1}, // a 1×1 downsampling convolution
		{2, 6, 9, 11, 4, 3, 2, 1, 1, 2},  // stride 2, groups
		{3, 4, 4, 4, 4, 3, 1, 1, 1, 4},   // a depthwise tiny plane
		{2, 2, 12, 12, 2, 3, 3, 2, 2, 1}, // stride 3, dilation 2
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			ext := c.dil*(c.k-1) + 1
			p := backend.ConvParams{
				N: c.n, InC: c.c, InH: c.h, InW: c.w, OutC: c.oc, KH: c.k, KW: c.k,
				OutH: (c.h+2*c.pad-ext)/c.stride + 1, OutW: (c.w+2*c.pad-ext)/c.stride + 1,
				StrideH: c.stride, StrideW: c.stride, PadH: c.pad, PadW: c.pad, DilateH: c.dil, DilateW: c.dil, Groups: c.groups,
			}
			s := newConvShape(p)
			if imageGather[float32](s) == nil {
				t.Fatal("the gathers do not apply")
			}
			convGatherCase(t, s, r, false)
		})
	}
}

// TestGatherLimits: empty planes and planes whose table would be large
// keep the one-value loops; an empty input plane with padding gives zeros
// on both the batched and the per-image kernels.
func TestGatherLimits(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: the gathers do not run")
	}
	stem := convSP(1, 3, 0, 8, 7, 2, 3)
	stem.InH, stem.InW, stem.OutH, stem.OutW = 800, 1333, 400, 667
	if imageGather[float32](newConvShape(stem)) != nil {
		t.Error("a 7×7 stem on 800×1333 images gets a gather table (over 100 MB)")
	}
	for _, n := range []int{1, 2} {
		p := backend.ConvParams{N: n, InC: 3, InH: 0, InW: 4, OutC: 2, KH: 1, KW: 1, OutH: 2, OutW: 6,
			StrideH: 1, StrideW: 2, PadH: 1, PadW: 1, DilateH: 1, DilateW: 1, Groups: 1, DType: backend.Float32}
		s := newConvShape(p)
		if imageGather[float32](s) != nil || batchGather[float32](planBatched(s)) != nil {
			t.Errorf("N=%d: an empty input plane gets a gather table", n)
		}
		y := make([]float32, n*2*12)
		for i := range y {
			y[i] = float32(math.NaN())
		}
		if useBatched(s) {
			convForwardBatched(s, y, nil, make([]float32, 2*3))
		} else {
			convForward(s, y, nil, make([]float32, 2*3))
		}
		for i, v := range y {
			if v != 0 {
				t.Fatalf("N=%d: y[%d] = %v, want 0", n, i, v)
			}
		}
	}
}

// convGatherCase runs the batched or per-image float32 kernels of s with
// and without the gathers and compares the bits.
func convGatherCase(t *testing.T, s convShape, r *rand.Rand, batched bool) {
	t.Helper()
	x, w := randSlice(s.N*s.InC*s.InH*s.InW, r), randSlice(s.OutC*s.kk, r)
	dy := randSlice(s.N*s.OutC*s.ohw, r)
	run := func(gather, packed bool) (y, dx, dw []float32) {
		defer func(g, p bool) { useGather, usePackedGather = g, p }(useGather, usePackedGather)
		useGather, usePackedGather = gather, packed
		y, dx, dw = make([]float32, len(dy)), make([]float32, len(x)), make([]float32, len(w))
		if batched {
			convForwardBatched(s, y, x, w)
			convBackwardDataBatched(s, dx, dy, w)
			convBackwardFilterBatched(s, dw, x, dy)
		} else {
			convForward(s, y, x, w)
			convBackwardData(s, dx, dy, w)
			convBackwardFilter(s, dw, x, dy)
		}
		return y, dx, dw
	}
	y1, dx1, dw1 := run(false, false)
	y2, dx2, dw2 := run(true, true)
	sameF32(t, "forward", y2, y1)
	sameF32(t, "backward data", dx2, dx1)
	sameF32(t, "backward filter", dw2, dw1)
	y3, _, _ := run(true, false)
	sameF32(t, "forward, column matrix through gathers", y3, y1)
}

// sameF32 fails t unless got and want hold the same bits.
func sameF32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if g, w := math.Float32bits(got[i]), math.Float32bits(want[i]); g != w {
			t.Fatalf("%s [%d] = %#08x (%v), want %#08x (%v)", what, i, g, got[i], w, want[i])
		}
	}
}

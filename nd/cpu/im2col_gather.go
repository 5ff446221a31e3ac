package cpu

import (
	"math"
	"sync"
	"sync/atomic"
)

// Unrolling through gathers. im2colTiny (planes of a few pixels) and
// im2colStrided (column strides above 1) move the column matrix one value
// at a time, which was most of the unrolling's cost on the ResNet-18 CIFAR
// layers (BenchmarkConvResNet18), where a row of the matrix is a handful
// of images' few pixels, and on its stride-2 7×7 stem. With AVX2 or
// AVX-512, 16 columns of a row (c, tap) are instead one gather from the
// images: a lane table for each (tap, panel of 16 columns) holds, per
// lane, the offset of the lane's input pixel from channel c's plane of the
// first image, and a mask that is zero where the pixel is padding. Going
// down the channels only moves the base by one plane, so one table serves
// every row of a tap, and the kernel (gather_amd64.s) loops over the
// channels.
//
// The transpose, col2im, is a gather, an add and a scatter per 16 lanes
// (AVX-512 only; AVX2 has no scatter). Within one row the active lanes
// name distinct pixels (one tap maps distinct output positions of an image
// to distinct input pixels), and each pixel gets its taps' terms in tap
// order as before, so both directions give the results of the one-value
// loops bit for bit.

// gatherLanes is the number of columns one table entry covers; an entry
// is gatherLanes offsets and then gatherLanes masks.
const (
	gatherLanes = 16
	gatherEntry = 2 * gatherLanes
)

// gatherRowsF32k is the gather kernel of the active level.
var gatherRowsF32k = gatherRowsF32

// useGather lets tests turn the gathers off, to compare the two ways, and
// usePackedGather the packing of the batched forward pass's GEMM panels
// straight from the images (packGather).
var useGather, usePackedGather = true, true

// gatherKey is what a lane table depends on: the plane geometry, whether
// the taps are pruned (prunedTaps follows from the geometry), the image
// stride and the number of images.
type gatherKey struct {
	inH, inW, outH, outW, kh, kw, sh, sw, ph, pw, dh, dw int
	pruned                                               bool
	inImg, m                                             int
}

// gatherTables keeps the tables of the convolutions seen (a network has a
// few dozen), up to maxGatherCache bytes in all; tables are read-only once
// built. A table takes 8 bytes per column and tap; one larger than
// maxGatherTable (a large strided plane: a 7×7 stem on 224×224 images
// needs 4.9 MB) is not made, and those planes keep the one-value loops.
var (
	gatherTables   sync.Map
	gatherCached   atomic.Int64
	maxGatherCache = int64(32 << 20)
	maxGatherTable = int64(2 << 20)
)

// gatherTable returns the lane tables that unroll up to m images (inImg
// values apart) with the given taps (nil: all), tap t and panel j at entry
// t·panels+j; nil when the gathers do not apply: no AVX2, a plane that is
// neither tiny nor strided (im2colUnitStride copies whole runs), an empty
// plane, a table above maxGatherTable, offsets past int32, or useGather
// off.
func gatherTable(s convShape, taps []int, inImg, m int) []int32 {
	if !useAsmKernel || !useGather || s.ohw > tinyPlane && s.StrideW == 1 ||
		s.ohw == 0 || s.InH*s.InW == 0 || s.cg == 0 || m == 0 ||
		int64(m)*int64(max(inImg, s.cg*s.InH*s.InW)) > math.MaxInt32 {
		return nil
	}
	bytes := int64(tapCount(s, taps)) * int64(ceilDiv(m*s.ohw, gatherLanes)) * gatherEntry * 4
	if bytes > maxGatherTable {
		return nil
	}
	key := gatherKey{s.InH, s.InW, s.OutH, s.OutW, s.KH, s.KW, s.StrideH, s.StrideW, s.PadH, s.PadW,
		s.DilateH, s.DilateW, taps != nil, inImg, m}
	if t, ok := gatherTables.Load(key); ok {
		return t.([]int32)
	}
	tab := buildGatherTable(s, taps, inImg, m)
	if gatherCached.Add(bytes) <= maxGatherCache {
		if _, loaded := gatherTables.LoadOrStore(key, tab); loaded {
			gatherCached.Add(-bytes)
		}
	} else {
		gatherCached.Add(-bytes)
	}
	return tab
}

// buildGatherTable makes gatherTable's tables.
func buildGatherTable(s convShape, taps []int, inImg, m int) []int32 {
	nt := tapCount(s, taps)
	panels := ceilDiv(m*s.ohw, gatherLanes)
	tab := make([]int32, nt*panels*gatherEntry)
	for t := range nt {
		tap := t
		if taps != nil {
			tap = taps[t]
		}
		kh, kw := tap/s.KW, tap%s.KW
		for oh := range s.OutH {
			ih := oh*s.StrideH - s.PadH + kh*s.DilateH
			if ih < 0 || ih >= s.InH {
				continue
			}
			for ow := range s.OutW {
				iw := ow*s.StrideW - s.PadW + kw*s.DilateW
				if iw < 0 || iw >= s.InW {
					continue
				}
				for i := range m {
					q := i*s.ohw + oh*s.OutW + ow
					e := tab[(t*panels+q/gatherLanes)*gatherEntry:][:gatherEntry]
					e[q%gatherLanes] = int32(i*inImg + ih*s.InW + iw)
					e[gatherLanes+q%gatherLanes] = 1
				}
			}
		}
	}
	return tab
}

// gatherSpan checks the bounds the kernels do not and returns the number
// of panels for m images and the table's panels per tap.
func gatherSpan(s convShape, x, col []float32, inImg, m, nt int, tab []int32) (panels, tabPanels int) {
	panels, tabPanels = gatherInput(s, x, inImg, m, nt, tab)
	_ = col[(s.cg*nt-1)*s.ld+m*s.ohw-1]
	return panels, tabPanels
}

// gatherInput is gatherSpan's check of the images x and the table.
func gatherInput(s convShape, x []float32, inImg, m, nt int, tab []int32) (panels, tabPanels int) {
	tabPanels = len(tab) / (nt * gatherEntry)
	panels = ceilDiv(m*s.ohw, gatherLanes)
	if panels > tabPanels {
		panic("cpu: gather table built for fewer images")
	}
	_ = x[(m-1)*inImg+s.cg*s.InH*s.InW-1]
	return panels, tabPanels
}

// im2colGather is im2colImages (or im2colTiny with pruned taps) with the
// gather kernel and a table from gatherTable for at least m images.
func im2colGather(s convShape, x []float32, inImg, m int, col []float32, nt int, tab []int32) {
	panels, tabPanels := gatherSpan(s, x, col, inImg, m, nt, tab)
	cols, plane := m*s.ohw, s.InH*s.InW
	for t := range nt {
		for j := range panels {
			gatherRowsF32k(&col[t*s.ld+j*gatherLanes], nt*s.ld, &x[0], plane,
				&tab[(t*tabPanels+j)*gatherEntry], min(gatherLanes, cols-j*gatherLanes), s.cg)
		}
	}
}

// col2imGather is col2imImages (or col2imTiny with pruned taps) with the
// scatter kernel (AVX-512) and a table from gatherTable.
func col2imGather(s convShape, col, dx []float32, inImg, m, nt int, tab []int32) {
	panels, tabPanels := gatherSpan(s, dx, col, inImg, m, nt, tab)
	cols, plane := m*s.ohw, s.InH*s.InW
	for t := range nt {
		for j := range panels {
			scatterAddRowsF32x512(&dx[0], plane, &col[t*s.ld+j*gatherLanes], nt*s.ld,
				&tab[(t*tabPanels+j)*gatherEntry], min(gatherLanes, cols-j*gatherLanes), s.cg)
		}
	}
}

// batchGather returns the gather table of a batched convolution in
// float32 (nil otherwise, or where gatherTable says no).
func batchGather[T Float](p batchPlan) []int32 {
	if !isFloat32[T]() {
		return nil
	}
	return gatherTable(p.bs, p.taps, p.inImg, p.b)
}

// imageGather returns the gather table of a per-image convolution in
// float32 (nil otherwise, or where gatherTable says no).
func imageGather[T Float](s convShape) []int32 {
	if !isFloat32[T]() || s.direct() {
		return nil
	}
	return gatherTable(s, nil, 0, 1)
}

// scatterTable is t where the scatter kernel runs (AVX-512), else nil.
func scatterTable(t []int32) []int32 {
	if !useZMMKernel {
		return nil
	}
	return t
}

// packGather returns a pack function for sgemmPacked whose B is the column
// matrix that im2colGather makes from m images (x at the first, inImg
// apart) with tab (nt taps): the gathers write the GEMM's packed panels
// directly, so the column matrix is never stored. Rows (c, t) of a panel
// lie nt·16 values apart for one tap, which is the stride the kernel takes
// between channels.
func packGather(s convShape, x []float32, inImg, m, nt int, tab []int32) func(pc, kb, jc, nb int, dst []float32) {
	_, tabPanels := gatherInput(s, x, inImg, m, nt, tab)
	cols, plane := m*s.ohw, s.InH*s.InW
	return func(pc, kb, jc, nb int, dst []float32) {
		for jr := 0; jr < nb; jr += gatherLanes {
			j := (jc + jr) / gatherLanes
			lanes := min(gatherLanes, cols-j*gatherLanes)
			panel := dst[jr*kb:][:gatherLanes*kb]
			for t := range nt {
				last := pc + kb - 1 - t // rows c·nt+t in [pc, pc+kb)
				if last < 0 {
					continue
				}
				cLo, cHi := max(ceilDiv(pc-t, nt), 0), min(last/nt, s.cg-1)
				if cHi < cLo {
					continue
				}
				gatherRowsF32k(&panel[(cLo*nt+t-pc)*gatherLanes], nt*gatherLanes, &x[cLo*plane], plane,
					&tab[(t*tabPanels+j)*gatherEntry], lanes, cHi-cLo+1)
			}
		}
	}
}

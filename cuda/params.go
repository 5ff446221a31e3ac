//go:build cuda || cudaemu

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// maxDims mirrors MAXD in kernels/common.cuh.
const maxDims = 8

// args packs the parameters of one kernel launch: every scalar and pointer
// is one 8-byte slot (kernels take i64, double and pointers only), and a
// parameter struct is a run of 8-byte words mirroring its C layout. The
// bytes are plain Go memory with no pointers in it, so they may be handed
// to cgo; cuLaunchKernel copies them before returning.
type args struct {
	b     []byte
	offs  []int32
	sizes []int
	// Inline storage, so that packing a launch costs no allocation beyond
	// the args value itself (an args is never copied, only pointed to).
	bbuf [448]byte
	obuf [12]int32
	sbuf [12]int
}

func (a *args) words(ws ...int64) {
	if a.b == nil {
		a.b, a.offs, a.sizes = a.bbuf[:0], a.obuf[:0], a.sbuf[:0]
	}
	a.offs = append(a.offs, int32(len(a.b)))
	a.sizes = append(a.sizes, 8*len(ws))
	for _, w := range ws {
		a.b = binary.LittleEndian.AppendUint64(a.b, uint64(w))
	}
}

// i64 adds an integer parameter (C type i64).
func (a *args) i64(v int) { a.words(int64(v)) }

// f64 adds a floating-point parameter (C type double).
func (a *args) f64(v float64) { a.words(int64(math.Float64bits(v))) }

// ptr adds a device pointer to an operand's first element.
func (a *args) ptr(x backend.Arg) { a.words(int64(devPtr(x))) }

// dimsParam mirrors struct Dims: an iteration space and the strides of up
// to three operands over it.
type dimsParam struct {
	n     int
	shape [maxDims]int
	st    [3][maxDims]int
}

func (d *dimsParam) add(a *args) {
	var buf [1 + 4*maxDims]int64
	ws := append(buf[:0], int64(d.n))
	for _, v := range d.shape {
		ws = append(ws, int64(v))
	}
	for _, s := range d.st {
		for _, v := range s {
			ws = append(ws, int64(v))
		}
	}
	a.words(ws...)
}

// newDims fills a dimsParam from a coalesced shape and per-operand strides.
func newDims(shape []int, strides ...[]int) dimsParam {
	if len(shape) > maxDims || len(strides) > 3 {
		panic(fmt.Sprintf("cuda: internal error: %d dims, %d operands", len(shape), len(strides)))
	}
	d := dimsParam{n: len(shape)}
	copy(d.shape[:], shape)
	for i, s := range strides {
		copy(d.st[i][:], s)
	}
	return d
}

// reduceParam mirrors struct ReduceDims.
type reduceParam struct {
	kshape, kst []int
	rshape, rst []int
	inN, inSt   int
	nOut, nRed  int
}

func (r *reduceParam) add(a *args) {
	var buf [38]int64
	ws := buf[:0]
	put := func(n int, vals []int) {
		var arr [maxDims]int64
		for i, v := range vals {
			arr[i] = int64(v)
		}
		if n >= 0 {
			ws = append(ws, int64(n))
		}
		ws = append(ws, arr[:]...)
	}
	put(len(r.kshape), r.kshape)
	put(-1, r.kst)
	put(len(r.rshape), r.rshape)
	put(-1, r.rst)
	ws = append(ws, int64(r.inN), int64(r.inSt), int64(r.nOut), int64(r.nRed))
	a.words(ws...)
}

// convParam mirrors struct ConvDims.
type convParam struct {
	inC, inH, inW, outC, outH, outW int
	kh, kw, sh, sw, ph, pw, dh, dw  int
	groups, nc, colN, colG, colR    int
}

func (c *convParam) add(a *args) {
	a.words(int64(c.inC), int64(c.inH), int64(c.inW), int64(c.outC), int64(c.outH), int64(c.outW),
		int64(c.kh), int64(c.kw), int64(c.sh), int64(c.sw), int64(c.ph), int64(c.pw),
		int64(c.dh), int64(c.dw), int64(c.groups), int64(c.nc), int64(c.colN), int64(c.colG), int64(c.colR))
}

// poolParam mirrors struct PoolDims.
func poolWords(p backend.PoolParams) []int64 {
	typ := int64(0)
	if p.Type == backend.PoolAvg {
		typ = 1
	}
	inc := int64(0)
	if !p.ExcludePad {
		inc = 1
	}
	return []int64{typ, int64(p.N * p.C), int64(p.InH), int64(p.InW), int64(p.OutH), int64(p.OutW),
		int64(p.KH), int64(p.KW), int64(p.StrideH), int64(p.StrideW), int64(p.PadH), int64(p.PadW), inc}
}

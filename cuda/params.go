//go:build cuda || cudaemu

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goluon/goluon/nd/backend"
)

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

// newPool fills a poolParam from p.
func newPool(p backend.PoolParams) poolParam {
	q := poolParam{planes: p.N * p.C, inH: p.InH, inW: p.InW, outH: p.OutH, outW: p.OutW,
		kh: p.KH, kw: p.KW, sh: p.StrideH, sw: p.StrideW, ph: p.PadH, pw: p.PadW}
	if p.Type == backend.PoolAvg {
		q.typ = 1
	}
	if !p.ExcludePad {
		q.includePad = 1
	}
	return q
}

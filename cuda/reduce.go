//go:build cuda || cudaemu

package cuda

import (
	"fmt"

	"github.com/goluon/goluon/nd/backend"
)

// reduceCode returns op's code in kernels/opcodes.cuh (see unaryCode).
func reduceCode(op backend.ReduceOp) (int, bool) { return int(op), int(op) < numReduceOpCodes }

// planReduce describes the reduction of a contiguous source of shape over
// the marked axes, after dropping size-1 dimensions and merging neighbours
// with the same flag (as nd/cpu does). Kept dimensions keep their order,
// which is the output's; the innermost reduced dimension becomes the inner
// run, the others the outer reduced space, so that reduced elements are
// visited in row-major order (ArgMax's and ArgMin's index order).
func planReduce(shape []int, axes []bool) (reduceParam, error) {
	sh, red := backend.MergeReduceAxes(shape, axes)
	st := backend.ContiguousStrides(sh)
	p := reduceParam{inN: 1, inSt: 0, nOut: 1, nRed: 1}
	inner := -1
	for d := len(sh) - 1; d >= 0; d-- {
		if red[d] {
			inner = d
			break
		}
	}
	for d := range sh {
		switch {
		case !red[d]:
			if p.nk == maxDims {
				return p, tooManyAxes(shape, axes)
			}
			p.kshape[p.nk], p.kst[p.nk] = sh[d], st[d]
			p.nk++
			p.nOut *= sh[d]
		case d == inner:
			p.inN, p.inSt = sh[d], st[d]
			p.nRed *= sh[d]
		default:
			if p.nr == maxDims {
				return p, tooManyAxes(shape, axes)
			}
			p.rshape[p.nr], p.rst[p.nr] = sh[d], st[d]
			p.nr++
			p.nRed *= sh[d]
		}
	}
	return p, nil
}

func tooManyAxes(shape []int, axes []bool) error {
	return fmt.Errorf("reduction of shape %v over %v alternates kept and reduced axes more than %d times", shape, axes, maxDims)
}

// blockReduce plans a reduction of nOut results over nRed elements each
// with a block of threads per result: the block size (a power of two,
// 32–256), the grid, and the parts each result is split into when
// results are too few to fill the device (a second pass then adds the
// parts' partials in order). Reduce and the per-channel sums of the fused
// kernels (batchnorm.go) use it.
func (d *device) blockReduce(nOut, nRed int) (parts, block, blocks int) {
	block = 32
	for block < nRed && block < 256 {
		block *= 2
	}
	parts = 1
	if nOut < 2*d.phys.sms && nRed >= 8192 {
		parts = max(1, min((2*d.phys.sms+nOut-1)/nOut, nRed/4096, 1024))
	}
	blocks = min(nOut*parts, d.phys.sms*max(d.phys.maxTPSM/block, 1)*8)
	return parts, block, blocks
}

// Reduce reduces the contiguous src over the marked axes into dst. With
// enough outputs to fill the device one thread computes each; otherwise
// each output gets a block (or, when outputs are few and long, several
// blocks and a second pass) whose threads share the reduced elements.
// The kernels are those of src's dtype; they write ArgMax's and ArgMin's
// indices into dst's dtype (passed as its code), the other results in
// src's. Floats accumulate in float64, integers in int64 (the partials
// of the second pass too).
func (b *Backend) Reduce(op backend.ReduceOp, shape []int, axes []bool, dst, src backend.Arg) {
	code, ok := reduceCode(op)
	if !ok {
		panic(fmt.Sprintf("cuda: unknown reduce op %d", op))
	}
	d := devOf(dst)
	p, err := planReduce(shape, axes)
	if err != nil {
		deviceFail("Reduce", d.dev, err)
	}
	if p.nOut == 0 {
		return
	}
	sdt, odt := buf(src).dt, buf(dst).dt
	var a args
	a.i64(code)
	a.ptr(dst)
	a.i64(int(odt))
	a.ptr(src)
	p.add(&a)
	sfx := suffix(sdt)
	if p.nRed < 32 || p.nOut >= d.phys.sms*d.phys.maxTPSM {
		d.launch("Reduce", "reduce_thread"+sfx, p.nOut, 0, 0, 0, &a)
		return
	}
	parts, block, blocks := d.blockReduce(p.nOut, p.nRed)
	a.i64(parts)
	var partial *Buffer
	if parts > 1 {
		acc := backend.Float64
		if !sdt.IsFloat() {
			acc = backend.Int64
		}
		partial = b.temp("Reduce", d, acc, 2*p.nOut*parts)
		pa := backend.Arg{Buf: partial}
		a.ptr(pa)
		a.ptr(at(pa, p.nOut*parts))
	} else {
		a.i64(0)
		a.i64(0)
	}
	d.launch("Reduce", "reduce_block"+sfx, 0, blocks, block, block*16, &a)
	if parts > 1 {
		pa := backend.Arg{Buf: partial}
		var f args
		f.i64(code)
		f.ptr(dst)
		f.i64(int(odt))
		f.ptr(pa)
		f.ptr(at(pa, p.nOut*parts))
		f.i64(p.nOut)
		f.i64(parts)
		d.launch("Reduce", "reduce_finish"+sfx, p.nOut, 0, 0, 0, &f)
		b.Free(d.dev, partial)
	}
}

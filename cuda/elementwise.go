//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// unaryCode returns op's code in kernels/opcodes.cuh: the codes are the
// backend's values (cuda/internal/gencodes writes the header from
// nd/backend), so this is int(op) and a range check.
func unaryCode(op backend.UnaryOp) (int, bool) { return int(op), int(op) < numUnaryOpCodes }

// binaryCode returns op's code in kernels/opcodes.cuh (see unaryCode).
func binaryCode(op backend.BinaryOp) (int, bool) { return int(op), int(op) < numBinaryOpCodes }

// Fill sets n elements of dst to v converted to dst's dtype as Cast
// converts a float64 (a Bool dst gets 1 where v is not zero, NaN included).
func (b *Backend) Fill(dst backend.Arg, n int, v float64) {
	if n == 0 {
		return
	}
	dt := buf(dst).dt
	if dt == backend.Bool {
		v = truth(v)
	}
	var a args
	a.ptr(dst)
	a.i64(n)
	a.f64(v)
	devOf(dst).launch("Fill", "fill"+suffix(dt), n, 0, 0, 0, &a)
}

// truth is 1 where v is not zero (NaN included), else 0: a float64 cast to
// Bool, passed to the uint8 kernels.
func truth(v float64) float64 {
	if v != 0 {
		return 1
	}
	return 0
}

// Unary computes dst[i] = op(x[i]; p1, p2) for n contiguous elements.
// Integer dtypes compute in int64 with the scalars truncated to it; Bool
// uses the uint8 kernel.
func (b *Backend) Unary(op backend.UnaryOp, dst, x backend.Arg, n int, p1, p2 float64) {
	code, ok := unaryCode(op)
	if !ok {
		panic(fmt.Sprintf("cuda: unknown unary op %d", op))
	}
	dt := buf(dst).dt
	if !dt.IsFloat() && !slices.Contains(backend.IntUnaryOps, op) {
		panic(fmt.Sprintf("cuda: unary op %d is not defined on %v", op, dt))
	}
	if n == 0 {
		return
	}
	var a args
	a.i64(code)
	a.ptr(dst)
	a.ptr(x)
	a.i64(n)
	a.f64(p1)
	a.f64(p2)
	devOf(dst).launch("Unary", "unary"+suffix(dt), n, 0, 0, 0, &a)
}

// binaryKernel returns the name suffix of the Binary kernels for inputs of
// dtype in and a result of dtype out: the inputs' storage type, with "_b"
// for a Bool result of inputs stored otherwise than as uint8.
func binaryKernel(op backend.BinaryOp, out, in backend.DType) string {
	if !in.IsFloat() && !slices.Contains(backend.IntBinaryOps, op) {
		panic(fmt.Sprintf("cuda: binary op %d is not defined on %v", op, in))
	}
	sfx := suffix(in)
	switch {
	case suffix(out) == sfx:
		return sfx
	case out == backend.Bool:
		return sfx + "_b"
	}
	panic(fmt.Sprintf("cuda: binary op %d from %v into %v", op, in, out))
}

// Binary computes dst = op(a, b) over shape; a and b are strided (stride 0
// broadcasts) and dst is contiguous. Comparisons and logical ops may write
// a Bool dst from inputs of any dtype.
func (b *Backend) Binary(op backend.BinaryOp, shape []int, dst, x, y backend.Arg) {
	code, ok := binaryCode(op)
	if !ok {
		panic(fmt.Sprintf("cuda: unknown binary op %d", op))
	}
	sfx := binaryKernel(op, buf(dst).dt, buf(x).dt)
	n := prod(shape)
	if n == 0 {
		return
	}
	xs, ys := x.Strides, y.Strides
	if xs == nil {
		xs = backend.ContiguousStrides(shape)
	}
	if ys == nil {
		ys = backend.ContiguousStrides(shape)
	}
	d := devOf(dst)
	sh, st := backend.Coalesce(shape, backend.ContiguousStrides(shape), xs, ys)
	if len(sh) == 1 && st[1][0] == 1 && st[2][0] == 1 {
		var a args
		a.i64(code)
		a.ptr(dst)
		a.ptr(x)
		a.ptr(y)
		a.i64(n)
		d.launch("Binary", "binary_flat"+sfx, n, 0, 0, 0, &a)
		return
	}
	forSlices(sh, st, func(offs, sh []int, st [][]int) {
		dd, xa, ya := dst, x, y
		dd.Off += offs[0]
		xa.Off += offs[1]
		ya.Off += offs[2]
		m := prod(sh)
		var a args
		a.i64(code)
		a.ptr(dd)
		a.ptr(xa)
		a.ptr(ya)
		a.i64(m)
		p := newDims(sh, st[1], st[2])
		p.add(&a)
		d.launch("Binary", "binary_strided"+sfx, m, 0, 0, 0, &a)
	})
}

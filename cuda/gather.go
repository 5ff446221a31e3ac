//go:build cuda || cudaemu

package cuda

import "github.com/goluon/goluon/nd/backend"

// Pick gathers dst[o,i] = x[o, idx[o,i], i], indices clipped to [0, n).
// idx may have any dtype (its code goes to the kernel; floats are
// truncated).
func (b *Backend) Pick(outer, n, inner int, dst, x, idx backend.Arg) {
	if outer*inner == 0 {
		return
	}
	var a args
	a.ptr(dst)
	a.ptr(x)
	a.ptr(idx)
	a.i64(int(buf(idx).dt))
	a.i64(outer)
	a.i64(n)
	a.i64(inner)
	devOf(dst).launch("Pick", "pick"+suffix(buf(dst).dt), outer*inner, 0, 0, 0, &a)
}

// PickBackward adds dy into dx at the picked positions.
func (b *Backend) PickBackward(outer, n, inner int, dx, dy, idx backend.Arg) {
	if outer*inner == 0 {
		return
	}
	var a args
	a.ptr(dx)
	a.ptr(dy)
	a.ptr(idx)
	a.i64(int(buf(idx).dt))
	a.i64(outer)
	a.i64(n)
	a.i64(inner)
	devOf(dx).launch("PickBackward", "pick_backward"+suffix(buf(dx).dt), outer*inner, 0, 0, 0, &a)
}

// OneHot writes dst[i, j] = on if idx[i] == j else off, with on and off
// converted to dst's dtype as Fill converts; idx may have any dtype (a
// float index selects a column only when it is a whole number).
func (b *Backend) OneHot(n, depth int, dst, idx backend.Arg, on, off float64) {
	if n*depth == 0 {
		return
	}
	dt := buf(dst).dt
	if dt == backend.Bool {
		on, off = truth(on), truth(off)
	}
	var a args
	a.ptr(dst)
	a.ptr(idx)
	a.i64(int(buf(idx).dt))
	a.i64(n)
	a.i64(depth)
	a.f64(on)
	a.f64(off)
	devOf(dst).launch("OneHot", "one_hot"+suffix(dt), n*depth, 0, 0, 0, &a)
}

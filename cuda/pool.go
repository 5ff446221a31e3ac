//go:build cuda || cudaemu

package cuda

import "github.com/goluon/goluon/nd/backend"

// Pool2D pools x (NCHW) into y, one thread per output element.
func (b *Backend) Pool2D(p backend.PoolParams, y, x backend.Arg) {
	n := p.N * p.C * p.OutH * p.OutW
	if n == 0 {
		return
	}
	var a args
	pp := newPool(p)
	pp.add(&a)
	a.ptr(y)
	a.ptr(x)
	devOf(y).launch("Pool2D", "pool_forward"+suffix(buf(y).dt), n, 0, 0, 0, &a)
}

// Pool2DBackward computes dx (overwriting it) from x and dy, one thread per
// input element gathering from the windows that contain it. It does not
// read y: the forward's output may have been written since (an in-place
// op on a recorded array), and max pooling finds each window's first
// maximum in x.
func (b *Backend) Pool2DBackward(p backend.PoolParams, dx, x, _, dy backend.Arg) {
	n := p.N * p.C * p.InH * p.InW
	if n == 0 {
		return
	}
	var a args
	pp := newPool(p)
	pp.add(&a)
	a.ptr(dx)
	a.ptr(x)
	a.ptr(dy)
	devOf(dx).launch("Pool2DBackward", "pool_backward"+suffix(buf(dx).dt), n, 0, 0, 0, &a)
}

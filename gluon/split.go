package gluon

import (
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// SplitBounds returns the [begin, end) ranges that split n samples over k
// parts with MXNet's rules: with evenSplit, n must divide by k; otherwise
// the parts are balanced (sizes differ by at most one, the larger ones
// first), and with fewer samples than parts there are only n parts.
func SplitBounds(n, k int, evenSplit bool) ([][2]int, error) {
	if k <= 0 {
		return nil, errorf("split: %d parts", k)
	}
	if evenSplit && n%k != 0 {
		return nil, errorf("split: batch of %d samples does not divide evenly over %d contexts (pass evenSplit=false to balance the slices)", n, k)
	}
	parts := min(k, n)
	if parts == 0 {
		return nil, errorf("split: empty batch")
	}
	out := make([][2]int, parts)
	size, extra := n/parts, n%parts
	at := 0
	for i := range out {
		s := size
		if i < extra {
			s++
		}
		out[i] = [2]int{at, at + s}
		at += s
	}
	return out, nil
}

// SplitAndLoad splits batch along axis 0 and copies slice i to devs[i]
// (Gluon's split_and_load). With evenSplit an indivisible batch is an
// error; otherwise slice sizes differ by at most one. A batch with fewer
// samples than contexts gives fewer slices (one sample each), not an
// error, so the last small batch of an epoch still trains.
func SplitAndLoad(batch *nd.NDArray, devs []ctx.Context, evenSplit bool) ([]*nd.NDArray, error) {
	if batch.NDim() == 0 {
		return nil, errorf("split: cannot split a 0-d array")
	}
	bounds, err := SplitBounds(batch.Shape()[0], len(devs), evenSplit)
	if err != nil {
		return nil, err
	}
	out := make([]*nd.NDArray, len(bounds))
	for i, b := range bounds {
		s := nd.SliceAxis(batch, b[0], b[1], 0)
		out[i] = s.AsIn(devs[i])
		if out[i] != s {
			s.Release()
		}
	}
	return out, nil
}

// ForEachDevice runs f once per context, concurrently (the first context
// on the calling goroutine, the others on long-lived goroutines of a
// pool), waits for all of them, and returns the error of the first
// context, in order, that failed. It is the usual way to run the
// per-device forward and backward passes of a training step:
//
//	autograd.Record(func() {
//		err = gluon.ForEachDevice(devs, func(i int, dev ctx.Context) error {
//			loss := lossFn.Forward(net.Forward(data[i]), label[i])
//			autograd.Backward(loss)
//			return nil
//		})
//	})
//
// A panic in f (an *nd.Error from a programmer mistake) is returned as an
// error instead of crashing the program; another panic in the first
// context's f reaches the caller once the other contexts are done. The
// pool's goroutines run f as members of the caller's tree, so they see
// what the caller's goroutine sees (its tree and scopes).
//
// With as many CPU contexts as the process has CPUs and GOMAXPROCS (two
// contexts on a 2-core machine), a call can pin each context to a CPU of
// its own (Linux), with the CPU backend running each context's kernels on
// that thread alone (nd.DedicateCores), so that a context's data stays in
// one core's caches. That is much faster on hosts whose cores pass cache
// lines slowly and a little slower on the others, and one virtual machine
// can change between the two, so ForEachDevice times its calls and pins
// when pinned calls have been faster, trying the other kind about one
// call in 16. GOLUON_PIN=1 in the environment always pins, GOLUON_PIN=0
// never does. A call nested in, or concurrent with, one that may pin is
// not pinned.
func ForEachDevice(devs []ctx.Context, f func(i int, dev ctx.Context) error) error {
	plan, unpin := pinPlan(devs)
	succeeded := false
	defer func() { unpin(succeeded) }()
	err := runEach(len(devs), func(i int) (err error) {
		pinned(plan, i, func() { err = f(i, devs[i]) })
		return err
	})
	succeeded = err == nil
	return err
}

// runEach runs f(i) for every i in [0, n) concurrently, i = 0 on the
// calling goroutine and the others on the device pool's goroutines
// (devpool.go), in the caller's goroutine tree; the caller then polls for
// them a while before it blocks. It returns the first error in order of
// i; a panic with an *nd.Error is returned as that error, another panic
// of f(0) reaches the caller once the others are done.
func runEach(n int, f func(i int) error) error {
	run := func(i int, in func(func())) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(*nd.Error); ok {
					err = e
					return
				}
				panic(r)
			}
		}()
		in(func() { err = f(i) })
		return err
	}
	switch {
	case n <= 0:
		return nil
	case n == 1:
		return run(0, func(g func()) { g() })
	}
	errs := make([]error, n)
	var left atomic.Int64
	left.Store(int64(n - 1))
	done := make(chan struct{})
	tree := nd.CurrentTree()
	for i := 1; i < n; i++ {
		runOnPool(func() {
			errs[i] = run(i, tree.Run)
			if left.Add(-1) == 0 {
				close(done)
			}
		})
	}
	func() {
		defer waitSpin(&left, done) // a panic leaves once the others are done
		errs[0] = run(0, func(g func()) { g() })
	}()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

//go:build cuda || cudaemu

package cuda

import (
	"os"
	"slices"
	"sync"

	"github.com/goluon/goluon/nd/backend"
)

// VReduceEnv names the environment variable that, set to 0, turns off the
// one-kernel sum over virtual GPUs (AllReduceSum then declines such
// buffers and the caller reduces them with copies, as before).
const VReduceEnv = "GOLUON_VREDUCE"

// vsumMax is the most buffers one vsum kernel adds (kernels/collective.cu).
const vsumMax = 8

var vreduceOff = os.Getenv(VReduceEnv) == "0"

// AllReduceSum implements backend.Collective: the buffers' first n
// elements are summed in place, queued on the devices without the host
// waiting for any GPU.
//
//   - Buffers on 2 to 8 distinct virtual GPUs of one physical device
//     (float32 or float64) are summed by one kernel on the first buffer's
//     GPU, which reads every buffer in place and writes the sum into all of
//     them, added in the order given, ((b0 + b1) + b2) + ..., so the result
//     is bitwise the same as the fixed-order sum of the copies it replaces.
//     Its GPU first waits (on events) for the work queued so far on the
//     others, and they then wait for the kernel: one round trip to each
//     other GPU's worker, made concurrently, and one to the first's.
//   - Buffers on distinct physical GPUs go through NCCL where it loads.
//
// Anything else (mixed sets, other dtypes, more than 8 virtual GPUs, NCCL
// missing or off, GOLUON_VREDUCE=0 for virtual GPUs) is declined.
func (b *Backend) AllReduceSum(bufs []backend.Arg, n int) (bool, error) {
	if len(bufs) == 0 || n == 0 {
		return true, nil
	}
	if done, err := b.allReduceVirtual(bufs, n); done || err != nil {
		return done, err
	}
	return b.allReduceNCCL(bufs, n)
}

// allReduceVirtual is AllReduceSum's one-kernel sum over virtual GPUs of
// one physical device; it declines anything else.
func (b *Backend) allReduceVirtual(bufs []backend.Arg, n int) (bool, error) {
	if vreduceOff || len(bufs) < 2 || len(bufs) > vsumMax {
		return false, nil
	}
	dt := buf(bufs[0]).dt
	if dt != backend.Float32 && dt != backend.Float64 {
		return false, nil
	}
	devs := make([]*device, len(bufs))
	for i, a := range bufs {
		devs[i] = devOf(a)
		if devs[i].phys != devs[0].phys || buf(a).dt != dt || slices.Contains(devs[:i], devs[i]) {
			return false, nil
		}
	}
	return true, catchDevice(func() { vsumAll(bufs, devs, n, dt) })
}

// vsumAll queues the one-kernel sum of bufs on devs[0], ordered after the
// work queued so far on every GPU and before their later work.
func vsumAll(bufs []backend.Arg, devs []*device, n int, dt backend.DType) {
	const op = "AllReduceSum"
	root := devs[0]
	// The other GPUs' round trips run concurrently: root's stream waits
	// for each of them before the kernel is queued.
	var wg sync.WaitGroup
	errs := make([]error, len(devs))
	for i, d := range devs[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = catchDevice(func() { handoff(op, d, root) })
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			panic(err) // a *backend.Error, caught by catchDevice
		}
	}
	var a args
	a.i64(n)
	a.i64(len(bufs))
	for j := range vsumMax {
		a.ptr(bufs[min(j, len(bufs)-1)])
	}
	root.launch(op, "vsum"+suffix(dt), n, 0, 0, 0, &a)
	handoffAll(op, root, devs[1:])
}

// catchDevice runs fn and returns the device error it panics with.
func catchDevice(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*backend.Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	fn()
	return nil
}

// handoffAll is handoff from one GPU to several: the work queued from now
// on on each of tos waits for the work queued so far on from, with one
// round trip to from's worker that records an event per destination.
func handoffAll(op string, from *device, tos []*device) {
	forbid(op, append([]*device{from}, tos...)...)
	evs := make([]event, 0, len(tos))
	err := from.call(op, func() error {
		for range tos {
			ev, err := from.phys.takeEvent()
			if err != nil {
				return err
			}
			evs = append(evs, ev)
			if err := eventRecord(ev, from.stream); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, ev := range evs {
			from.phys.putEvent(ev)
		}
		deviceFail(op, from.dev, err)
	}
	for i, to := range tos {
		ev := evs[i]
		to.async(op, func() error {
			err := streamWaitEvent(to.stream, ev)
			from.phys.putEvent(ev)
			return err
		})
	}
}

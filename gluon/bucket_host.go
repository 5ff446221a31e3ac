package gluon

import (
	"runtime"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// hostShares reports whether Step sums the buckets and updates the
// replicas context by context on the contexts' own goroutines (runEach),
// each context summing one share of every bucket in place: every context
// is a CPU context of this process, whose buffers are all host memory,
// and the kvstore is the device or the local kind, whose sums (in the
// order of the contexts) the CPU backend's collective computes in place
// (nd.LibraryAllReduce) bit for bit.
func (t *Trainer) hostShares() bool {
	if len(t.devs) < 2 || t.ordered() {
		return false
	}
	if k := t.kv.Type(); k != "device" && k != "local" {
		return false
	}
	for _, d := range t.devs {
		if d.Kind != ctx.KindCPU {
			return false
		}
	}
	return true
}

// hostStepOnly reports whether the buckets are summed in Step only, not
// during backward: with host shares and at least as many contexts as
// GOMAXPROCS, every core is running a backward pass until the last one
// ends, so a sum started during backward would only take a core from one
// of them, and Step's shares, one per context on its own core, finish
// sooner than the whole sum on one goroutine.
func (t *Trainer) hostStepOnly() bool {
	return t.hostShares() && len(t.devs) >= runtime.GOMAXPROCS(0)
}

// sumShares sums the buckets bs in Step: context d sums the d-th of
// len(t.devs) nearly equal parts of every bucket, over all contexts, and
// writes the sum into every context's buffer, the contexts concurrently
// on their own goroutines (their kernels on their own cores when they
// take every core). Stale replicas' gradients are zeroed first, and kept
// ones restored after (prepareSum). A failed share fails the step; the
// other shares may have been summed (as a failed bucket leaves the
// buckets summed before it).
func (t *Trainer) sumShares(bs []*bucket, fresh [][]int) error {
	var keep [][2]*nd.NDArray
	var sum []*bucket
	for _, b := range bs {
		k, anyFresh := t.prepareSum(b, fresh)
		keep = append(keep, k...)
		if anyFresh {
			sum = append(sum, b)
		}
	}
	defer restoreKept(keep)
	n := len(t.devs)
	kv := t.kv.(kvstore.AllReducer)
	share := func(b *bucket, d int) error {
		size := b.flats[0].Size()
		lo, hi := d*size/n, (d+1)*size/n
		if lo == hi {
			return nil
		}
		parts := make([]*nd.NDArray, 0, n)
		defer func() {
			for _, p := range parts {
				p.Release()
			}
		}()
		var err error
		if cerr := nd.Catch(func() {
			for _, f := range b.flats {
				parts = append(parts, f.Span(lo, hi))
			}
			var done bool
			if done, err = nd.LibraryAllReduce(parts); !done && err == nil {
				err = kv.AllReduce(parts)
			}
		}); cerr != nil {
			err = cerr
		}
		if err != nil {
			return errorf("trainer: reducing the gradients of %s: %v", b.names(t), err)
		}
		return nil
	}
	err := t.onContexts(func(d int) error {
		for _, b := range sum {
			if err := share(b, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		t.sharedLast = len(sum)
	}
	return err
}

// onContexts runs f once per context of the Trainer, concurrently
// (runEach); with host shares the CPU backend runs each one's kernels on
// its own goroutine when they take every core (nd.DedicateCores).
func (t *Trainer) onContexts(f func(d int) error) error {
	if t.hostShares() {
		defer nd.DedicateCores(len(t.devs))()
	}
	return runEach(len(t.devs), f)
}

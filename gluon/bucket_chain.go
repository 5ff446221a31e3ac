package gluon

import (
	"slices"
	"sync"

	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// Buckets over several processes (a distributed kvstore) are reduced by
// collectives, which every process must start in the same order. A bucket
// whose gradients are final is therefore queued, and the chain starts
// queued buckets strictly in bucket order: bucket i starts once it is
// queued and bucket i−1 has started. Before a round's first bucket, one
// control exchange (BeginBuckets) checks that every process holds the same
// buckets. Step queues what is left, after zeroing stale replicas, so every
// process starts every bucket, in order, every step; a process whose step
// fails still takes part and reports the failure through the step's
// closing control exchange, so every worker fails together instead of
// waiting for a collective that never comes.

// failedBatch is the batch a worker reports in the closing control
// exchange when its own step failed: the sum over the workers is then
// negative, and every worker skips the step.
const failedBatch = -1 << 40

// ordered reports whether the buckets' reductions are collectives over
// processes that must start in the same order everywhere.
func (t *Trainer) ordered() bool { return t.kv.NumWorkers() > 1 }

// startQueued starts, in bucket order from the chain's position, every
// queued bucket, up to the first that is neither queued nor started this
// pass (started ones are passed over: a second backward pass rewinds the
// chain to the first bucket it restarts). Only one goroutine runs the
// chain at a time; one that finds it running leaves its bucket queued for
// the runner, which looks again before it stops.
func (t *Trainer) startQueued() {
	t.chainMu.Lock()
	if t.chainBusy {
		t.chainMu.Unlock()
		return
	}
	t.chainBusy = true
	finished := false
	defer func() { // a panic inside startBucket: free the chain
		if !finished {
			t.chainMu.Lock()
			t.chainBusy = false
			t.chainMu.Unlock()
		}
	}()
	for t.chainNext < len(t.buckets) {
		b := t.buckets[t.chainNext]
		b.mu.Lock()
		if b.launched {
			b.mu.Unlock()
			t.chainNext++
			continue
		}
		if !b.queued {
			b.mu.Unlock()
			break
		}
		l := &launch{started: make(chan struct{})}
		b.queued = false
		b.launched, b.done, b.zeros = true, make(chan struct{}), nil
		b.finish = l.wait
		done := b.done
		b.mu.Unlock()
		t.chainNext++
		first := !t.chainBegun
		t.chainBegun = true
		t.chainMu.Unlock()
		t.startBucket(b, done, l, first)
		t.chainMu.Lock()
	}
	// Free the chain in the critical section that found nothing more to
	// start: a goroutine that queues its bucket after this sees the chain
	// free and runs it (freed later, it would leave the bucket queued
	// until Step).
	t.chainBusy = false
	finished = true
	t.chainMu.Unlock()
}

// launch hands one launch of a bucket's reduction from the chain to whoever
// waits for it. It belongs to that launch alone: a second backward pass
// that restarts the bucket (on another context, while this waiter is
// still here) makes a new one instead of clearing this one's finish.
type launch struct {
	started chan struct{} // closed once finish is set
	finish  func()        // waits for the reduction and closes the bucket's done
}

// wait is a bucket's finish from its launch on: it waits until the chain
// has started the reduction (or failed to), then runs the finish that
// startBucket set.
func (l *launch) wait() {
	<-l.started
	l.finish()
}

// rewindChain makes the chain start again at bucket b, which a second
// backward pass has restarted after its reduction (ordered mode): every
// process runs the same passes, so every process starts it again in the
// same place of its sequence.
func (t *Trainer) rewindChain(b *bucket) {
	i := slices.Index(t.buckets, b)
	t.chainMu.Lock()
	if i >= 0 && i < t.chainNext {
		t.chainNext = i
	}
	t.chainMu.Unlock()
}

// startBucket starts bucket b's reduction (after the round's handshake
// when first); done is closed when it is complete or failed, and
// l.started once the reduction has been handed to the kvstore (or has
// failed). A failure, a panic of the kvstore's (an nd error) included,
// fails this and every later bucket of the round without another
// collective here.
// A failure of the collective itself (a dead worker, a timeout) is every
// worker's; a local one on a single worker (its host memory exhausted)
// leaves the others waiting for its collectives until the deadline. The
// reduction progresses in the background; whoever needs its result first
// (Step, or a second backward pass) waits through b.finish, which tells
// the collective library that someone now waits.
func (t *Trainer) startBucket(b *bucket, done chan struct{}, l *launch, first bool) {
	kv := t.kv.(kvstore.AsyncAllReducer)
	var once sync.Once
	finish := func(wait func() error, err error) func() {
		return func() {
			once.Do(func() {
				if wait != nil {
					err = wait()
				}
				b.mu.Lock()
				b.err = err
				b.mu.Unlock()
				close(done)
			})
		}
	}
	t.chainMu.Lock()
	err := t.chainErr
	t.chainMu.Unlock()
	var wait func() error
	if err == nil {
		err = nd.Catch(func() {
			if first {
				if err := kv.BeginBuckets(t.bucketKeys()); err != nil {
					nd.Panicf("gluon.Trainer", nd.ErrDevice, "%v", err)
				}
			}
			var err error
			if wait, err = kv.StartAllReduce(b.flats); err != nil {
				nd.Panicf("gluon.Trainer", nd.ErrDevice, "%v", err)
			}
		})
	}
	if err != nil {
		t.chainMu.Lock()
		if t.chainErr == nil {
			t.chainErr = err
		}
		t.chainMu.Unlock()
		wait = nil
	}
	l.finish = finish(wait, err)
	close(l.started)
	if err != nil {
		l.finish()
	}
}

// bucketKeys lists, per bucket, the names of its parameters.
func (t *Trainer) bucketKeys() [][]string {
	out := make([][]string, len(t.buckets))
	for k, b := range t.buckets {
		for _, i := range b.params {
			out[k] = append(out[k], t.params[i].Name())
		}
	}
	return out
}

// resetChain starts the chain of a new round.
func (t *Trainer) resetChain() {
	t.chainMu.Lock()
	t.chainNext, t.chainBegun, t.chainErr = 0, false, nil
	t.chainMu.Unlock()
}

// reduceOrdered completes a round over several processes: it queues every
// bucket not started yet (zeroing stale replicas first), starts them in
// order, waits for all of them, and then runs the step's closing control
// exchange, which sums the workers' batches and checks that they updated
// the same parameters. failed is this worker's own error so far (a stale
// gradient); the worker still takes part, so that every worker fails
// together. It returns the global batch.
func (t *Trainer) reduceOrdered(fresh [][]int, batch int, failed error) (int, error) {
	var err error
	if t.summedAt != nil && t.sameStamps(t.summedAt) {
		// A failed step (on every worker: they fail together) summed
		// these very gradients already: a retry (StepIgnoreStale after a
		// stale error) must not sum them again.
		t.endRound()
	} else {
		err = t.reduceBucketsOrdered(fresh)
	}
	t.summedAt = nil
	summed := err == nil
	if failed != nil {
		err = failed
	}
	// The keys of the parameters to update; a failed worker names all
	// those that train, as the others do in the usual case, so that they
	// read its failure from the batch sum.
	var keys []string
	for i, p := range t.params {
		if len(fresh[i]) > 0 || (err != nil && t.active(i)) {
			keys = append(keys, p.Name())
		}
	}
	if err != nil {
		batch = failedBatch
	}
	global, cerr := t.kv.BeginStep(keys, batch)
	if summed && (err != nil || cerr != nil || global < 0) {
		t.summedAt = t.currentStamps() // the gradients hold their sums now
	}
	switch {
	case err != nil:
		return 0, err
	case cerr != nil:
		return 0, errorf("trainer: %v", cerr)
	case global < 0:
		return 0, errorf("trainer: another worker's step failed (its own error says why); the step is skipped on every worker")
	}
	return global, nil
}

// reduceBucketsOrdered queues, starts and waits for every bucket of the
// round, and returns the first error, after all of them are done.
func (t *Trainer) reduceBucketsOrdered(fresh [][]int) error {
	defer t.endRound()
	t.overlapped = 0
	var first error
	var keep [][2]*nd.NDArray
	for _, b := range t.buckets {
		b.mu.Lock()
		launched, queued, rerun := b.launched, b.queued, b.rerun && !b.onlyFrozenLeftLocked(t)
		b.mu.Unlock()
		if launched {
			t.overlapped++
		}
		if launched || queued {
			continue
		}
		if rerun && first == nil {
			first = errorf("trainer: the gradients of %s were summed during a backward pass, then a later backward pass wrote some of them again but not all of them on every context, so others hold sums; "+
				"run each backward pass on every context, accumulate with GradAdd, or set TrainerOpts.NoOverlap", b.names(t))
		}
		k, _ := t.prepareSum(b, fresh)
		keep = append(keep, k...)
		b.mu.Lock()
		b.queued = true
		b.mu.Unlock()
	}
	t.startQueued()
	t.waitBuckets()
	restoreKept(keep)
	for _, b := range t.buckets {
		b.mu.Lock()
		err := b.err
		b.mu.Unlock()
		if err != nil && first == nil {
			first = errorf("trainer: reducing the gradients of %s: %v", b.names(t), err)
		}
	}
	return first
}

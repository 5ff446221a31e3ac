package data

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Iterator runs one epoch of a DataLoader:
//
//	it := loader.Iter(goctx)
//	defer it.Close()
//	for it.Next() {
//		b := it.Batch()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// Batches come in sampler order whichever worker finishes first. The first
// error from a sample (see SampleError) stops the epoch at once: batches
// after it are never delivered, and batches before it may not be either
// when several workers run. Next, Batch and Err belong to one goroutine;
// Close may be called from any goroutine, any number of times.
//
// Workers collate samples in host memory; Next copies each batch to the
// loader's context, so the batch arrays are created by the goroutine that
// calls Next and belong to the nd.Scope open there. The caller owns them
// (release them, or let a scope do it).
type Iterator struct {
	l       *DataLoader
	epoch   int
	batches [][]int
	parent  context.Context
	p       *pipeline
	b       *builder // Workers == 0 only

	next   int // batches delivered so far
	cur    Batch
	done   bool
	err    error
	closed atomic.Bool
}

// Epoch returns the number of the epoch the iterator runs.
func (it *Iterator) Epoch() int { return it.epoch }

// Len returns the number of batches in the epoch.
func (it *Iterator) Len() int { return len(it.batches) }

// Batch returns the batch loaded by the last Next that returned true.
func (it *Iterator) Batch() Batch { return it.cur }

// Err returns the error that ended the epoch, nil if it ran to its end or
// was closed. A failed sample gives a *SampleError (errors.As finds it); a
// cancelled goctx gives an error that wraps goctx.Err().
func (it *Iterator) Err() error { return it.err }

// Next loads the next batch and reports whether there was one. It returns
// false at the end of the epoch, after an error, a cancellation or Close;
// all of the epoch's goroutines have stopped by then.
func (it *Iterator) Next() bool {
	if it.done {
		return false
	}
	it.cur = Batch{}
	if it.next == len(it.batches) || it.stopping() {
		it.finish()
		return false
	}
	h, err := it.take()
	if err != nil {
		it.p.fail(err)
	}
	if h != nil && it.stopping() { // cancelled or closed while waiting
		it.l.pool.Put(h)
		h = nil
	}
	if h == nil {
		it.finish()
		return false
	}
	b, err := h.toND(it.l.o.Session, it.l.o.Context)
	it.l.pool.Put(h)
	if err != nil {
		it.p.fail(err)
		it.finish()
		return false
	}
	it.cur = b
	it.next++
	return true
}

// stopping reports whether the epoch has been stopped. It asks goctx
// too: a cancelled parent closes its own Done channel before it cancels
// the pipeline's context derived from it.
func (it *Iterator) stopping() bool {
	return stopped(it.p.ctx) || it.parent.Err() != nil
}

// take returns the next host batch, or nil when the epoch has stopped.
func (it *Iterator) take() (*hostBatch, error) {
	if it.b != nil {
		return it.b.build(it.p.ctx.Done(), it.batches[it.next])
	}
	done := it.p.ctx.Done()
	select {
	case slot := <-it.p.pending:
		select {
		case r := <-slot:
			return r.h, r.err
		case <-done:
			return nil, nil
		}
	case <-done:
		return nil, nil
	}
}

// finish stops the goroutines and settles Err.
func (it *Iterator) finish() {
	it.done = true
	it.p.shutdown()
	switch f := it.p.firstFailure(); {
	case f != nil:
		it.err = f
	case it.next == len(it.batches), it.closed.Load():
	case it.parent.Err() != nil:
		it.err = fmt.Errorf("data: epoch %d stopped after %d of %d batches: %w",
			it.epoch, it.next, len(it.batches), it.parent.Err())
	}
}

// Close stops the epoch: workers stop, loaded batches not yet taken are
// dropped, and later calls of Next return false. It is safe after the end
// of the epoch, after a partial one, and more than once.
func (it *Iterator) Close() error {
	it.closed.Store(true)
	it.p.shutdown()
	return nil
}

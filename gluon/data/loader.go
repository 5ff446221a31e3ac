package data

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// LoaderOpts configures a DataLoader. The zero value of every field but
// BatchSize is a sensible default.
type LoaderOpts struct {
	// BatchSize is the number of samples per batch (> 0).
	BatchSize int
	// Shuffle visits the samples in a random order drawn from Seed and the
	// epoch (a RandomSampler); otherwise in index order.
	Shuffle bool
	// Seed seeds the shuffle and every sample's generator:
	// SampleRNG(Seed, epoch, index).
	Seed uint64
	// LastBatch is the policy for an incomplete last batch (default Keep).
	LastBatch LastBatch
	// Workers is the number of goroutines that load batches; 0 loads each
	// batch in the goroutine that calls Iterator.Next.
	Workers int
	// Prefetch is the depth of the queue of batches handed to workers
	// ahead of the consumer: at most Prefetch+1 batches are being loaded
	// or wait to be taken (default 2*Workers; ignored when Workers is 0).
	// A value below Workers leaves workers idle.
	Prefetch int
	// Context is where batch arrays are created (default cpu(0), the zero
	// value).
	Context ctx.Context
	// Session, when set, makes the batch arrays with that session's
	// creation methods, so that they belong to it and its scopes track
	// them (see autograd.Session); nil makes them in the default session.
	Session *nd.Session
	// Sampler, when set, replaces the sequential or shuffled order (Gluon's
	// sampler argument); Shuffle must then be false.
	Sampler Sampler
	// Collate says how each field of the samples is batched: entry 0 for
	// Data, 1+i for Extra[i]; fields without an entry are stacked (see
	// Collate).
	Collate []Collate
}

// DataLoader loads a Dataset in batches on a context, like Gluon's
// DataLoader. Each call of Iter runs one epoch; the loader counts epochs,
// starting at 0, so that every epoch gets its own shuffle and its own
// per-sample generators (SampleRNG(Seed, epoch, index)). The batches of an
// epoch depend only on the dataset, the options and the epoch number,
// never on the number of workers or on timing.
//
// A DataLoader is safe for concurrent use; its iterators are not.
type DataLoader struct {
	ds    Dataset
	o     LoaderOpts
	bs    *BatchSampler
	pool  sync.Pool // of *hostBatch, reused across batches and epochs
	mu    sync.Mutex
	epoch int
}

// NewDataLoader returns a loader of ds configured by o.
func NewDataLoader(ds Dataset, o LoaderOpts) (*DataLoader, error) {
	if ds == nil {
		return nil, fmt.Errorf("data: NewDataLoader: nil dataset")
	}
	if o.Workers < 0 {
		return nil, fmt.Errorf("data: NewDataLoader: negative Workers %d", o.Workers)
	}
	if o.Prefetch < 0 {
		return nil, fmt.Errorf("data: NewDataLoader: negative Prefetch %d", o.Prefetch)
	}
	if o.Prefetch == 0 {
		o.Prefetch = 2 * o.Workers
	}
	if err := ctx.Check(o.Context); err != nil {
		return nil, fmt.Errorf("data: NewDataLoader: %w", err)
	}
	s := o.Sampler
	switch {
	case s != nil && o.Shuffle:
		return nil, fmt.Errorf("data: NewDataLoader: Shuffle must be false when a Sampler is given")
	case s == nil && o.Shuffle:
		s = RandomSampler{N: ds.Len(), Seed: o.Seed}
	case s == nil:
		s = SequentialSampler{N: ds.Len()}
	}
	bs, err := NewBatchSampler(s, o.BatchSize, o.LastBatch)
	if err != nil {
		return nil, fmt.Errorf("data: NewDataLoader: %w", err)
	}
	o.Collate = slices.Clone(o.Collate) // the workers read it
	l := &DataLoader{ds: ds, o: o, bs: bs}
	l.pool.New = func() any { return new(hostBatch) }
	return l, nil
}

// Len returns the number of batches in the next epoch (the one the next
// Iter runs). It is the same for every epoch except under Rollover.
func (l *DataLoader) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bs.Len(l.epoch)
}

// Epoch returns the number of the epoch the next Iter runs.
func (l *DataLoader) Epoch() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// SetEpoch sets the number of the epoch the next Iter runs, to resume
// training or replay an epoch. It panics with an *nd.Error if epoch < 0.
func (l *DataLoader) SetEpoch(epoch int) {
	checkEpoch("data.DataLoader.SetEpoch", epoch)
	l.mu.Lock()
	l.epoch = epoch
	l.mu.Unlock()
}

// Iter starts the next epoch and advances the epoch counter. goctx (nil
// means context.Background) cancels the epoch: its workers stop and Next
// returns false with Err reporting the cancellation. The iterator must be
// closed (or run to its end) to stop its workers.
func (l *DataLoader) Iter(goctx context.Context) *Iterator {
	l.mu.Lock()
	epoch := l.epoch
	l.epoch++
	l.mu.Unlock()
	if goctx == nil {
		goctx = context.Background()
	}
	c, cancel := context.WithCancel(goctx)
	it := &Iterator{
		l: l, epoch: epoch, batches: l.bs.Batches(epoch), parent: goctx,
		p: &pipeline{ctx: c, cancel: cancel},
	}
	if l.o.Workers == 0 {
		it.b = newBuilder(l.ds, l.o.Collate, l.o.Seed, epoch, &l.pool)
		return it
	}
	it.p.start(l, epoch, it.batches)
	// A safety net for an iterator dropped without Close: its workers
	// hold only the pipeline, so the iterator can be collected.
	runtime.AddCleanup(it, func(cancel context.CancelFunc) { cancel() }, cancel)
	return it
}

// pipeline is the state shared by an iterator and its goroutines.
type pipeline struct {
	ctx     context.Context
	cancel  context.CancelFunc
	pending chan chan result // one slot per batch, in sampler order
	wg      sync.WaitGroup
	pool    *sync.Pool

	mu      sync.Mutex
	failure error // the first sample error
	stop    sync.Once
}

type result struct {
	h   *hostBatch
	err error
}

type job struct {
	indices []int
	slot    chan result
}

// start launches a dispatcher, which hands out batches in order, and the
// workers.
func (p *pipeline) start(l *DataLoader, epoch int, batches [][]int) {
	p.pool = &l.pool
	p.pending = make(chan chan result, l.o.Prefetch)
	jobs := make(chan job)
	done := p.ctx.Done()
	p.wg.Add(1 + l.o.Workers)
	go func() {
		defer p.wg.Done()
		defer close(jobs)
		for _, idx := range batches {
			slot := make(chan result, 1)
			select {
			case p.pending <- slot: // blocks while Prefetch batches are ahead
			case <-done:
				return
			}
			select {
			case jobs <- job{indices: idx, slot: slot}:
			case <-done:
				return
			}
		}
	}()
	for range l.o.Workers {
		b := newBuilder(l.ds, l.o.Collate, l.o.Seed, epoch, &l.pool)
		go func() {
			defer p.wg.Done()
			for {
				select {
				case j, ok := <-jobs:
					if !ok {
						return
					}
					// A failure goes to its slot: the consumer reports it
					// when it reaches that batch, so that the error is the
					// first in batch order whatever the timing.
					h, err := b.build(done, j.indices)
					j.slot <- result{h, err} // buffered: never blocks
				case <-done:
					return
				}
			}
		}()
	}
}

// fail records the first error and stops the epoch (the consumer calls
// it, in batch order).
func (p *pipeline) fail(err error) {
	p.mu.Lock()
	if p.failure == nil {
		p.failure = err
	}
	p.mu.Unlock()
	p.cancel()
}

// firstFailure returns the error recorded by fail, if any.
func (p *pipeline) firstFailure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failure
}

// shutdown stops the goroutines, waits for them and returns the host
// buffers of batches that were loaded but never taken. It is idempotent.
func (p *pipeline) shutdown() {
	p.stop.Do(func() {
		p.cancel()
		p.wg.Wait()
		for {
			select {
			case slot := <-p.pending:
				select {
				case r := <-slot:
					if r.h != nil {
						p.pool.Put(r.h)
					}
				default:
				}
			default:
				return
			}
		}
	})
}

package data

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Batch is one batch from a DataLoader.
type Batch struct {
	// Data holds the samples' data stacked along a new first axis:
	// float32 of shape [B, sample shape...]. uint8 values are converted
	// unscaled.
	Data *nd.NDArray
	// Label holds the samples' labels: float32 of shape [B].
	Label *nd.NDArray
	// Extra holds the samples' Extra arrays, each batched as Data is:
	// float32 of shape [B, shape...] (padded where LoaderOpts.Collate
	// says so).
	Extra []*nd.NDArray
	// Lengths holds, for each padded field (index 0 Data, 1+i Extra[i]),
	// every sample's length along the padded axis before padding (the
	// lengths a CTC loss or an attention mask takes); nil for a field that
	// is stacked.
	Lengths [][]int
	// Indices are the dataset indices of the samples, in batch order. The
	// slice must not be modified.
	Indices []int
}

// Release gives the batch's arrays back to their context's pool.
func (b Batch) Release() {
	b.Data.Release()
	b.Label.Release()
	for _, e := range b.Extra {
		e.Release()
	}
}

// SampleError is the error a DataLoader reports when a sample cannot be
// loaded: Get or a transform failed or panicked, or the sample does not fit
// its batch.
type SampleError struct {
	Index int   // the sample's index in the dataset
	Epoch int   // the epoch being loaded
	Err   error // the cause; a *PanicError for a panic
}

// Error names the sample, the epoch and the cause.
func (e *SampleError) Error() string {
	return fmt.Sprintf("data: sample %d (epoch %d): %v", e.Index, e.Epoch, e.Err)
}

// Unwrap returns the cause.
func (e *SampleError) Unwrap() error { return e.Err }

// PanicError is a panic recovered while a DataLoader built a batch.
type PanicError struct {
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack
}

// Error reports the panic value; the stack is in the Stack field.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error (an *nd.Error, say).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// hostBatch is a batch collated in host memory, waiting to become
// NDArrays. Its buffers are reused through the loader's pool.
type hostBatch struct {
	fields  []hostField // Data, then each Extra
	labels  []float32
	indices []int
	samples []Sample // the batch's samples while it is collated
}

// hostField is one field of a host batch.
type hostField struct {
	data    []float32
	shape   []int // [B, sample shape...]
	lengths []int // per sample along the padded axis; nil when stacked
}

// toND copies the batch to dev as arrays of sess (the default session when
// nil). It is called by the goroutine that calls Iterator.Next, so the
// arrays belong to the session's nd.Scope open there.
func (h *hostBatch) toND(sess *nd.Session, dev ctx.Context) (b Batch, err error) {
	if sess == nil {
		sess = nd.DefaultSession()
	}
	defer func() {
		if r := recover(); r != nil {
			b.Data.Release()
			b.Label.Release()
			for _, e := range b.Extra {
				e.Release()
			}
			err = fmt.Errorf("data: copying batch to %v: %w", dev, &PanicError{Value: r, Stack: debug.Stack()})
		}
	}()
	b.Data = sess.FromSlice(dev, h.fields[0].data, h.fields[0].shape...)
	b.Label = sess.FromSlice(dev, h.labels, len(h.labels))
	for _, f := range h.fields[1:] {
		b.Extra = append(b.Extra, sess.FromSlice(dev, f.data, f.shape...))
	}
	for i, f := range h.fields {
		if f.lengths != nil {
			if b.Lengths == nil {
				b.Lengths = make([][]int, len(h.fields))
			}
			b.Lengths[i] = slices.Clone(f.lengths)
		}
	}
	b.Indices = h.indices
	return b, nil
}

// builder loads samples and collates them into host batches. Each worker
// owns one; its generator is reseeded for every sample, which gives the
// same stream as SampleRNG without allocating.
type builder struct {
	ds      Dataset
	collate []Collate
	seed    uint64
	epoch   int
	pcg     *rand.PCG
	rng     *rand.Rand
	pool    *sync.Pool // of *hostBatch
}

func newBuilder(ds Dataset, collate []Collate, seed uint64, epoch int, pool *sync.Pool) *builder {
	pcg := rand.NewPCG(0, 0)
	return &builder{ds: ds, collate: collate, seed: seed, epoch: epoch, pcg: pcg, rng: rand.New(pcg), pool: pool}
}

// build loads the samples of indices into a host batch. It returns
// (nil, nil) when done is closed before it finishes.
func (b *builder) build(done <-chan struct{}, indices []int) (h *hostBatch, err error) {
	hb := b.pool.Get().(*hostBatch)
	cur := -1
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, &SampleError{Index: cur, Epoch: b.epoch, Err: &PanicError{Value: r, Stack: debug.Stack()}}
		}
		if h == nil {
			b.pool.Put(hb)
		}
	}()
	hb.samples = hb.samples[:0]
	for _, i := range indices {
		select {
		case <-done:
			return nil, nil
		default:
		}
		cur = i
		b.pcg.Seed(sampleSeeds(b.seed, b.epoch, i))
		s, err := b.ds.Get(i, b.rng)
		if err == nil {
			err = s.Data.Validate()
		}
		for j := 0; err == nil && j < len(s.Extra); j++ {
			if err = s.Extra[j].Validate(); err != nil {
				err = fmt.Errorf("extra array %d: %w", j, err)
			}
		}
		if err != nil {
			return nil, &SampleError{Index: i, Epoch: b.epoch, Err: err}
		}
		hb.samples = append(hb.samples, s)
	}
	if err := b.collateInto(hb, indices); err != nil {
		return nil, err
	}
	clear(hb.samples) // the batch keeps no sample alive
	hb.indices = indices
	return hb, nil
}

// grow returns s resliced to length n, reallocated when too small.
func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// stopped reports whether ctx is done without blocking.
func stopped(c context.Context) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

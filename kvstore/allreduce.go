package kvstore

import (
	"fmt"
	"slices"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"golang.org/x/sync/errgroup"
)

// AllReducer is implemented by kinds that sum flat buffers in place, one
// buffer per context of this process: a Trainer's gradient buckets go
// through it. After AllReduce every buffer holds the sum of all of them,
// added in the order given, ((b0 + b1) + b2) + ..., so that the result is
// bitwise the same whichever context computed which part of it and
// bitwise the same as SumOn's.
type AllReducer interface {
	AllReduce(bufs []*nd.NDArray) error
}

// AsyncAllReducer is implemented by the distributed kinds, whose
// reductions are collectives over processes: StartAllReduce sums bufs over
// this process's contexts, starts their sum over the processes and returns
// at once; wait blocks until every buffer holds the total. The processes'
// partial sums are added in the collective library's order. Every process
// must start the same reductions (same sizes, dtypes) in the same order,
// and no buffer may be touched until its wait returns.
type AsyncAllReducer interface {
	AllReducer
	// BeginBuckets checks, collectively, that every process is about to
	// start reductions of the same buckets, keys[i] listing the keys of
	// bucket i's values; it precedes a round's first StartAllReduce.
	BeginBuckets(keys [][]string) error
	StartAllReduce(bufs []*nd.NDArray) (wait func() error, err error)
}

// AllReduce implements AllReducer. The device kind reduces with the
// backend's collective where one applies (nd.LibraryAllReduce: one pass
// in host memory over CPU contexts and one kernel over virtual GPUs of one
// card, both in the order given; NCCL between physical GPUs, whose sums
// are in NCCL's order), else on the
// contexts themselves, each one part of the buffer (reduce-scatter, then
// all-gather): each context receives 2(N−1)/N of a buffer and sends as
// much, and no context holds more than its part of the work. The local
// kind sums the whole buffer on the host and copies the sum back.
func (s *store) AllReduce(bufs []*nd.NDArray) error {
	if err := checkBuffers(bufs); err != nil {
		return err
	}
	if s.kind == "local" {
		return AllReduceOn(bufs, []ctx.Context{hostContext})
	}
	if len(bufs) > 1 {
		if done, err := nd.LibraryAllReduce(bufs); done || err != nil {
			return err
		}
	}
	owners := make([]ctx.Context, len(bufs))
	for i, b := range bufs {
		owners[i] = b.Context()
	}
	return AllReduceOn(bufs, owners)
}

// AllReduceOn sums bufs in place, in the order given (see AllReducer).
// The buffers are cut into len(owners) nearly equal parts; part k is
// summed on owners[k], where it is stored in the buffer on that context
// (or in a temporary, when no buffer lives there) and then copied into
// every other buffer. Parts on different contexts are summed concurrently.
// The buffers must be one-dimensional, of one size and dtype, on distinct
// contexts, and must not be used by anything else until it returns. Nothing
// is recorded; a failed op is returned as its *nd.Error.
func AllReduceOn(bufs []*nd.NDArray, owners []ctx.Context) error {
	if len(owners) == 0 {
		return fmt.Errorf("kvstore: all-reduce of %d buffers over no owners", len(bufs))
	}
	if err := checkBuffers(bufs); err != nil {
		return err
	}
	n := bufs[0].Size()
	if len(bufs) == 1 {
		return nil
	}
	parts := len(owners)
	res := make([]*nd.NDArray, parts) // part k's sum, on owners[k]
	var g errgroup.Group
	tree := nd.CurrentTree() // the workers run in the caller's goroutine tree
	for k, dev := range owners {
		lo, hi := k*n/parts, (k+1)*n/parts
		if lo == hi {
			continue
		}
		g.Go(func() (err error) {
			tree.Run(func() { err = nd.Catch(func() { res[k] = reducePart(bufs, dev, lo, hi) }) })
			return err
		})
	}
	err := g.Wait()
	if err == nil {
		var gather errgroup.Group
		for k, dev := range owners {
			lo, hi := k*n/parts, (k+1)*n/parts
			if res[k] != nil {
				gather.Go(func() (err error) {
					tree.Run(func() { err = nd.Catch(func() { gatherPart(bufs, res[k], dev, lo, hi) }) })
					return err
				})
			}
		}
		err = gather.Wait()
	}
	for _, r := range res {
		r.Release()
	}
	return err
}

// checkBuffers checks what every all-reduce needs: at least one buffer,
// each one-dimensional, of one size and dtype, on distinct contexts.
func checkBuffers(bufs []*nd.NDArray) error {
	if len(bufs) == 0 {
		return fmt.Errorf("kvstore: all-reduce of no buffers")
	}
	for i, b := range bufs {
		switch {
		case b == nil:
			return fmt.Errorf("kvstore: all-reduce buffer %d is nil", i)
		case b.NDim() != 1:
			return fmt.Errorf("kvstore: all-reduce buffer %d has shape %v: buffers are one-dimensional (flatten them)", i, b.Shape())
		case b.Size() != bufs[0].Size() || b.DType() != bufs[0].DType():
			return fmt.Errorf("kvstore: all-reduce buffer %d is %v %v but buffer 0 is %v %v", i, b.DType(), b.Shape(), bufs[0].DType(), bufs[0].Shape())
		}
		for _, o := range bufs[:i] {
			if o.Context() == b.Context() {
				return fmt.Errorf("kvstore: all-reduce of two buffers on %v", b.Context())
			}
		}
	}
	return nil
}

// reducePart sums elements [lo, hi) of bufs, in order, on dev, and returns
// the sum: a view of the buffer on dev, or a temporary when none is there.
func reducePart(bufs []*nd.NDArray, dev ctx.Context, lo, hi int) *nd.NDArray {
	own := slices.IndexFunc(bufs, func(b *nd.NDArray) bool { return b.Context() == dev })
	var acc *nd.NDArray
	if own == 0 {
		acc = bufs[0].Span(lo, hi) // the sum starts with this part: add in place
	} else {
		first := bufs[0].Span(lo, hi)
		acc = nd.PersistentSession().CopyOf(first, dev)
		first.Release()
	}
	for i, b := range bufs[1:] {
		part := b.Span(lo, hi)
		if i+1 == own {
			nd.AddTo(acc, part) // (b0 + ... + b(i-1)) + bi, as in order
		} else {
			moved := nd.PersistentSession().CopyOf(part, dev)
			nd.AddTo(acc, moved)
			moved.Release()
		}
		part.Release()
	}
	if own > 0 {
		mine := bufs[own].Span(lo, hi)
		nd.Assign(mine, acc)
		acc.Release()
		acc = mine
	}
	return acc
}

// gatherPart copies the sum of part [lo, hi), which lives on dev, into
// every buffer but the one it is a view of.
func gatherPart(bufs []*nd.NDArray, sum *nd.NDArray, dev ctx.Context, lo, hi int) {
	for _, b := range bufs {
		if b.Context() == dev {
			continue
		}
		part := b.Span(lo, hi)
		nd.Assign(part, sum)
		part.Release()
	}
}

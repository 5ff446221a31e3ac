package dist

import (
	"fmt"
	"time"

	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/nd"
)

// AllReduce sums bufs (one flat buffer per context of this process, of
// one size and dtype) over the contexts and the processes, and writes the
// sum into every buffer. It is StartAllReduce followed by its wait.
func (s *Store) AllReduce(bufs []*nd.NDArray) error {
	wait, err := s.startAllReduce(bufs, true)
	if err != nil {
		return err
	}
	return wait()
}

// StartAllReduce implements kvstore.AsyncAllReducer for a Trainer's
// gradient buckets: it sums bufs over this process's contexts (on the
// host, or on the first buffer's context with SumOnDevice), copies the sum
// into an MPI buffer and starts a non-blocking allreduce of it
// (MPI_Iallreduce), then returns. The returned wait blocks until the sum
// over the processes is complete and writes it into every buffer. Every
// process must start the same reductions, of the same sizes, in the same
// order; the bufs must not be touched until wait returns.
//
// The reduction progresses behind the caller's computing (the MPI
// package's progress thread), except for the last bucket of the first
// backward pass of a round that BeginBuckets began: Step usually waits for
// it at once, so it is left to the waits (mpi.Comm.IallreduceForWait; a
// bucket that a second backward pass starts again progresses in the
// background).
func (s *Store) StartAllReduce(bufs []*nd.NDArray) (wait func() error, err error) {
	s.mu.Lock()
	s.started++
	last := s.buckets > 0 && s.started == s.buckets
	if last {
		s.stats.Foreground++
	}
	s.mu.Unlock()
	return s.startAllReduce(bufs, last)
}

// startAllReduce is StartAllReduce; soon says that the wait follows at
// once (mpi.Comm.IallreduceForWait).
func (s *Store) startAllReduce(bufs []*nd.NDArray, soon bool) (wait func() error, err error) {
	if len(bufs) == 0 {
		return nil, s.errorf("all-reduce of no buffers")
	}
	n, dt := bufs[0].Size(), bufs[0].DType()
	for i, b := range bufs {
		if b.NDim() != 1 || b.Size() != n || b.DType() != dt {
			return nil, s.errorf("all-reduce buffer %d is %v %v, buffer 0 %v %v", i, b.DType(), b.Shape(), dt, bufs[0].Shape())
		}
	}
	mdt := mpi.Float32
	switch dt {
	case nd.Float32:
	case nd.Float64:
		mdt = mpi.Float64
	default:
		return nil, s.errorf("all-reduce of %v buffers (float32 and float64 only)", dt)
	}
	t0 := time.Now()
	buf, err := s.takeBuffer(n * dt.Size())
	if err != nil {
		return nil, err
	}
	view := bufView(buf, dt, 0, n)
	if len(bufs) == 1 {
		bufs[0].ReadInto(view)
	} else {
		dev := host
		if s.opts.SumOnDevice {
			dev = bufs[0].Context()
		}
		sum := kvstore.SumOn(dev, bufs)
		sum.ReadInto(view)
		sum.Release()
	}
	start := s.comm.Iallreduce
	if soon {
		start = s.comm.IallreduceForWait
	}
	req, err := start(buf, mdt, n, mpi.Sum)
	if err != nil {
		s.giveBuffer(buf)
		return nil, s.errorf("all-reduce of a %d-byte bucket: %w", n*dt.Size(), err)
	}
	return func() error {
		err := req.Wait()
		s.mu.Lock()
		s.stats.Allreduces++
		s.stats.Bytes += int64(n * dt.Size())
		if err == nil {
			s.stats.Background += req.CompletedAt().Sub(t0)
		}
		s.mu.Unlock()
		if err != nil {
			return s.errorf("all-reduce of a %d-byte bucket: %w", n*dt.Size(), err)
		}
		for _, b := range bufs {
			b.WriteFrom(view)
		}
		s.giveBuffer(buf)
		return nil
	}, nil
}

// takeBuffer returns an MPI buffer of at least nbytes from the store's
// free list, or a new one.
func (s *Store) takeBuffer(nbytes int) (*mpi.Buffer, error) {
	s.mu.Lock()
	for i, b := range s.free {
		if b.Len() >= nbytes {
			s.free = append(s.free[:i], s.free[i+1:]...)
			s.mu.Unlock()
			return b, nil
		}
	}
	s.mu.Unlock()
	b, err := mpi.Alloc(nbytes)
	if err != nil {
		return nil, fmt.Errorf("kvstore %s: bucket buffer: %w", s.Type(), err)
	}
	return b, nil
}

// giveBuffer puts b back on the free list.
func (s *Store) giveBuffer(b *mpi.Buffer) {
	s.mu.Lock()
	s.free = append(s.free, b)
	s.mu.Unlock()
}

// bufView returns n elements of b from element off, as a []float32 or
// []float64.
func bufView(b *mpi.Buffer, dt nd.DType, off, n int) any {
	if dt == nd.Float64 {
		return b.Float64s()[off : off+n]
	}
	return b.Float32s()[off : off+n]
}

// BeginBuckets implements kvstore.AsyncAllReducer: one control exchange
// checks that every worker is about to reduce the same buckets (keys[i]
// lists the keys whose values bucket i holds, in order, with their shapes
// and dtypes), so that a mismatch fails on every worker with an error
// instead of a collective over buffers of different sizes.
func (s *Store) BeginBuckets(keys [][]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var flat []string
	lens := make([]int, len(keys))
	for i, k := range keys {
		flat = append(flat, k...)
		lens[i] = len(k)
	}
	shapes, err := s.shapesOf("bucket", flat)
	if err != nil {
		return err
	}
	t0 := time.Now()
	_, err = s.control(fmt.Sprintf("gradient buckets of %v keys", lens), flat, shapes, 0)
	s.stats.Time += time.Since(t0)
	s.buckets, s.started = len(keys), 0
	return err
}

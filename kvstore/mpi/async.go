package mpi

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Request is a non-blocking collective in flight (Iallreduce). Wait for
// it before touching its buffer.
type Request struct {
	c    *Comm
	what string
	buf  *Buffer
	done chan error // receives the result once
	err  error
	fin  bool
	at   time.Time // when the MPI goroutine saw it complete
}

// pending is a started non-blocking collective, owned by the MPI
// goroutine.
type pending struct {
	h reqHandle
	r *Request
}

// Iallreduce starts reducing the first count elements of buf over all
// processes with op, in place (MPI_Iallreduce), and returns at once. The
// reduction progresses on the MPI goroutine while the caller goes on;
// Wait returns when every process holds the result. Every process must
// start its collectives, blocking and non-blocking, in the same order;
// several may be in flight at once. buf must not be read or written
// until Wait returns.
func (c *Comm) Iallreduce(buf *Buffer, dt DType, count int, op Op) (*Request, error) {
	if err := checkBuf("iallreduce", buf, dt, count); err != nil {
		return nil, err
	}
	r := &Request{c: c, what: fmt.Sprintf("iallreduce(%s, %d×%s)", op, count, dt), buf: buf, done: make(chan error, 1)}
	err := c.collective(r.what+" start", buf, func() error {
		h, err := c.impl.iallreduce(buf, dt, count, op)
		if err != nil {
			return err
		}
		if h == nil { // nothing to do
			r.at = time.Now()
			r.done <- nil
			return nil
		}
		c.inflight = append(c.inflight, pending{h, r})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Wait returns when the collective has completed on this process, or
// (one goroutine at a time)
// with an error wrapping ErrTimeout when it has not within the
// communicator's deadline (which then breaks the communicator, as a
// blocking collective's would). Later calls return the same result.
func (r *Request) Wait() error {
	if r.fin {
		return r.err
	}
	atomic.AddInt32(&r.c.flags[1], 1)
	defer atomic.AddInt32(&r.c.flags[1], -1)
	timer := time.NewTimer(r.c.Timeout())
	defer timer.Stop()
	select {
	case err := <-r.done:
		if err != nil {
			err = r.c.fail(r.what, nil, 0, err)
		}
		r.err = err
	case <-timer.C:
		r.err = r.c.fail(r.what, r.buf, r.c.Timeout(), ErrTimeout)
	}
	r.fin = true
	return r.err
}

// CompletedAt returns when the collective completed (seen by the MPI
// goroutine, which tests it every few microseconds); it is valid after
// Wait returned nil.
func (r *Request) CompletedAt() time.Time { return r.at }

// wake counts a call about to be handed to the MPI goroutine: while any
// is pending, the progress loop returns, so that the goroutine takes it.
// A counter, not a flag: a wake raised while the goroutine takes an
// earlier call is not lost. The goroutine calls unwake for each call it
// takes, and a caller that gives up handing its call over calls it too.
func (c *Comm) wake() { atomic.AddInt32(&c.flags[0], 1) }

// unwake takes back one wake.
func (c *Comm) unwake() { atomic.AddInt32(&c.flags[0], -1) }

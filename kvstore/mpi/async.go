package mpi

import (
	"fmt"
	"sync"
	"time"
)

// Request is a non-blocking collective in flight (Iallreduce). Wait for
// it before touching its buffer.
type Request struct {
	mu   sync.Mutex // one Wait at a time; later ones wait for it
	c    *Comm
	what string
	buf  *Buffer       // what the collective runs on (a padded scratch, or the caller's)
	back func(ok bool) // run once it is over, unless it timed out (copies a padded result back)
	h    reqHandle
	err  error
	fin  bool
	at   time.Time // when it completed
}

// Iallreduce starts reducing the first count elements of buf over all
// processes with op, in place (MPI_Iallreduce), and returns at once. The
// reduction progresses on the progress thread while the caller goes on;
// Wait returns when every process holds the result. Every process must
// start its collectives, blocking and non-blocking, in the same order;
// several may be in flight at once. buf must not be read or written
// until Wait returns.
func (c *Comm) Iallreduce(buf *Buffer, dt DType, count int, op Op) (*Request, error) {
	return c.iallreduce(buf, dt, count, op, true)
}

// IallreduceForWait is Iallreduce for a collective whose Wait comes at
// once, such as the last gradient bucket of a backward pass: the progress
// thread is not woken for it (waking it costs the caller's core a context
// switch or two), so until Wait it progresses only inside this process's
// other MPI calls (the starts and waits of other collectives).
func (c *Comm) IallreduceForWait(buf *Buffer, dt DType, count int, op Op) (*Request, error) {
	return c.iallreduce(buf, dt, count, op, false)
}

func (c *Comm) iallreduce(buf *Buffer, dt DType, count int, op Op, background bool) (*Request, error) {
	if err := checkBuf("iallreduce", buf, dt, count); err != nil {
		return nil, err
	}
	r := &Request{c: c, what: fmt.Sprintf("iallreduce(%s, %d×%s)", op, count, dt), buf: buf}
	timeout, err := c.usable(r.what + " start")
	if err != nil {
		return nil, err
	}
	if count == 0 { // nothing to do
		r.fin, r.at = true, time.Now()
		return r, nil
	}
	if r.buf, count, r.back, err = c.padded(buf, dt, count); err != nil {
		return nil, c.fail(r.what+" start", nil, timeout, err)
	}
	h, err := c.impl.start(kindAllreduce, r.buf, dt, count, int(op), timeout, background)
	if err != nil {
		r.back(false)
		return nil, c.fail(r.what+" start", nil, timeout, err)
	}
	r.h = h
	return r, nil
}

// Wait returns when the collective has completed on this process, or
// with an error wrapping ErrTimeout when it has not within the
// communicator's deadline (which then breaks the communicator, as a
// blocking collective's would). It drives the collectives in flight on
// the caller's thread while it waits. Later calls, and calls from other
// goroutines meanwhile, return the same result once it is known.
func (r *Request) Wait() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fin {
		return r.err
	}
	r.fin = true
	c := r.c
	timeout := c.Timeout()
	ago, done, err := c.impl.wait(r.h, timeout, c.spin, yieldFor, c.poll)
	switch {
	case !done:
		r.err = c.fail(r.what, r.buf, timeout, ErrTimeout) // r.buf pinned: MPI may still write to it
	case err != nil:
		r.back(false)
		r.err = c.fail(r.what, nil, 0, err)
	default:
		r.at = time.Now().Add(-ago)
		r.back(true)
	}
	return r.err
}

// CompletedAt returns when the collective completed (seen by whichever
// thread tested it, the progress thread or a waiter); it is valid after
// Wait returned nil.
func (r *Request) CompletedAt() time.Time { return r.at }

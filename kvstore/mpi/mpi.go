// Package mpi binds the small part of MPI that data-parallel training
// needs: initialisation with thread support, rank and size, in-place
// allreduce (blocking, and non-blocking with Iallreduce), broadcast,
// barrier and finalisation, over MPI_COMM_WORLD.
//
// The binding uses cgo and links the system MPI through pkg-config
// (OpenMPI's ompi-c, or mpich); it is compiled only with the build tag
// mpi:
//
//	apt-get install libopenmpi-dev openmpi-bin
//	go build -tags mpi ./...
//	mpirun -np 4 ./program
//
// Without the tag the package is pure Go and Init returns ErrNotBuilt, so
// programs that merely offer a distributed mode still build everywhere.
//
// Threading: MPI is initialised with MPI_THREAD_FUNNELED and every MPI call
// is made by one goroutine locked to its OS thread (the thread that called
// MPI_Init_thread); the exported methods hand their work to it and wait.
// The level MPI actually provided is checked and reported by ThreadLevel.
//
// Memory: collectives work on Buffers allocated with Alloc. Under -tags mpi
// their memory comes from C's allocator, outside the Go heap, so MPI may
// hold pointers to it for as long as a collective runs, as the cgo pointer
// rules require.
//
// Failure: every collective has a deadline (SetTimeout). Allreduce, Bcast
// and Barrier are MPI's blocking calls, run on the MPI thread while the
// caller waits with a timer; Iallreduce starts a non-blocking one, which
// the MPI thread drives while the caller goes on, and Request.Wait waits
// for it with the same deadline. Finalize must come after the Wait of
// every collective started. A collective that has not completed
// by the deadline returns an error wrapping ErrTimeout and the
// communicator is marked broken: every later call returns the same error
// at once, since MPI gives no way to cancel a started collective (its
// buffer is never freed: MPI may still write to it). A program should then
// exit with a non-zero status; mpirun ends the rest of the job. MPI errors
// are returned (MPI_ERRORS_RETURN), never aborted.
package mpi

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ErrNotBuilt is returned by Init in binaries built without -tags mpi.
var ErrNotBuilt = errors.New("mpi: this binary was built without MPI support; rebuild it with `go build -tags mpi` (needs libopenmpi-dev) and launch it with mpirun")

// ErrTimeout is wrapped by the error of a collective that missed its
// deadline.
var ErrTimeout = errors.New("mpi: collective timed out")

// DType is the element type of a collective.
type DType int

// The element types.
const (
	Float32 DType = iota
	Float64
	Int64
)

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	if d == Float32 {
		return 4
	}
	return 8
}

// String returns "float32", "float64" or "int64".
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int64:
		return "int64"
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// Op is a reduction operation.
type Op int

// The reduction operations.
const (
	Sum Op = iota
	Max
	Min
)

// String returns "sum", "max" or "min".
func (o Op) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// ThreadLevel is an MPI thread-support level.
type ThreadLevel int

// The MPI thread-support levels, in increasing order.
const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

// String returns the MPI name of the level.
func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("ThreadLevel(%d)", int(l))
}

// DefaultTimeout is the deadline of a collective unless SetTimeout or the
// environment variable GOLUON_MPI_TIMEOUT (a Go duration, e.g. "90s")
// says otherwise. It is long enough for a slow worker's forward and
// backward pass and short enough that a dead worker is noticed.
const DefaultTimeout = 5 * time.Minute

// Comm is MPI_COMM_WORLD of an initialised process. Its methods are safe
// for concurrent use; the calls are serialised on the MPI goroutine.
type Comm struct {
	rank, size int
	level      ThreadLevel
	calls      chan func()

	mu      sync.Mutex
	timeout time.Duration
	broken  error
	done    bool
	impl    commImpl

	inflight []pending // non-blocking collectives started (MPI goroutine only)
	flags    *[2]int32 // wake (a call waits for the MPI goroutine) and waiting (Waits blocked), in C memory
}

var (
	worldMu sync.Mutex
	world   *Comm
	initErr error
)

// Init initialises MPI once per process and returns the world
// communicator; later calls return the same one (or the same error).
// Launched by mpirun, rank and size come from its environment
// (OMPI_COMM_WORLD_RANK and friends); started directly, the process is a
// world of one.
func Init() (*Comm, error) {
	worldMu.Lock()
	defer worldMu.Unlock()
	if world != nil || initErr != nil {
		return world, initErr
	}
	world, initErr = initWorld()
	if initErr == nil {
		world.timeout = timeoutFromEnv()
	}
	return world, initErr
}

// World returns the communicator Init created, or nil before a successful
// Init.
func World() *Comm {
	worldMu.Lock()
	defer worldMu.Unlock()
	return world
}

// Rank returns this process's rank, 0 <= Rank < Size.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of processes.
func (c *Comm) Size() int { return c.size }

// ThreadLevel returns the thread support MPI provided.
func (c *Comm) ThreadLevel() ThreadLevel { return c.level }

// SetTimeout sets the deadline of every later collective (d > 0).
func (c *Comm) SetTimeout(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.timeout = d
	}
}

// Timeout returns the deadline of a collective.
func (c *Comm) Timeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// Allreduce reduces the first count elements of buf over all processes
// with op, in place: afterwards every process holds the result.
func (c *Comm) Allreduce(buf *Buffer, dt DType, count int, op Op) error {
	if err := checkBuf("allreduce", buf, dt, count); err != nil {
		return err
	}
	return c.collective(fmt.Sprintf("allreduce(%s, %d×%s)", op, count, dt), buf, func() error {
		return c.impl.allreduce(buf, dt, count, op)
	})
}

// Bcast copies the first count elements of root's buf into every other
// process's buf.
func (c *Comm) Bcast(buf *Buffer, dt DType, count, root int) error {
	if err := checkBuf("bcast", buf, dt, count); err != nil {
		return err
	}
	if root < 0 || root >= c.size {
		return fmt.Errorf("mpi: bcast from root %d in a world of %d", root, c.size)
	}
	return c.collective(fmt.Sprintf("bcast(%d×%s from %d)", count, dt, root), buf, func() error {
		return c.impl.bcast(buf, dt, count, root)
	})
}

// Barrier returns when every process has entered it.
func (c *Comm) Barrier() error {
	return c.collective("barrier", nil, c.impl.barrier)
}

// Finalize shuts MPI down. Every process must call it before exiting
// normally; no MPI call may follow. It is a no-op after the first call,
// and returns the communicator's error without calling MPI when a
// collective failed (the job is ending anyway).
func (c *Comm) Finalize() error {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return nil
	}
	c.done = true
	broken := c.broken
	c.mu.Unlock()
	if broken != nil {
		return broken
	}
	var err error
	c.run(func() { err = c.impl.finalize() })
	close(c.calls)
	return err
}

// Abort asks mpirun to end every process of the job with the given exit
// code. It is for main programs that cannot go on; library code returns
// errors instead. It works also when the MPI goroutine is stuck in a
// collective that timed out: it then calls MPI from the caller's thread.
func (c *Comm) Abort(code int) error {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done {
		return fmt.Errorf("mpi: Abort after Finalize")
	}
	errc := make(chan error, 1)
	c.wake()
	select {
	case c.calls <- func() { errc <- c.impl.abort(code) }:
		return <-errc
	case <-time.After(time.Second):
		c.unwake()
		runtime.LockOSThread()
		return c.impl.abort(code)
	}
}

// collective runs f on the MPI goroutine and waits for it until the
// deadline. A failure breaks the communicator: MPI cannot resume after a
// collective that one process abandoned. After a timeout f is still
// blocked in MPI, so buf is pinned (never freed).
func (c *Comm) collective(what string, buf *Buffer, f func() error) error {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return fmt.Errorf("mpi: %s after Finalize", what)
	}
	if c.broken != nil {
		err := c.broken
		c.mu.Unlock()
		return err
	}
	timeout := c.timeout
	c.mu.Unlock()
	done := make(chan error, 1)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	c.wake()
	select {
	case c.calls <- func() { done <- f() }:
	case <-timer.C: // the MPI goroutine is stuck in an earlier call
		c.unwake()
		return c.fail(what, buf, timeout, ErrTimeout)
	}
	select {
	case err := <-done:
		if err != nil {
			return c.fail(what, nil, timeout, err)
		}
		return nil
	case <-timer.C:
		return c.fail(what, buf, timeout, ErrTimeout)
	}
}

// fail breaks the communicator with an error describing what failed.
func (c *Comm) fail(what string, buf *Buffer, timeout time.Duration, err error) error {
	if errors.Is(err, ErrTimeout) {
		if buf != nil {
			buf.pinned.Store(true)
		}
		err = fmt.Errorf("mpi: rank %d of %d: %s did not complete within %v: another process has stopped taking part (did it die or take a different path?) (%w)",
			c.rank, c.size, what, timeout, err)
	} else {
		err = fmt.Errorf("mpi: rank %d of %d: %s: %w", c.rank, c.size, what, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = err
	}
	return c.broken
}

// run executes f on the MPI goroutine and waits for it.
func (c *Comm) run(f func()) {
	c.wake()
	done := make(chan struct{})
	c.calls <- func() { f(); close(done) }
	<-done
}

func checkBuf(op string, buf *Buffer, dt DType, count int) error {
	if buf == nil {
		return fmt.Errorf("mpi: %s of a nil buffer", op)
	}
	if count < 0 || count > maxCount || count*dt.Size() > buf.Len() {
		return fmt.Errorf("mpi: %s of %d×%s elements from a buffer of %d bytes", op, count, dt, buf.Len())
	}
	return nil
}

// maxCount is the largest element count of one call (MPI counts are C int).
const maxCount = 1<<31 - 1

func timeoutFromEnv() time.Duration {
	if s := os.Getenv("GOLUON_MPI_TIMEOUT"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return DefaultTimeout
}

// Buffer is memory that collectives read and write in place. Under -tags
// mpi it is allocated by C, outside the Go heap.
type Buffer struct {
	p      unsafe.Pointer
	n      int
	keep   []uint64    // the Go memory behind p in builds without MPI
	pinned atomic.Bool // a timed-out collective may still write here
}

// Alloc returns a zeroed buffer of nbytes bytes. Free it when done.
func Alloc(nbytes int) (*Buffer, error) {
	if nbytes <= 0 {
		return nil, fmt.Errorf("mpi: buffer of %d bytes", nbytes)
	}
	b := &Buffer{n: nbytes}
	if err := allocMem(b); err != nil {
		return nil, err
	}
	return b, nil
}

// Len returns the buffer's size in bytes.
func (b *Buffer) Len() int { return b.n }

// Float32s views the buffer as float32s.
func (b *Buffer) Float32s() []float32 { return unsafe.Slice((*float32)(b.p), b.n/4) }

// Float64s views the buffer as float64s.
func (b *Buffer) Float64s() []float64 { return unsafe.Slice((*float64)(b.p), b.n/8) }

// Int64s views the buffer as int64s.
func (b *Buffer) Int64s() []int64 { return unsafe.Slice((*int64)(b.p), b.n/8) }

// Free releases the buffer's memory; the buffer and its views must not be
// used afterwards. Free of a nil or freed buffer does nothing, and neither
// does Free of a buffer whose collective timed out (MPI may still use it).
func (b *Buffer) Free() {
	if b == nil || b.p == nil || b.pinned.Load() {
		return
	}
	freeMem(b)
	b.p, b.n, b.keep = nil, 0, nil
}

// Package mpi binds the small part of MPI that data-parallel training
// needs: initialisation with thread support, rank and size, in-place
// allreduce (blocking, and non-blocking with Iallreduce), broadcast,
// barrier and finalisation, over MPI_COMM_WORLD.
//
// The binding uses cgo and links Open MPI through pkg-config (ompi-c);
// it is compiled only with the build tag mpi:
//
//	apt-get install libopenmpi-dev openmpi-bin
//	go build -tags mpi ./...
//	mpirun -np 4 ./program
//
// Without the tag the package is pure Go and Init returns ErrNotBuilt, so
// programs that merely offer a distributed mode still build everywhere.
//
// Threading: MPI is initialised with MPI_THREAD_MULTIPLE (at least
// MPI_THREAD_SERIALIZED is required) by a goroutine locked to its OS
// thread, which also finalises it. Collectives run on their callers'
// threads, one MPI call at a time under a lock held only for calls that
// return at once: each collective is started as a
// non-blocking one and its caller drives it with MPI_Test until it
// completes, so a call hands nothing to another thread and waits for no
// thread to be scheduled. While non-blocking collectives started with
// Iallreduce are in flight and nobody waits for them, a progress thread
// (a C thread, outside the Go scheduler) tests them, so that they
// progress behind computing. The level MPI actually provided is checked
// and reported by ThreadLevel.
//
// With Open MPI 4.0.7, 4.1.2 or later, Init selects the
// reduce-scatter-then-allgather algorithm for non-blocking allreduces
// (OMPI_MCA_coll_libnbc_iallreduce_algorithm=3) unless the environment
// sets one: Open MPI's default reduces in-place buffers by a binomial tree
// at every size, which is slower for gradient buckets.
//
// Memory: collectives work on Buffers allocated with Alloc. Under -tags mpi
// their memory comes from C's allocator, outside the Go heap, so MPI may
// hold pointers to it for as long as a collective runs, as the cgo pointer
// rules require.
//
// Failure: every collective has a deadline (SetTimeout). Allreduce, Bcast
// and Barrier return when the collective completed or the deadline
// passed; Iallreduce returns at once and Request.Wait waits with the same
// deadline. Finalize must come after the Wait of every collective started.
// A collective that has not completed by the deadline returns an error
// wrapping ErrTimeout and the communicator is marked broken: every later
// call returns the same error at once, since MPI gives no way to cancel a
// started collective (its buffer is never freed: MPI may still write to
// it). A program should then exit with a non-zero status; mpirun ends the
// rest of the job. MPI errors are returned (MPI_ERRORS_RETURN), never
// aborted.
package mpi

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
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
// for concurrent use; their MPI calls are serialised.
type Comm struct {
	rank, size int
	level      ThreadLevel
	finalize   chan func() // Finalize's call, for the thread that initialised MPI

	mu      sync.Mutex
	timeout time.Duration
	broken  error
	done    bool
	impl    commImpl

	spin, poll time.Duration // GOLUON_MPI_SPIN and GOLUON_MPI_POLL
	padTo      int           // allreduces of fewer elements run padded to this many (see padded)
	scratch    []*Buffer     // padded allreduces' buffers not in use (under mu)
}

// kind is the kind of a collective, as the C side numbers them.
type kind int

const (
	kindAllreduce kind = iota
	kindBcast
	kindBarrier
)

// yieldFor is how long a waiting caller, after spinning, yields the CPU
// between tests of its collective (when processes outnumber cores, the
// process it waits for may need this core) before it sleeps the poll
// pause between tests (a longer wait is a wait for a slower process,
// where the pause costs nothing).
const yieldFor = 10 * time.Millisecond

var (
	worldMu sync.Mutex
	world   *Comm
	initErr error
)

// Init initialises MPI once per process and returns the world
// communicator; later calls return the same one (or the same error). When
// mpirun bound a machine's processes to fewer CPUs than it has (Open MPI
// binds each of up to 2 processes to one core by default), the first
// process there prints a warning saying how to launch them.
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
		warnBinding()
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
	return c.blocking(fmt.Sprintf("allreduce(%s, %d×%s)", op, count, dt), buf, kindAllreduce, dt, count, int(op))
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
	return c.blocking(fmt.Sprintf("bcast(%d×%s from %d)", count, dt, root), buf, kindBcast, dt, count, root)
}

// Barrier returns when every process has entered it.
func (c *Comm) Barrier() error {
	return c.blocking("barrier", nil, kindBarrier, Float64, 0, 0)
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
	timeout := c.Timeout()
	done := make(chan struct{})
	c.finalize <- func() { err = c.impl.finalize(timeout); close(done) }
	<-done
	return err
}

// Abort asks mpirun to end every process of the job with the given exit
// code. It is for main programs that cannot go on; library code returns
// errors instead. It calls MPI from the caller's thread, after waiting at
// most a second for the MPI lock (a collective that timed out holds
// none).
func (c *Comm) Abort(code int) error {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done {
		return fmt.Errorf("mpi: Abort after Finalize")
	}
	return c.impl.abort(code)
}

// usable returns the deadline of a collective about to start, or the
// error that stops it: Finalize was called, or an earlier collective
// broke the communicator.
func (c *Comm) usable(what string) (time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return 0, fmt.Errorf("mpi: %s after Finalize", what)
	}
	if c.broken != nil {
		return 0, c.broken
	}
	return c.timeout, nil
}

// blocking runs a collective on the caller's thread: it starts it and
// drives it until it completes or the deadline passes. A failure breaks
// the communicator: MPI cannot resume after a collective that one process
// abandoned. After a timeout MPI may still write to buf, so buf is pinned
// (never freed).
func (c *Comm) blocking(what string, buf *Buffer, k kind, dt DType, count, arg int) error {
	timeout, err := c.usable(what)
	if err != nil {
		return err
	}
	if k != kindBarrier && count == 0 {
		return nil
	}
	back := func(bool) {}
	if k == kindAllreduce {
		if buf, count, back, err = c.padded(buf, dt, count); err != nil {
			return c.fail(what, nil, timeout, err)
		}
	}
	t0 := time.Now()
	h, err := c.impl.start(k, buf, dt, count, arg, timeout, false)
	if err != nil {
		back(false)
		return c.fail(what, nil, timeout, err)
	}
	_, done, err := c.impl.wait(h, timeout-time.Since(t0), c.spin, yieldFor, c.poll)
	if !done {
		return c.fail(what, buf, timeout, ErrTimeout) // buf pinned: MPI may still write to it
	}
	back(err == nil)
	if err != nil {
		return c.fail(what, nil, timeout, err)
	}
	return nil
}

// padded returns the buffer and count an allreduce of count elements of
// buf runs on, and a function to call once it is over (with whether it
// succeeded; not after a timeout, whose buffer MPI may still use). Where Init
// selected Open MPI's reduce-scatter-then-allgather algorithm, which falls
// back to a ring of 2(n−1) steps for fewer elements than the largest power
// of two not above the n processes, a shorter allreduce runs on a scratch
// buffer of that many elements (buf's, then zeros: the reduction is
// element by element, so the padding never meets them), and the function
// copies the result back if it succeeded and keeps the scratch for the
// next one. Otherwise it is buf itself and the function does nothing.
func (c *Comm) padded(buf *Buffer, dt DType, count int) (*Buffer, int, func(ok bool), error) {
	if count >= c.padTo {
		return buf, count, func(bool) {}, nil
	}
	nbytes, size := count*dt.Size(), c.padTo*8 // 8: the widest element
	var scratch *Buffer
	c.mu.Lock()
	if n := len(c.scratch); n > 0 {
		scratch, c.scratch = c.scratch[n-1], c.scratch[:n-1]
	}
	c.mu.Unlock()
	if scratch == nil {
		var err error
		if scratch, err = Alloc(size); err != nil {
			return nil, 0, nil, err
		}
	}
	clear(scratch.bytes())
	copy(scratch.bytes(), buf.bytes()[:nbytes])
	return scratch, c.padTo, func(ok bool) {
		if ok {
			copy(buf.bytes()[:nbytes], scratch.bytes())
		}
		c.mu.Lock()
		c.scratch = append(c.scratch, scratch)
		c.mu.Unlock()
	}, nil
}

// fail breaks the communicator with an error describing what failed.
func (c *Comm) fail(what string, buf *Buffer, timeout time.Duration, err error) error {
	if errors.Is(err, ErrTimeout) {
		if buf != nil {
			buf.pinned.Store(true)
		}
		if err == ErrTimeout {
			err = fmt.Errorf("mpi: rank %d of %d: %s did not complete within %v: another process has stopped taking part (did it die or take a different path?) (%w)",
				c.rank, c.size, what, timeout, err)
		} else {
			err = fmt.Errorf("mpi: rank %d of %d: %s did not start within %v: %w", c.rank, c.size, what, timeout, err)
		}
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

// selectAlgorithm reports whether Init selects OpenMPI's
// reduce-scatter-then-allgather algorithm for non-blocking allreduces,
// given MPI_Get_library_version's string: only for Open MPI 4.0.7 and
// later 4.0 releases, 4.1.2 and later, and 5 and later. The algorithm
// falls back to libnbc's ring for short buffers, and before those
// releases the ring summed in-place buffers wrongly.
func selectAlgorithm(library string) bool {
	m := openMPIVersion.FindStringSubmatch(library)
	if m == nil {
		return false
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	switch {
	case v[0] != 4:
		return v[0] > 4
	case v[1] == 0:
		return v[2] >= 7
	case v[1] == 1:
		return v[2] >= 2
	}
	return true
}

var openMPIVersion = regexp.MustCompile(`Open MPI v(\d+)\.(\d+)\.(\d+)`)

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

// bytes views the buffer as bytes.
func (b *Buffer) bytes() []byte { return unsafe.Slice((*byte)(b.p), b.n) }

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

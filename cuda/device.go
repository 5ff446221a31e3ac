//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goluon/goluon/ctx"
)

// physical is one CUDA device: its primary context, the kernels loaded
// into it and the properties launches are sized from. Virtual GPUs share
// one physical device.
type physical struct {
	ordinal int
	h       physHandle
	once    sync.Once
	err     error
	fns     map[string]*function // read-only after init
	name    string
	sms     int // multiprocessors
	maxTPB  int // max threads per block
	maxTPSM int // max resident threads per multiprocessor

	evMu   sync.Mutex
	events []event // recorded events free for reuse (see handoff)
}

// init loads the device once (see load) from a locked worker thread.
func (p *physical) init() error {
	p.once.Do(func() { p.err = p.load() })
	return p.err
}

// function is a loaded kernel: its driver handle and parameter sizes.
type function struct {
	name   string
	handle unsafe.Pointer // CUfunction
	params []int
}

// task is one unit of work for a device's worker. Tasks with a done
// channel are calls: their error goes back to the caller. Others are
// asynchronous: their error is kept until the next call on the device.
type task struct {
	op   string
	fn   func() error
	done chan error
}

// device is one logical GPU context: a worker goroutine locked to an OS
// thread (the only goroutine that calls the driver for this device), a
// stream on which all of its work is queued, and its memory pool.
type device struct {
	id       int
	dev      ctx.Context
	phys     *physical
	q        chan task
	stream   stream
	syncEach bool // GOLUON_CUDA_SYNC: wait for and check every operation
	blas     *blasHandle
	dnn      dnnState // cuDNN handle and convolution plans
	stage    staging  // page-locked buffers of Write
	tl       timeline // GOLUON_CUDA_PROFILE=gpu spans (worker only)

	errMu sync.Mutex
	err   error // first failure of an asynchronous task, not yet reported

	syncs, calls atomic.Int64 // the host's waits on the stream and on the worker (SyncStats)

	mem pool
	cap captureState // a graph capture in progress (capture.go)
}

// queueDepth bounds how many asynchronous tasks may wait for the worker.
const queueDepth = 1024

// startDevice starts the worker of logical device id on physical device p
// and waits until it has its context and stream.
func startDevice(id int, p *physical, syncEach bool) (*device, error) {
	d := &device{id: id, dev: ctx.GPU(id), phys: p, q: make(chan task, queueDepth), syncEach: syncEach}
	d.mem.init()
	ready := make(chan error)
	go d.loop(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

// loop is the worker. It locks itself to its OS thread for good, makes the
// device's context current there and runs tasks in order.
func (d *device) loop(ready chan<- error) {
	runtime.LockOSThread()
	if err := d.setup(); err != nil {
		ready <- err
		return // the locked thread exits with the goroutine
	}
	ready <- nil
	for {
		t := d.next()
		var start time.Time
		if profiling {
			start = time.Now()
		}
		timed := gpuTiming && t.op != profileOp && d.tl.begin(d.stream)
		err := runTask(t.fn)
		if timed {
			d.tl.end(t.op, d.stream)
		}
		if err == nil && (d.syncEach || profiling) {
			err = streamSync(d.stream)
		}
		if profiling {
			profRecord(t.op, time.Since(start))
		}
		if err != nil {
			err = fmt.Errorf("%s on %v: %w", t.op, d.dev, err)
		}
		if t.done != nil {
			t.done <- err
		} else if err != nil {
			d.setErr(err)
		}
	}
}

// spinFor is how long an idle worker keeps polling its queue before it
// parks (GOLUON_CUDA_SPIN_US; default defaultSpin, 1ms with the driver).
// Waking a parked goroutine that is locked to its OS thread costs a thread
// switch per operation; polling keeps a stream of small ops free of that
// handoff. Measured on an H100 virtual machine (cuda/results/): an op's
// launch to its result in host memory took 160µs with 50µs of polling on
// either side, 24–26µs with 1ms on both.
var spinFor = spinEnv("GOLUON_CUDA_SPIN_US", defaultSpin)

// waitSpin is how long a caller waiting for the worker polls for the
// answer before it parks (GOLUON_CUDA_WAIT_SPIN_US, default defaultSpin).
// Parking hands the wake-up to the scheduler and the kernel, which on a
// virtual machine costs tens of microseconds per round trip.
var waitSpin = spinEnv("GOLUON_CUDA_WAIT_SPIN_US", defaultSpin)

// spinEnv returns the microseconds the environment variable name gives
// (0 or more), else def.
func spinEnv(name string, def time.Duration) time.Duration {
	return time.Duration(envInt(name, int(def/time.Microsecond))) * time.Microsecond
}

// envInt returns the integer (0 or more) the environment variable name
// gives, else def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// receive returns the next value from ch, polling it for spin before it
// blocks.
func receive[T any](ch chan T, spin time.Duration) T {
	select {
	case v := <-ch:
		return v
	default:
	}
	if spin > 0 {
		start := time.Now()
		for i := 0; ; i++ {
			select {
			case v := <-ch:
				return v
			default:
			}
			if i%64 == 63 && time.Since(start) > spin {
				break
			}
		}
	}
	return <-ch
}

// next returns the worker's next task.
func (d *device) next() task { return receive(d.q, spinFor) }

func (d *device) setup() error {
	if err := d.phys.init(); err != nil {
		return err
	}
	if err := d.phys.makeCurrent(); err != nil {
		return err
	}
	s, err := newStream()
	if err != nil {
		return fmt.Errorf("cuda: %v: creating a stream: %w", d.dev, err)
	}
	d.stream = s
	return nil
}

// runTask runs fn, turning a panic into an error so that the worker (and
// with it the device) survives a bug in one task.
func runTask(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}

func (d *device) setErr(err error) {
	d.errMu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.errMu.Unlock()
}

// takeErr returns and clears the pending asynchronous failure.
func (d *device) takeErr() error {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	err := d.err
	d.err = nil
	return err
}

// async queues fn on the worker without waiting. A failure of an earlier
// asynchronous task is reported first, as an nd device error naming it.
// With GOLUON_CUDA_SYNC=1 it waits and reports fn's own failure.
func (d *device) async(op string, fn func() error) {
	defer d.cap.enter()()
	if err := d.takeErr(); err != nil {
		deviceFail(op, d.dev, fmt.Errorf("an earlier asynchronous operation failed: %w", err))
	}
	if d.syncEach {
		if err := d.call(op, fn); err != nil {
			deviceFail(op, d.dev, err)
		}
		return
	}
	d.q <- task{op: op, fn: fn}
}

// call runs fn on the worker and waits for it. It returns the failure of
// an earlier asynchronous task (the worker runs tasks in order, so all of
// them have run when fn has), or else fn's error.
func (d *device) call(op string, fn func() error) error {
	defer d.cap.enter()()
	d.calls.Add(1)
	done := make(chan error, 1)
	d.q <- task{op: op, fn: fn, done: done}
	err := receive(done, waitSpin)
	if early := d.takeErr(); early != nil {
		return fmt.Errorf("an earlier asynchronous operation failed: %w", early)
	}
	return err
}

// synchronize waits until all work queued on the device has finished.
func (d *device) synchronize(op string) error {
	d.syncs.Add(1)
	return d.call(op, func() error { return streamSync(d.stream) })
}

// launch queues kernel name on the device's stream over n threads (grid
// sized from the device's properties) or, with blocks > 0, on exactly
// blocks blocks of block threads.
func (d *device) launch(op, name string, n, blocks, block, shmem int, a *args) {
	fn := d.phys.fns[name]
	if fn == nil {
		deviceFail(op, d.dev, fmt.Errorf("kernel %s is not in the loaded PTX (regenerate it: go generate -tags cuda ./cuda)", name))
	}
	if err := checkParams(fn, a); err != nil {
		deviceFail(op, d.dev, err)
	}
	if blocks <= 0 {
		block = 256
		blocks = d.gridFor(n, block)
	}
	if blocks == 0 {
		return
	}
	if profileAny {
		op += " " + name
	}
	d.async(op, func() error { return launchKernel(fn, blocks, block, shmem, d.stream, a) })
}

// gridFor returns the number of blocks for a grid-stride loop over n
// elements: enough to fill every multiprocessor several times over.
func (d *device) gridFor(n, block int) int {
	if n <= 0 {
		return 0
	}
	limit := d.phys.sms * max(d.phys.maxTPSM/block, 1) * 4
	return max(min((n+block-1)/block, limit), 1)
}

// checkParams compares a launch's parameters with the kernel's PTX
// signature, so that a Go/C mismatch is an error, not a corrupt launch.
func checkParams(fn *function, a *args) error {
	if len(fn.params) != len(a.sizes) {
		return fmt.Errorf("kernel %s takes %d parameters, launch passes %d", fn.name, len(fn.params), len(a.sizes))
	}
	for i, s := range fn.params {
		if s != a.sizes[i] {
			return fmt.Errorf("kernel %s parameter %d is %d bytes, launch passes %d", fn.name, i, s, a.sizes[i])
		}
	}
	return nil
}

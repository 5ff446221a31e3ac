package gluon

import (
	"runtime"
	"sync/atomic"
	"time"
)

// ForEachDevice's goroutines. A goroutine started per call waits for a
// processor: on the 2-core machines we measured, the second context's
// goroutine started 200–250µs after the call, in a step of 1.5–2ms,
// because the CPU backend's helper goroutine, polling for its next
// kernel, kept the other processor, and a parked thread takes tens of
// microseconds to wake. The pool's goroutines poll for work themselves for
// a while after each task (as the helpers do), so a task handed to an
// idle one starts at once; a call that finds none idle starts a goroutine,
// so a task never waits for a busy one (nested and concurrent calls
// included).

const (
	// poolSpin is how long an idle pool goroutine polls for a task, and
	// ForEachDevice's caller for the others' tasks, before blocking. It
	// must outlast the gap between two steps' calls (the Trainer's
	// reduction and update, the next batch's split): with 200µs the
	// second context of LeNet's 2-context step (BenchmarkTrainStepLeNet)
	// still started 70–160µs late, with 1ms 6–22µs.
	poolSpin = time.Millisecond
)

// poolIdleNS is how long (ns) a blocked pool goroutine waits before it
// exits (poolIdle); a variable for tests, atomic because the goroutines
// of earlier calls read it while a test changes it.
var poolIdleNS atomic.Int64

func init() { poolIdleNS.Store(int64(time.Second)) }

// poolIdle returns poolIdleNS as a duration.
func poolIdle() time.Duration { return time.Duration(poolIdleNS.Load()) }

var (
	// poolTasks carries tasks to idle pool goroutines; a task is sent only
	// after an idle goroutine was claimed (poolIdleN), and the buffer
	// holds more tasks than calls start at once, so a send does not wait.
	poolTasks = make(chan func(), 64)
	// poolIdleN counts the pool goroutines waiting for a task.
	poolIdleN atomic.Int64
)

// runOnPool runs f on an idle pool goroutine, or on a new one.
func runOnPool(f func()) {
	for {
		n := poolIdleN.Load()
		if n <= 0 {
			go poolWorker(f)
			return
		}
		if poolIdleN.CompareAndSwap(n, n-1) {
			select {
			case poolTasks <- f:
			default: // a full buffer: start one more goroutine instead
				poolIdleN.Add(1)
				go poolWorker(f)
			}
			return
		}
	}
}

// poolWorker runs f, then the tasks handed to it, until it has waited
// poolIdle for one.
func poolWorker(f func()) {
	idle := time.NewTimer(poolIdle())
	defer idle.Stop()
	for {
		f()
		f = nil
		poolIdleN.Add(1)
		start := time.Now()
		for i := 1; f == nil; i++ {
			select {
			case f = <-poolTasks:
				continue
			default:
			}
			if i%256 == 0 {
				if time.Since(start) > poolSpin {
					break
				}
				runtime.Gosched()
			}
		}
		if f == nil && !waitTask(idle, &f) {
			return
		}
	}
}

// waitTask blocks until a task arrives in *f (true) or the goroutine has
// waited poolIdle for one and may leave the pool (false): not while a
// caller has claimed an idle goroutine whose task is still on its way.
func waitTask(idle *time.Timer, f *func()) bool {
	for {
		idle.Reset(poolIdle())
		select {
		case *f = <-poolTasks:
			return true
		case <-idle.C:
			if poolIdleN.Add(-1) >= 0 {
				return false
			}
			poolIdleN.Add(1) // a task is on its way: wait again
		}
	}
}

// waitSpin returns once left is zero (done is then closed), polling for
// poolSpin before it blocks on done.
func waitSpin(left *atomic.Int64, done <-chan struct{}) {
	start := time.Now()
	for i := 1; left.Load() > 0; i++ {
		if i%256 == 0 {
			if time.Since(start) > poolSpin {
				<-done
				return
			}
			runtime.Gosched()
		}
	}
}

package cpu

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Kernels split their work into at most GOMAXPROCS chunks. The chunks of
// one call are claimed, one at a time, by the calling goroutine and by a
// small set of long-lived helper goroutines (GOMAXPROCS-1 of them). A
// helper that has just finished work keeps polling for the next call for
// a short while (spinSpan) before it blocks, so the back-to-back kernels of
// a training step find it awake: starting a goroutine per kernel costs the
// wake-up of a parked thread each time, which on the 2-core machines we
// measured left the second core idle for a third of a step. The caller
// never waits for a helper to arrive: it claims whatever chunks are left
// itself, so a late or busy helper only costs parallelism, never progress.
// It then polls, for the same span, for the chunks helpers are running
// (see job.wait). Both together are what make bench's
// BenchmarkTrainStepMLP and BenchmarkTrainStepLeNet use the second core.
// Helpers that stay idle for helperIdle exit, and are started again on
// demand.
//
// A call is posted in one atomic pointer (posted) that polling helpers
// load, and only parked helpers are woken, through a channel. Before,
// polling helpers received every call from a buffered channel, whose lock
// the caller and the helper then contended for: a polling helper started
// a 2-chunk call's second chunk 260–270ns after the call began, and the
// caller its own chunk after 190ns; posted, 180–195ns and 120ns
// (BenchmarkParallelFor measures the whole call). A helper that misses a
// call (posted while another call replaced it) costs that call
// parallelism only.
//
// Chunk boundaries depend only on n, grain and GOMAXPROCS, not on which
// goroutine runs a chunk, so kernels that combine per-chunk results in
// chunk order are reproducible.

// spinSpanNS is how long (ns) an idle helper polls for work, and a
// caller for its helpers' chunks, before blocking (spinSpan). 50µs was
// too short for the gaps between the kernels of a step; 200µs to 1ms
// measured the same. A variable for tests: TestDedicate lengthens it so
// that only the cores being taken can make a helper park.
var spinSpanNS atomic.Int64

func init() { spinSpanNS.Store(int64(200 * time.Microsecond)) }

// spinSpan returns spinSpanNS as a duration.
func spinSpan() time.Duration { return time.Duration(spinSpanNS.Load()) }

const (
	// helperIdle is how long a blocked helper waits before it exits.
	helperIdle = time.Second
	// pollChecks is how many polls of posted a helper makes between
	// looks at the clock, and yieldChecks how many looks between yields
	// of its thread to other goroutines (runtime.Gosched takes the
	// scheduler's lock, which runtime.GOMAXPROCS, in workers, takes too).
	pollChecks, yieldChecks = 256, 16
)

// job is one parallel call: chunks claimed through next, finished ones
// counted down in left; the goroutine that finishes the last chunk closes
// done.
type job struct {
	fn        func(chunk, lo, hi int)
	n, chunks int
	next      atomic.Int64
	left      atomic.Int64
	done      chan struct{}
}

var (
	// posted is the latest call; polling helpers join it.
	posted atomic.Pointer[job]
	// parked counts the helpers blocked on wake that no caller has
	// claimed. A caller claims one by decrementing it and then sends it
	// a token on wake, so tokens in flight never outnumber the helpers
	// waiting for them and none are left over.
	parked atomic.Int64
	// wake carries one token per claimed helper; it holds a token for
	// each of GOMAXPROCS-1 helpers up to NumCPU, so that a caller waits to
	// send one only when GOMAXPROCS is set above the CPU count.
	wake = make(chan struct{}, max(64, runtime.NumCPU()))
	// helpers counts the live helper goroutines.
	helpers atomic.Int64
	// dedicated counts the goroutines that run kernels on a core of their
	// own (Dedicate).
	dedicated atomic.Int64
)

// Dedicate declares that n more goroutines now run kernels at once, each
// on a core of its own (gluon.ForEachDevice's goroutines for CPU
// contexts, pinned to a CPU each, and a Trainer's per-context goroutines
// in Step), until release is called. While as many goroutines as
// GOMAXPROCS are dedicated, every kernel runs its chunks one after another
// on its calling goroutine (a GEMM as one serial call) and the helpers
// park: helping would only move a context's data to another core's cache
// and back. The results are the same either way.
func Dedicate(n int) (release func()) {
	dedicated.Add(int64(n))
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			dedicated.Add(-int64(n))
		}
	}
}

// Dedicated returns how many goroutines Dedicate has declared and not
// released.
func Dedicated() int { return int(dedicated.Load()) }

// coresTaken reports whether the dedicated goroutines take every core.
func coresTaken() bool {
	d := dedicated.Load()
	return d > 0 && d >= int64(workers())
}

// workers is the number of goroutines a kernel splits its work into.
func workers() int { return runtime.GOMAXPROCS(0) }

// run claims and runs chunks of j until none are left unclaimed.
func (j *job) run() {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= j.chunks {
			return
		}
		lo, hi := chunkBounds(j.n, j.chunks, c)
		j.fn(c, lo, hi)
		if j.left.Add(-1) == 0 {
			close(j.done)
		}
	}
}

// wait returns once every chunk of j has finished. The chunks still
// running were claimed by helpers and are about as long as the caller's
// own, so it polls for a while before it blocks: a blocked caller would be
// woken on the helper's core and then migrate back, which costs more
// than a short kernel.
func (j *job) wait() {
	start := time.Now()
	for i := 1; j.left.Load() > 0; i++ {
		if i%256 == 0 {
			if time.Since(start) > spinSpan() {
				<-j.done
				return
			}
			runtime.Gosched()
		}
	}
}

// helper runs posted calls until it has been idle for helperIdle.
func helper() {
	defer helpers.Add(-1)
	idle := time.NewTimer(helperIdle)
	defer idle.Stop()
	var last *job // joining a finished call costs a claim that finds no chunk
	for {
		start := time.Now()
		for i, looks := 1, 0; ; i++ {
			if j := posted.Load(); j != last {
				last = j
				j.run()
				start, i, looks = time.Now(), 0, 0
				continue
			}
			if i%pollChecks == 0 {
				if time.Since(start) > spinSpan() || coresTaken() {
					break
				}
				if looks++; looks%yieldChecks == 0 {
					runtime.Gosched()
				}
			}
		}
		parked.Add(1)
		if j := posted.Load(); j != last { // posted while it was deciding to park
			unpark()
			last = j
			j.run()
			continue
		}
		idle.Reset(helperIdle)
		select {
		case <-wake: // claimed by a caller, which took it off parked
		case <-idle.C:
			unpark()
			if posted.Load() == last {
				return
			}
			// A call came in as the timer fired: join it.
		}
	}
}

// unpark takes a parked helper that was not woken off the parked count.
// When every parked helper has been claimed, a token is on its way to one
// of them, and this helper takes it instead of leaving it behind.
func unpark() {
	for {
		p := parked.Load()
		if p == 0 {
			<-wake
			return
		}
		if parked.CompareAndSwap(p, p-1) {
			return
		}
	}
}

// wakeHelpers claims up to n parked helpers and sends each a token.
func wakeHelpers(n int) {
	for n > 0 {
		p := parked.Load()
		if p == 0 {
			return
		}
		if parked.CompareAndSwap(p, p-1) {
			wake <- struct{}{} // a claimed helper takes it, or unpark does
			n--
		}
	}
}

// startHelpers makes sure want helpers are running.
func startHelpers(want int) {
	for {
		have := helpers.Load()
		if have >= int64(want) {
			return
		}
		if helpers.CompareAndSwap(have, have+1) {
			go helper()
		}
	}
}

// parallelFor calls fn over [0, n) split into at most workers() contiguous
// chunks of at least grain items each.
func parallelFor(n, grain int, fn func(lo, hi int)) {
	if numChunks(n, grain) <= 1 { // no job, no wrapper closure
		if n > 0 {
			fn(0, n)
		}
		return
	}
	parallelChunks(n, grain, func(_, lo, hi int) { fn(lo, hi) })
}

// numChunks is how many chunks parallelFor uses for n items.
func numChunks(n, grain int) int {
	if grain < 1 {
		grain = 1
	}
	c := n / grain
	if c <= 1 { // before workers(): runtime.GOMAXPROCS takes a lock
		return 1
	}
	return min(workers(), c)
}

// chunkBounds returns the half-open range of chunk c out of chunks over n.
func chunkBounds(n, chunks, c int) (int, int) {
	return n * c / chunks, n * (c + 1) / chunks
}

// parallelChunks is parallelFor that also passes the chunk index, for
// kernels that keep per-chunk partial results. It returns the number of
// chunks.
func parallelChunks(n, grain int, fn func(chunk, lo, hi int)) int {
	chunks := numChunks(n, grain)
	if chunks <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return chunks
	}
	if coresTaken() {
		for c := range chunks {
			lo, hi := chunkBounds(n, chunks, c)
			fn(c, lo, hi)
		}
		return chunks
	}
	j := &job{fn: fn, n: n, chunks: chunks, done: make(chan struct{})}
	j.left.Store(int64(chunks))
	startHelpers(chunks - 1) // as many as this call can use
	posted.Store(j)
	wakeHelpers(chunks - 1)
	j.run()
	j.wait()
	j.fn = nil // posted keeps j until the next call: not what fn captured
	return chunks
}

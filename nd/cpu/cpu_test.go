package cpu

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd/backend"
)

func TestSizeClass(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{0, 16}, {1, 16}, {16, 16}, {17, 20}, {32, 32}, {33, 40}, {100, 112}, {1000, 1024}, {1025, 1280},
	} {
		if got := sizeClass(c.n); got != c.want {
			t.Errorf("sizeClass(%d) = %d, want %d", c.n, got, c.want)
		}
		if got := sizeClass(c.n); got < c.n {
			t.Errorf("sizeClass(%d) = %d is too small", c.n, got)
		}
	}
}

// TestClassIndex checks that the size classes are numbered 0, 1, 2, ...
// in increasing order of size, up to the largest int.
func TestClassIndex(t *testing.T) {
	prevClass, prevIdx := 16, 0
	if classIndex(16) != 0 {
		t.Fatalf("classIndex(16) = %d, want 0", classIndex(16))
	}
	for n := 17; n <= 1<<20; n++ {
		c := sizeClass(n)
		if c == prevClass {
			continue
		}
		if got := classIndex(c); got != prevIdx+1 {
			t.Fatalf("classIndex(%d) = %d after classIndex(%d) = %d", c, got, prevClass, prevIdx)
		}
		prevClass, prevIdx = c, prevIdx+1
	}
	// The largest class an int holds (8·2⁶⁰ does not).
	if c := sizeClass(7 << 60); c != 7<<60 || classIndex(c) >= numClasses {
		t.Errorf("sizeClass(7<<60) = %d, classIndex %d, numClasses %d", c, classIndex(c), numClasses)
	}
}

func TestPoolReusesBuffers(t *testing.T) {
	be := New()
	dev := ctx.CPU(0)
	a, _ := be.Alloc(dev, backend.Float32, 1000)
	be.Free(dev, a)
	b, _ := be.Alloc(dev, backend.Float32, 1010) // same size class
	if a != b {
		t.Error("a freed buffer of the same class was not reused")
	}
	if b.Len() != 1010 {
		t.Errorf("reused buffer has length %d, want 1010", b.Len())
	}
	c, _ := be.Alloc(dev, backend.Float64, 1000) // other dtype: a new buffer
	st := be.Stats(dev)
	if st.Misses != 2 || st.Allocs != 3 || st.InUse != int64(1024*4+1024*8) {
		t.Errorf("stats %+v", st)
	}
	be.Free(dev, b)
	be.Free(dev, c)
	if st := be.Stats(ctx.CPU(1)); st.Allocs != 0 {
		t.Error("contexts share statistics")
	}
	be.ReleaseCache(dev)
	if st := be.Stats(dev); st.Cached != 0 || st.InUse != 0 {
		t.Errorf("after ReleaseCache: %+v", st)
	}
}

func TestCoalesce(t *testing.T) {
	cases := []struct {
		shape   []int
		strides [][]int
		want    string
	}{
		{[]int{2, 3, 4}, [][]int{{12, 4, 1}, {12, 4, 1}}, "[24] [[1] [1]]"},
		{[]int{2, 3, 4}, [][]int{{12, 4, 1}, {0, 1, 0}}, "[2 3 4] [[12 4 1] [0 1 0]]"},
		{[]int{2, 1, 4}, [][]int{{4, 4, 1}, {0, 0, 1}}, "[2 4] [[4 1] [0 1]]"},
		{[]int{1, 1}, [][]int{{1, 1}}, "[1] [[0]]"},
		{[]int{5, 6}, [][]int{{6, 1}, {1, 5}}, "[5 6] [[6 1] [1 5]]"},
	}
	for _, c := range cases {
		sh, st := backend.Coalesce(c.shape, c.strides...)
		if got := fmt.Sprint(sh, st); got != c.want {
			t.Errorf("backend.Coalesce(%v, %v) = %s, want %s", c.shape, c.strides, got, c.want)
		}
	}
}

// TestFilterGradientReproducible checks that the convolution filter
// gradient, which sums per-goroutine partials, is bitwise identical from
// run to run.
func TestFilterGradientReproducible(t *testing.T) {
	be := New()
	dev := ctx.CPU(0)
	p := backend.ConvParams{N: 9, InC: 3, InH: 11, InW: 11, OutC: 4, OutH: 9, OutW: 9,
		KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilateH: 1, DilateW: 1, Groups: 1, DType: backend.Float32}
	mk := func(n int, seed float32) backend.Buffer {
		b, _ := be.Alloc(dev, backend.Float32, n)
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((i*7919)%1000)/1000*seed - 0.3
		}
		be.Write(b, 0, v)
		return b
	}
	x := mk(9*3*11*11, 1)
	dy := mk(9*4*9*9, 0.7)
	var first []float32
	for run := range 5 {
		dw, _ := be.Alloc(dev, backend.Float32, 4*3*3*3)
		be.Conv2DBackwardFilter(p, backend.Arg{Buf: dw}, backend.Arg{Buf: x}, backend.Arg{Buf: dy})
		got := make([]float32, dw.Len())
		be.Read(dw, 0, got)
		if run == 0 {
			first = got
		} else if !slices.Equal(first, got) {
			t.Fatalf("run %d differs from run 0", run)
		}
	}
}

func TestParallelForCoversRange(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000, 100003} {
		seen := make([]int32, n)
		parallelFor(n, 10, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, s := range seen {
			if s != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, s)
			}
		}
	}
}

// TestParallelForConcurrentAndNested runs parallelFor from several
// goroutines at once, with a nested call inside each chunk, and checks that
// every index is visited exactly once and that nothing deadlocks when the
// helpers are all busy.
func TestParallelForConcurrentAndNested(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := range 50 {
				n := 1000 + 37*g + rep
				seen := make([]int32, n)
				parallelFor(n, 10, func(lo, hi int) {
					parallelFor(hi-lo, 5, func(a, b int) {
						for i := lo + a; i < lo+b; i++ {
							atomic.AddInt32(&seen[i], 1)
						}
					})
				})
				for i, s := range seen {
					if s != 1 {
						t.Errorf("goroutine %d rep %d: index %d visited %d times", g, rep, i, s)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestParallelHelpersJoin checks that a call's chunks run concurrently on
// a helper, whether the helpers are polling (back-to-back calls) or
// parked (after an idle gap longer than spinSpan): each chunk waits until
// the other has started, which the caller alone could never satisfy.
// rendezvous reports whether the two chunks of a parallel call ran at the
// same time: each waits, up to a deadline, for the other to start.
func rendezvous() bool {
	var started, met atomic.Int32
	deadline := time.Now().Add(10 * time.Second)
	parallelChunks(2, 1, func(_, _, _ int) {
		started.Add(1)
		for started.Load() < 2 {
			if time.Now().After(deadline) {
				return
			}
			runtime.Gosched()
		}
		met.Add(1)
	})
	return met.Load() == 2
}

func TestParallelHelpersJoin(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for i, gap := range []time.Duration{0, 0, 0, 2 * spinSpan(), 0, 5 * spinSpan(), 5 * spinSpan()} {
		time.Sleep(gap)
		if !rendezvous() {
			t.Fatalf("call %d (after %v idle): no helper joined", i, gap)
		}
	}
	if testing.Short() {
		return
	}
	// Idle helpers exit after helperIdle; the next call starts them again.
	for deadline := time.Now().Add(helperIdle + 5*time.Second); helpers.Load() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d helpers still running %v after the last call", helpers.Load(), helperIdle+5*time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if parked.Load() != 0 || len(wake) != 0 {
		t.Errorf("parked = %d, %d wake tokens left with no helpers", parked.Load(), len(wake))
	}
	if !rendezvous() {
		t.Fatal("no helper joined after the helpers had exited")
	}
}

// BenchmarkParallelFor times a 2-chunk call whose chunks do no work (the
// cost of a call) and chunks of about 0.3 and 3µs of dependent additions.
func BenchmarkParallelFor(b *testing.B) {
	var sink [64]float32
	for _, work := range []int{0, 256, 2560} {
		b.Run(fmt.Sprintf("work=%d", work), func(b *testing.B) {
			for b.Loop() {
				parallelFor(2, 1, func(lo, hi int) {
					var acc float32
					for i := range work {
						acc += float32(i)
					}
					sink[lo*32] = acc // a cache line apart
				})
			}
		})
	}
}

// TestScratchReuse checks that scratch buffers of mixed sizes, taken and
// released in turn as the convolution kernels do, are reused without
// allocating once the pools are warm.
func TestScratchReuse(t *testing.T) {
	sizes := []int{1, 100, 4096, 5000, 300000}
	cycle := func() {
		bufs := make([][]float32, 0, len(sizes))
		for _, n := range sizes {
			b := scratch[float32](n)
			if len(b) != n {
				t.Fatalf("scratch(%d) has length %d", n, len(b))
			}
			bufs = append(bufs, b)
		}
		for _, b := range bufs {
			release(b)
		}
		release(scratch[float64](777))
	}
	cycle()
	if a := testing.AllocsPerRun(20, cycle); a > 1 { // at most the bufs slice itself
		t.Errorf("%v allocations per cycle once warm", a)
	}
}

// TestHostView checks that HostView shares the buffer's memory at the
// offset for every dtype with a host slice, and declines bool buffers.
func TestHostView(t *testing.T) {
	be := New()
	for _, dt := range backend.DTypes {
		buf, err := be.Alloc(ctx.CPU(0), dt, 10)
		if err != nil {
			t.Fatal(err)
		}
		view, ok := be.HostView(buf, 3, 4)
		if dt == backend.Bool {
			if ok {
				t.Errorf("bool: HostView = %T, want none", view)
			}
			continue
		}
		if !ok {
			t.Fatalf("%v: no view", dt)
		}
		if vdt, n, _ := backend.HostDType(view); vdt != dt || n != 4 {
			t.Fatalf("%v: view is %d elements of %v", dt, n, vdt)
		}
		backend.ConvertHost(view, false, []float64{1, 2, 3, 4}) // through the view...
		got := make([]float64, 10)
		be.Read(buf, 0, got) // ...into the buffer at elements 3..6
		if got[3] != 1 || got[6] != 4 {
			t.Errorf("%v: buffer after writing the view = %v", dt, got)
		}
	}
}

// TestDedicate checks that while the dedicated goroutines take every core,
// a parallel call runs its chunks in order on the calling goroutine, and
// that after release (twice is harmless) the helpers join calls again.
func TestDedicate(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if Dedicated() != 0 {
		t.Fatalf("Dedicated() = %d at the start", Dedicated())
	}
	one := Dedicate(1) // one goroutine of two cores: helpers still help
	if !rendezvous() {
		t.Fatalf("one dedicated goroutine: the chunks did not run at once")
	}
	// With the polling span an hour long, only the cores being taken can
	// make the helper that just helped stop polling and park (a deadline
	// under the real span flaked on a loaded machine).
	span := spinSpanNS.Swap(int64(time.Hour))
	defer spinSpanNS.Store(span)
	two := Dedicate(1)
	if Dedicated() != 2 || !coresTaken() {
		t.Fatalf("Dedicated() = %d, coresTaken %v", Dedicated(), coresTaken())
	}
	deadline := time.Now().Add(5 * time.Second)
	for helpers.Load() == 0 || parked.Load() != helpers.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d helpers parked 5s after the cores were taken", parked.Load(), helpers.Load())
		}
		runtime.Gosched()
	}
	spinSpanNS.Store(span)
	caller := gid.Current()
	var order []int
	got := parallelChunks(1000, 10, func(c, lo, hi int) {
		if gid.Supported && gid.Current() != caller {
			t.Errorf("chunk %d ran on another goroutine", c)
		}
		if wlo, whi := chunkBounds(1000, 2, c); lo != wlo || hi != whi {
			t.Errorf("chunk %d: [%d, %d), want [%d, %d)", c, lo, hi, wlo, whi)
		}
		order = append(order, c)         // no lock: one goroutine
		time.Sleep(2 * time.Millisecond) // time for a helper to claim the other chunk
	})
	if got != 2 || !slices.Equal(order, []int{0, 1}) {
		t.Errorf("%d chunks run in order %v, want 2 in order 0, 1", got, order)
	}
	two()
	two()
	one()
	if Dedicated() != 0 || coresTaken() {
		t.Fatalf("after release: Dedicated() = %d", Dedicated())
	}
	if !rendezvous() {
		t.Error("after release: the chunks did not run at once")
	}
}

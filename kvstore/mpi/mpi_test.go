//go:build mpi

package mpi_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/kvstore/mpi/mpitest"
)

// TestCollectives runs the collective checks on 4 processes.
func TestCollectives(t *testing.T) {
	mpitest.Run(t, 4, "TestCollectivesWorker", nil).Check(t, 4, "TestCollectivesWorker")
}

func world(t *testing.T) *mpi.Comm {
	t.Helper()
	c, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCollectivesWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestCollectives")
	}
	c := world(t)
	defer c.Finalize()
	rank, size := c.Rank(), c.Size()
	if size != 4 || rank != mpitest.Rank() {
		t.Fatalf("rank %d size %d; mpirun says rank %d of 4", rank, size, mpitest.Rank())
	}
	if c.ThreadLevel() < mpi.ThreadSerialized {
		t.Fatalf("thread level %v", c.ThreadLevel())
	}
	const n = 1000
	b, err := mpi.Alloc(8 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()

	t.Run("sum float32", func(t *testing.T) {
		x := b.Float32s()[:n]
		for i := range x {
			x[i] = float32(rank*n + i)
		}
		if err := c.Allreduce(b, mpi.Float32, n, mpi.Sum); err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			if want := float32(4*i + n*(0+1+2+3)); v != want {
				t.Fatalf("element %d = %v, want %v", i, v, want)
			}
		}
	})
	t.Run("sum float64", func(t *testing.T) {
		x := b.Float64s()
		for i := range x {
			x[i] = 0.5 * float64(rank+i)
		}
		if err := c.Allreduce(b, mpi.Float64, n, mpi.Sum); err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			if want := 0.5 * float64(6+4*i); v != want {
				t.Fatalf("element %d = %v, want %v", i, v, want)
			}
		}
	})
	t.Run("max and min int64", func(t *testing.T) {
		x := b.Int64s()
		x[0], x[1] = int64(10*rank-7), int64(10*rank-7)
		if err := c.Allreduce(b, mpi.Int64, 1, mpi.Max); err != nil {
			t.Fatal(err)
		}
		if x[0] != 23 {
			t.Errorf("max = %d, want 23", x[0])
		}
		x[0] = x[1]
		if err := c.Allreduce(b, mpi.Int64, 1, mpi.Min); err != nil {
			t.Fatal(err)
		}
		if x[0] != -7 {
			t.Errorf("min = %d, want -7", x[0])
		}
	})
	t.Run("max of negatives and min of positives, short buffers", func(t *testing.T) {
		// Shorter than the world: Init may run such allreduces on a
		// padded scratch buffer; the result comes back, the element
		// after it stays.
		for _, nonBlocking := range []bool{false, true} {
			x := b.Float64s()
			x[0], x[1] = -float64(rank+1), float64(rank+1)
			run := func(buf *mpi.Buffer, dt mpi.DType, n int, op mpi.Op) {
				t.Helper()
				var err error
				if nonBlocking {
					var r *mpi.Request
					if r, err = c.Iallreduce(buf, dt, n, op); err == nil {
						err = r.Wait()
					}
				} else {
					err = c.Allreduce(buf, dt, n, op)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			run(b, mpi.Float64, 1, mpi.Max)
			if x[0] != -1 || x[1] != float64(rank+1) {
				t.Errorf("non-blocking %v: max of -1…-4 = %v (element after it %v)", nonBlocking, x[0], x[1])
			}
			x[0] = float64(rank + 1)
			run(b, mpi.Float64, 1, mpi.Min)
			if x[0] != 1 {
				t.Errorf("non-blocking %v: min of 1…4 = %v", nonBlocking, x[0])
			}
			bb, err := mpi.Alloc(8)
			if err != nil {
				t.Fatal(err)
			}
			bb.Float32s()[0], bb.Float32s()[1] = -float32(rank+2), 9
			run(bb, mpi.Float32, 1, mpi.Max)
			if v := bb.Float32s(); v[0] != -2 || v[1] != 9 {
				t.Errorf("non-blocking %v: float32 max of -2…-5 = %v, the next element %v (want -2, 9)", nonBlocking, v[0], v[1])
			}
			bb.Free()
		}
	})
	t.Run("bcast", func(t *testing.T) {
		x := b.Float64s()
		for i := range x {
			x[i] = float64(rank*1000 + i)
		}
		if err := c.Bcast(b, mpi.Float64, n, 2); err != nil {
			t.Fatal(err)
		}
		for i, v := range x {
			if v != float64(2000+i) {
				t.Fatalf("element %d = %v, want %v", i, v, 2000+i)
			}
		}
	})
	t.Run("barrier", func(t *testing.T) {
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		if err := c.Allreduce(b, mpi.Float64, n+1, mpi.Sum); err == nil {
			t.Error("allreduce past the end of the buffer succeeded")
		}
		if err := c.Bcast(b, mpi.Float64, 1, 4); err == nil {
			t.Error("bcast from root 4 of 4 succeeded")
		}
	})
	t.Run("iallreduce, several in flight", func(t *testing.T) {
		sizes := []int{3, 1 << 20, 1000}
		bufs := make([]*mpi.Buffer, len(sizes))
		reqs := make([]*mpi.Request, len(sizes))
		for k, m := range sizes {
			bb, err := mpi.Alloc(4 * m)
			if err != nil {
				t.Fatal(err)
			}
			defer bb.Free()
			bufs[k] = bb
			for i := range bb.Float32s() {
				bb.Float32s()[i] = float32(rank + k + i%7)
			}
			if reqs[k], err = c.Iallreduce(bb, mpi.Float32, m, mpi.Sum); err != nil {
				t.Fatal(err)
			}
			if k == 1 { // a blocking collective while two are in flight
				x := b.Int64s()
				x[0] = int64(rank)
				if err := c.Allreduce(b, mpi.Int64, 1, mpi.Sum); err != nil {
					t.Fatal(err)
				}
				if x[0] != 6 {
					t.Errorf("blocking sum between non-blocking ones = %d, want 6", x[0])
				}
			}
		}
		for k := len(reqs) - 1; k >= 0; k-- {
			if err := reqs[k].Wait(); err != nil {
				t.Fatal(err)
			}
			for i, v := range bufs[k].Float32s() {
				if want := float32(6 + 4*(k+i%7)); v != want {
					t.Fatalf("request %d element %d = %v, want %v", k, i, v, want)
				}
			}
		}
		if err := reqs[0].Wait(); err != nil {
			t.Errorf("second Wait: %v", err)
		}
	})
	t.Run("iallreduce for wait, beside one in flight", func(t *testing.T) {
		b1, err := mpi.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		defer b1.Free()
		x, y := b1.Float32s(), b.Float64s()
		for i := range x {
			x[i] = float32(rank + i%3)
		}
		y[0] = float64(10 * rank)
		r1, err := c.Iallreduce(b1, mpi.Float32, n, mpi.Sum)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := c.IallreduceForWait(b, mpi.Float64, 1, mpi.Sum)
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := r1.Wait(); err != nil {
			t.Fatal(err)
		}
		if y[0] != 60 {
			t.Errorf("sum %v, want 60", y[0])
		}
		for i, v := range x {
			if want := float32(6 + 4*(i%3)); v != want {
				t.Fatalf("element %d = %v, want %v", i, v, want)
			}
		}
	})
	t.Run("two goroutines wait for one request", func(t *testing.T) {
		x := b.Float64s()
		x[0] = float64(rank)
		r, err := c.Iallreduce(b, mpi.Float64, 1, mpi.Sum)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		for range 2 {
			go func() { errs <- r.Wait() }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if x[0] != 6 {
			t.Errorf("sum %v after both Waits returned, want 6", x[0])
		}
	})
	t.Run("a huge timeout does not overflow", func(t *testing.T) {
		old := c.Timeout()
		defer c.SetTimeout(old)
		c.SetTimeout(time.Duration(math.MaxInt64))
		if rank == 0 {
			time.Sleep(100 * time.Millisecond) // the others wait for it
		}
		x := b.Float64s()
		x[0] = 1
		if err := c.Allreduce(b, mpi.Float64, 1, mpi.Sum); err != nil {
			t.Fatal(err)
		}
		if x[0] != 4 {
			t.Errorf("sum %v, want 4", x[0])
		}
	})
	t.Run("Go runtime keeps its signals", func(t *testing.T) {
		// A nil dereference must still be a recoverable Go panic after
		// MPI_Init (OpenMPI would otherwise catch SIGSEGV and abort).
		defer func() {
			if recover() == nil {
				t.Error("no panic from a nil dereference")
			}
		}()
		var p *int
		_ = *p
	})
}

// TestProgressBehindComputing: an Iallreduce completes while the caller
// computes, with GOMAXPROCS=1 and asynchronous preemption off, so that no
// goroutine but the computing one runs until it stops: only a thread
// outside the Go scheduler (the progress thread) can drive it.
func TestProgressBehindComputing(t *testing.T) {
	o := &mpitest.Options{Env: []string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1"}}
	mpitest.Run(t, 2, "TestProgressWorker", o).Check(t, 2, "TestProgressWorker")
}

func TestProgressWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestProgressBehindComputing")
	}
	c := world(t)
	defer c.Finalize()
	const m = 1 << 18
	bb, err := mpi.Alloc(4 * m)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Free()
	for i := range bb.Float32s() {
		bb.Float32s()[i] = float32(c.Rank() + 1)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	r, err := c.Iallreduce(bb, mpi.Float32, m, mpi.Sum)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	x := spin(1 << 28) // about 0.2–0.5 s without a call the scheduler could stop it at
	computed := time.Now()
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if !r.CompletedAt().Before(computed) {
		t.Errorf("the allreduce completed %v after %v of computing ended (x %v): nothing progressed it meanwhile", r.CompletedAt().Sub(computed), computed.Sub(start), x)
	}
	if v := bb.Float32s()[m-1]; v != 3 {
		t.Errorf("sum %v, want 3", v)
	}
}

// spin computes for n iterations of a loop with no function calls.
//
//go:noinline
func spin(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x = x*1.0000001 + 1e-9
	}
	return x
}

// TestTimeoutBreaksTheComm: a rank that stops taking part makes the others'
// collective fail within the deadline with a clear error.
func TestTimeoutBreaksTheComm(t *testing.T) {
	r := mpitest.Run(t, 3, "TestTimeoutWorker", &mpitest.Options{Env: []string{"GOLUON_MPI_TIMEOUT=2s"}, Timeout: time.Minute})
	if r.Err == nil {
		t.Fatal("job with a stalled rank succeeded")
	}
	if n := strings.Count(r.Output, "did not complete within 2s"); n < 2 {
		t.Errorf("%d ranks reported the timeout, want 2", n)
	}
	if r.Elapsed > 45*time.Second {
		t.Errorf("the job took %v to fail", r.Elapsed)
	}
}

func TestTimeoutWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestTimeoutBreaksTheComm")
	}
	c := world(t)
	if c.Timeout() != 2*time.Second {
		t.Fatalf("timeout %v, want 2s from GOLUON_MPI_TIMEOUT", c.Timeout())
	}
	b, err := mpi.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() == 0 {
		time.Sleep(6 * time.Second) // stalls, then exits without taking part
		t.Fatal("rank 0 stalled on purpose")
	}
	if c.Rank() == 1 { // the non-blocking form times out alike
		r, err := c.Iallreduce(b, mpi.Float64, 1, mpi.Sum)
		if err == nil {
			err = r.Wait()
		}
		if !errors.Is(err, mpi.ErrTimeout) {
			t.Fatalf("iallreduce with a stalled rank: %v", err)
		}
		t.Fatal(err)
	}
	err = c.Allreduce(b, mpi.Float64, 1, mpi.Sum)
	if !errors.Is(err, mpi.ErrTimeout) {
		t.Fatalf("allreduce with a stalled rank: %v", err)
	}
	if err2 := c.Barrier(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("the communicator is not broken after a timeout: %v", err2)
	}
	t.Fatal(err) // the visible failure the test looks for
}

package nd_test

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/nd"
)

// TestReleaseWhileReading releases arrays while other goroutines compute
// on them and a third one allocates and fills arrays of the same size (the
// pool hands it freed buffers). Every op must either fail at its start
// with ErrReleased or compute on the array's own values: never a wrong
// result, never a crash. Run it under -race too.
func TestReleaseWhileReading(t *testing.T) {
	// More threads than cores preempt goroutines between an unpin and its
	// look at the storage, which is where a free under another op's pin hid.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	const n = 64 * 64
	var wrong, failed, ok atomic.Int64
	var other error
	var mu sync.Mutex
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for r := range rounds {
		a := nd.Full(cpu0, nd.Float32, 2, 64, 64).Persist()
		var started atomic.Int64
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					started.Add(1)
					err := nd.Catch(func() {
						if s := nd.Sum(nd.Mul(a, nd.Relu(a))).Scalar(); s != 4*n {
							wrong.Add(1)
						}
					})
					switch {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, &nd.Error{Kind: nd.ErrReleased}):
						failed.Add(1)
					default:
						mu.Lock()
						other = err
						mu.Unlock()
					}
				}
			}()
		}
		wg.Add(2)
		go func() { // reuses freed buffers with other values
			defer wg.Done()
			for range 10 {
				nd.Full(cpu0, nd.Float32, 7, 64, 64).Release()
			}
		}()
		go func() { // releases a while the readers are at work
			defer wg.Done()
			for started.Load() < int64(1+r%25) {
				runtime.Gosched()
			}
			a.Release()
		}()
		wg.Wait()
	}
	if other != nil {
		t.Fatalf("an op failed with %v", other)
	}
	if wrong.Load() != 0 {
		t.Fatalf("%d of %d ops computed on memory that was not theirs", wrong.Load(), ok.Load())
	}
	t.Logf("%d ops ran, %d failed with ErrReleased", ok.Load(), failed.Load())
}

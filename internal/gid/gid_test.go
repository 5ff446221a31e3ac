package gid

import (
	"sync"
	"testing"
)

// TestCurrent: stable on one goroutine, across stack growth too, and
// distinct between goroutines alive at the same time.
func TestCurrent(t *testing.T) {
	if !Supported {
		t.Skip("goroutines cannot be told apart on this architecture")
	}
	me := Current()
	if me == 0 || Current() != me {
		t.Fatalf("Current() not stable: %x then %x", me, Current())
	}
	if got := deep(300); got != me {
		t.Fatalf("Current() changed after the stack grew: %x, was %x", got, me)
	}
	const n = 16
	ids := make([]uintptr, n)
	var wg, alive sync.WaitGroup
	release := make(chan struct{})
	alive.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = Current()
			alive.Done()
			<-release // all n stay alive until every id is taken
		}()
	}
	alive.Wait()
	close(release)
	wg.Wait()
	seen := map[uintptr]bool{me: true}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("two live goroutines share the id %x", id)
		}
		seen[id] = true
	}
}

func deep(n int) uintptr {
	var pad [128]byte
	pad[n%128] = byte(n)
	if n == 0 {
		return Current() + uintptr(pad[0])
	}
	return deep(n - 1)
}

func BenchmarkCurrent(b *testing.B) {
	for range b.N {
		_ = Current()
	}
}

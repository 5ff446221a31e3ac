//go:build linux

package affinity

import (
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// tid returns the calling thread's id (Linux).
func tid() int { return syscall.Gettid() }

// stays reports whether the goroutine is still on thread id after it has
// yielded and slept a few times (it is when it is locked to its thread).
func stays(id int) bool {
	for range 20 {
		runtime.Gosched()
		time.Sleep(100 * time.Microsecond)
		if tid() != id {
			return false
		}
	}
	return true
}

// TestPin pins the goroutine to each allowed CPU in turn and checks the
// thread's CPUs and its lock while pinned, and that undo gives back the
// CPUs it had before, also when pins nest.
func TestPin(t *testing.T) {
	all := Allowed()
	if len(all) == 0 {
		t.Fatal("no allowed CPUs")
	}
	if !slices.IsSorted(all) {
		t.Errorf("Allowed %v not in order", all)
	}
	for _, cpu := range all {
		undo, ok := Pin(cpu)
		if !ok {
			t.Fatalf("Pin(%d) failed", cpu)
		}
		if got := Current(); !slices.Equal(got, []int{cpu}) {
			t.Errorf("pinned to %d: thread CPUs %v", cpu, got)
		}
		if !stays(tid()) {
			t.Errorf("pinned to %d: the goroutine changed threads", cpu)
		}
		if !undo() {
			t.Fatalf("undo of Pin(%d) failed", cpu)
		}
		if got := Current(); !slices.Equal(got, all) {
			t.Errorf("after undo: thread CPUs %v, want %v", got, all)
		}
	}
	// Nested: the inner undo gives back the outer pin's CPU.
	outer, ok := Pin(all[0])
	if !ok {
		t.Fatal("outer Pin failed")
	}
	inner, ok := Pin(all[len(all)-1])
	if !ok {
		t.Fatal("inner Pin failed")
	}
	inner()
	if got := Current(); !slices.Equal(got, all[:1]) {
		t.Errorf("after the inner undo: thread CPUs %v, want %v", got, all[:1])
	}
	outer()
	if got := Current(); !slices.Equal(got, all) {
		t.Errorf("after the outer undo: thread CPUs %v, want %v", got, all)
	}
	for _, bad := range []int{-1, 1 << 20} {
		if undo, ok := Pin(bad); ok {
			undo()
			t.Errorf("Pin(%d) succeeded", bad)
		}
		if got := Current(); !slices.Equal(got, all) {
			t.Errorf("after Pin(%d) failed: thread CPUs %v", bad, got)
		}
	}
}

// TestPinUndoFails checks that when the CPUs cannot be given back, undo
// reports it and leaves the goroutine locked to its thread.
func TestPinUndoFails(t *testing.T) {
	all := Allowed()
	if len(all) == 0 {
		t.Skip("no affinity here")
	}
	undo, ok := Pin(all[0])
	if !ok {
		t.Fatal("Pin failed")
	}
	setCPUs = func([]int) bool { return false }
	failed := !undo()
	setCPUs = set
	id := tid()
	locked := stays(id)
	// Clean up as undo would have.
	set(all)
	unlockThread()
	if !failed {
		t.Error("undo reported success with the restore failing")
	}
	if !locked {
		t.Error("after a failed undo the goroutine left its thread")
	}
}

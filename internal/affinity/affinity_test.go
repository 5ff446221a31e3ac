package affinity

import (
	"runtime"
	"slices"
	"testing"
)

// TestPin pins the goroutine to each allowed CPU in turn, checks the
// thread's CPU set while pinned and that undo gives back every allowed
// CPU.
func TestPin(t *testing.T) {
	all := Allowed()
	if runtime.GOOS != "linux" {
		if all != nil {
			t.Fatalf("Allowed on %s = %v, want nil", runtime.GOOS, all)
		}
		t.Skip("no affinity outside Linux")
	}
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
		undo()
		if got := Current(); !slices.Equal(got, all) {
			t.Errorf("after undo: thread CPUs %v, want %v", got, all)
		}
	}
	if undo, ok := Pin(-1); ok {
		undo()
		t.Error("Pin(-1) succeeded")
	}
	if undo, ok := Pin(1 << 20); ok {
		undo()
		t.Error("Pin(1<<20) succeeded")
	}
}

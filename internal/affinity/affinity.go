// Package affinity pins the running goroutine's thread to one CPU, for
// gluon.ForEachDevice's CPU contexts. On virtual machines whose cores pass
// cache lines to each other slowly (bench/fmapeak -handoff), a context
// whose goroutine moves between cores from one kernel to the next fetches
// its activations, gradients and weights from the other core's cache each
// time; pinned, two contexts step markedly faster there
// (bench.BenchmarkTrainStepLeNet/2ctx).
//
// On Linux it uses sched_getaffinity and sched_setaffinity; elsewhere
// Allowed is empty and Pin does nothing.
package affinity

import (
	"slices"
	"sync"
)

var (
	allowedOnce sync.Once
	allowed     []int
	// setCPUs is set, a variable for tests.
	setCPUs = set
)

// Allowed returns the CPUs the first caller's thread could run on when
// Allowed was first called (normally the process's CPU set), in
// increasing order; nil where unknown.
func Allowed() []int {
	allowedOnce.Do(func() { allowed = current() })
	return slices.Clone(allowed)
}

// Current returns the CPUs the calling goroutine's thread may run on now;
// nil where unknown.
func Current() []int { return current() }

// Pin locks the calling goroutine to its OS thread and restricts the
// thread to cpu. The returned undo gives the thread back the CPUs it had
// before and unlocks it; the goroutine must call it before it does
// anything else. When the thread's CPUs cannot be given back, undo leaves
// the goroutine locked to the thread (which then ends with it, instead of
// running other goroutines on one CPU) and reports false. ok is false, and
// undo does nothing, where pinning is not supported or failed.
func Pin(cpu int) (undo func() bool, ok bool) {
	none := func() bool { return true }
	lockThread()
	before := current()
	if len(before) == 0 || !setCPUs([]int{cpu}) {
		unlockThread()
		return none, false
	}
	return func() bool {
		if !setCPUs(before) {
			return false
		}
		unlockThread()
		return true
	}, true
}

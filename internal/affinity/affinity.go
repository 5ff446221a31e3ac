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

import "sync"

var (
	allowedOnce sync.Once
	allowed     []int
)

// Allowed returns the CPUs this process may run on, in increasing order,
// as the process had them when Allowed was first called; nil where
// unknown.
func Allowed() []int {
	allowedOnce.Do(func() { allowed = current() })
	return allowed
}

// Current returns the CPUs the calling goroutine's thread may run on now;
// nil where unknown.
func Current() []int { return current() }

// Pin locks the calling goroutine to its OS thread and restricts the
// thread to cpu. The returned undo gives the thread back every CPU of
// Allowed and unlocks it; the goroutine must call it before it does
// anything else. ok is false, and undo does nothing, where pinning is not
// supported or failed.
func Pin(cpu int) (undo func(), ok bool) {
	all := Allowed()
	if len(all) == 0 {
		return func() {}, false
	}
	lockThread()
	if !set([]int{cpu}) {
		unlockThread()
		return func() {}, false
	}
	return func() {
		set(all)
		unlockThread()
	}, true
}

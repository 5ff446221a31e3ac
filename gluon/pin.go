package gluon

import (
	"os"
	"runtime"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/affinity"
	"github.com/goluon/goluon/nd"
)

// pinOff is set by GOLUON_PIN=0, which turns off pinning ForEachDevice's
// CPU contexts.
var pinOff = os.Getenv("GOLUON_PIN") == "0"

// pinPlan returns the CPU each of devs runs on when ForEachDevice pins
// them, or nil when it does not. It pins when every context is a CPU
// context and there is a CPU for each (within GOMAXPROCS and the
// process's CPU set): then each context keeps its data in one core's
// caches instead of following its goroutine from core to core, and its
// kernels run on its own goroutine (nd.DedicateCores).
func pinPlan(devs []ctx.Context) []int {
	if pinOff || len(devs) < 2 {
		return nil
	}
	for _, d := range devs {
		if d.Kind != ctx.KindCPU {
			return nil
		}
	}
	cpus := affinity.Allowed()
	if len(devs) > min(len(cpus), runtime.GOMAXPROCS(0)) {
		return nil
	}
	return cpus[:len(devs)]
}

// pinned runs f on the calling goroutine's thread restricted to the CPU
// plan gives device i, or as it is when plan is nil or pinning fails.
func pinned(plan []int, i int, f func()) {
	if plan != nil {
		if undo, ok := affinity.Pin(plan[i]); ok {
			defer undo()
		}
	}
	f()
}

// dedicate declares plan's goroutines to the CPU backend.
func dedicate(plan []int) (release func()) {
	if plan == nil {
		return func() {}
	}
	return nd.DedicateCores(len(plan))
}

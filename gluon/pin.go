package gluon

import (
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/affinity"
	"github.com/goluon/goluon/nd"
)

var (
	// pinMode is GOLUON_PIN as the program started: "0" never pins
	// ForEachDevice's CPU contexts, "1" always pins them where it can,
	// anything else lets pinChoice choose (pinchoice.go).
	pinMode = os.Getenv("GOLUON_PIN")
	// pinBroken turns pinning off for good once pinning a thread or
	// giving it its CPUs back has failed.
	pinBroken atomic.Bool
	// pinning is held by the one ForEachDevice call that may pin (pinned
	// or not, as pinChoice decides); a nested or concurrent call runs
	// unpinned and untimed.
	pinning atomic.Bool
)

// pinPlan returns the CPU each of devs runs on when ForEachDevice pins
// them, and release, which the call runs when it is done; nil and a no-op
// when it does not pin. It can pin when every context is a CPU context,
// the contexts are as many as the CPUs the process may use and as
// GOMAXPROCS (so no other work of the process is left without a core, and
// a CPU quota below the CPU set turns it off), and no other call holds the
// pins: then each context keeps its data in one core's caches instead of
// following its goroutine from core to core, and its kernels run on its
// own goroutine (nd.DedicateCores). Whether it does is pinChoice's (or
// GOLUON_PIN's, read once when the program starts). release(ok) ends the
// call and, when ok (the call succeeded), times it for pinChoice.
func pinPlan(devs []ctx.Context) (plan []int, release func(ok bool)) {
	none := func(bool) {}
	if pinMode == "0" || pinBroken.Load() || len(devs) < 2 {
		return nil, none
	}
	for _, d := range devs {
		if d.Kind != ctx.KindCPU {
			return nil, none
		}
	}
	cpus := affinity.Allowed()
	if len(devs) != len(cpus) || len(devs) != runtime.GOMAXPROCS(0) {
		return nil, none
	}
	if !pinning.CompareAndSwap(false, true) {
		return nil, none
	}
	start := time.Now()
	pin, timed := true, false
	if pinMode != "1" {
		pin, timed = pinChoice.pick()
	}
	done := func(ok bool) {
		if timed && ok {
			pinChoice.record(pin, time.Since(start))
		}
		pinning.Store(false)
	}
	if !pin {
		return nil, done
	}
	undedicate := nd.DedicateCores(len(devs))
	return cpus, func(ok bool) {
		undedicate()
		done(ok)
	}
}

// pinned runs f on the calling goroutine's thread restricted to the CPU
// plan gives device i, or as it is when plan is nil or pinning fails.
func pinned(plan []int, i int, f func()) {
	if plan != nil && !pinBroken.Load() {
		undo, ok := affinity.Pin(plan[i])
		if !ok {
			pinBroken.Store(true)
		} else {
			defer func() {
				if !undo() {
					pinBroken.Store(true)
				}
			}()
		}
	}
	f()
}

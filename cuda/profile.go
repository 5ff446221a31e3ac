//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// ProfileEnv names the environment variable that turns on the per-operation
// profile: with GOLUON_CUDA_PROFILE=1 every device task (kernel launch,
// product, copy) is followed by a synchronisation of its stream and its
// time, launch to completion, is added to its operation's total (kernels
// are named "op kernel"). The synchronisations slow everything down; the
// profile says where a synchronous op's time goes, not how fast a step is.
// GOLUON_CUDA_PROFILE=gpu measures each task's time on the GPU with events
// instead, and the GPU's idle time between tasks (see gpuTiming).
const ProfileEnv = "GOLUON_CUDA_PROFILE"

var (
	profileMode = os.Getenv(ProfileEnv)
	profiling   = profileMode == "1"
	// profileAny is either profile: ops then carry their kernels' names.
	profileAny = profileMode == "1" || profileMode == "gpu"
)

type profEntry struct {
	n     int
	total time.Duration
}

var (
	profMu    sync.Mutex
	prof      = map[string]*profEntry{}
	profWaits = map[*device][2]int64{} // each device's host syncs and worker calls at the last reset
)

// startedDevices returns the devices started so far, by id.
func startedDevices() []*device {
	b := defaultBackend
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*device
	for _, d := range b.devs {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

func profRecord(op string, d time.Duration) {
	profMu.Lock()
	e := prof[op]
	if e == nil {
		e = &profEntry{}
		prof[op] = e
	}
	e.n++
	e.total += d
	profMu.Unlock()
}

// ResetProfile clears the per-operation profile. With
// GOLUON_CUDA_PROFILE=gpu it first waits for every device's queued work.
func ResetProfile() {
	harvestTimelines(true)
	profMu.Lock()
	clear(prof)
	clear(profWaits)
	for _, d := range startedDevices() {
		profWaits[d] = [2]int64{d.syncs.Load(), d.calls.Load()}
	}
	profMu.Unlock()
}

// WriteProfile writes the per-operation profile gathered since the last
// ResetProfile (nothing unless GOLUON_CUDA_PROFILE is 1 or gpu), the
// largest total first, each row divided by per (e.g. the number of steps;
// 1 for totals), then each device's host synchronisations and round trips
// to its worker over the same span. With GOLUON_CUDA_PROFILE=gpu it first waits for every
// device's queued work.
func WriteProfile(w io.Writer, per int) {
	devs := startedDevices()
	waits := make([][2]int64, len(devs)) // read before the harvest's own waits
	for i, d := range devs {
		waits[i] = [2]int64{d.syncs.Load(), d.calls.Load()}
	}
	harvestTimelines(false)
	profMu.Lock()
	defer profMu.Unlock()
	if len(prof) == 0 {
		return
	}
	names := make([]string, 0, len(prof))
	var all time.Duration
	for k, e := range prof {
		names = append(names, k)
		all += e.total
	}
	slices.SortFunc(names, func(a, b string) int { return int(prof[b].total - prof[a].total) })
	fmt.Fprintf(w, "%-48s %8s %12s %6s\n", "operation", "calls", "µs", "share")
	for _, k := range names {
		e := prof[k]
		fmt.Fprintf(w, "%-48s %8.1f %12.1f %5.1f%%\n", k, float64(e.n)/float64(per),
			float64(e.total.Microseconds())/float64(per), 100*float64(e.total)/float64(all))
	}
	fmt.Fprintf(w, "%-48s %8s %12.1f\n", "total", "", float64(all.Microseconds())/float64(per))
	// The host's waits on each device (see backend.SyncStats), per row too.
	for i, d := range devs {
		base := profWaits[d]
		fmt.Fprintf(w, "%-48s %8.1f\n", fmt.Sprintf("host syncs on %v", d.dev), float64(waits[i][0]-base[0])/float64(per))
		fmt.Fprintf(w, "%-48s %8.1f\n", fmt.Sprintf("worker round trips on %v", d.dev), float64(waits[i][1]-base[1])/float64(per))
	}
}

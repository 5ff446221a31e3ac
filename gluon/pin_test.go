package gluon

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/affinity"
	"github.com/goluon/goluon/nd"
)

func cpuContexts(n int) []ctx.Context {
	devs := make([]ctx.Context, n)
	for i := range devs {
		devs[i] = ctx.CPU(i)
	}
	return devs
}

func TestPinPlan(t *testing.T) {
	all := affinity.Allowed()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(1, len(all))))
	n := len(all)
	want := all
	if n < 2 {
		n, want = 2, nil // nothing to pin to
	}
	// Choosers whose averages favour pinning and not pinning.
	favour := func(pin bool) *choice {
		c := &choice{runs: [2]int{1, 1}, est: [2]float64{2, 1}, rand: 1, best: true} // [unpinned, pinned]
		if !pin {
			c.est = [2]float64{1, 2}
		}
		return c
	}
	cases := []struct {
		name   string
		devs   []ctx.Context
		mode   string
		chose  *choice
		broken bool
		held   bool
		want   []int
	}{
		{"one context", cpuContexts(1), "1", nil, false, false, nil},
		{"a context per CPU", cpuContexts(n), "1", nil, false, false, want},
		{"GOLUON_PIN=0", cpuContexts(n), "0", nil, false, false, nil},
		{"chosen", cpuContexts(n), "", favour(true), false, false, want},
		{"not chosen", cpuContexts(n), "", favour(false), false, false, nil},
		{"after a failure", cpuContexts(n), "1", nil, true, false, nil},
		{"another call holds the pins", cpuContexts(n), "1", nil, false, true, nil},
		{"a GPU context", append(cpuContexts(n-1), ctx.GPU(0)), "1", nil, false, false, nil},
		{"fewer contexts than CPUs", cpuContexts(n - 1), "1", nil, false, false, nil},
		{"more contexts than CPUs", cpuContexts(n + 1), "1", nil, false, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func(m string, ch *choice) { pinMode, pinChoice = m, ch }(pinMode, pinChoice)
			pinMode = c.mode
			if c.chose != nil {
				pinChoice = c.chose
			}
			pinBroken.Store(c.broken)
			defer pinBroken.Store(false)
			if c.held {
				_, release := pinPlan(cpuContexts(n))
				defer release(false)
			}
			before := nd.DedicatedCores()
			got, release := pinPlan(c.devs)
			if !slices.Equal(got, c.want) {
				t.Errorf("pinPlan = %v, want %v", got, c.want)
			}
			if d := nd.DedicatedCores() - before; (got != nil) != (d == len(c.devs)) || (got == nil && d != 0) {
				t.Errorf("%d more goroutines dedicated with plan %v", d, got)
			}
			release(false)
			if nd.DedicatedCores() != before {
				t.Errorf("release left %d dedicated, want %d", nd.DedicatedCores(), before)
			}
		})
	}
}

// threadCPUs returns every thread of the process with its CPU list as
// /proc shows it (Linux).
func threadCPUs(t *testing.T) map[string][]int {
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Skipf("no /proc/self/task: %v", err)
	}
	out := map[string][]int{}
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited
		}
		for _, line := range strings.Split(string(b), "\n") {
			list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
			if !ok {
				continue
			}
			var cpus []int
			for _, r := range strings.Split(strings.TrimSpace(list), ",") {
				lo, hi, _ := strings.Cut(r, "-")
				a, _ := strconv.Atoi(lo)
				b := a
				if hi != "" {
					b, _ = strconv.Atoi(hi)
				}
				for c := a; c <= b; c++ {
					cpus = append(cpus, c)
				}
			}
			out[p] = cpus
		}
	}
	return out
}

// TestForEachDevicePins checks that each CPU context runs on a thread
// restricted to its own CPU, with the CPU backend told, that a nested call
// is not pinned and leaves the outer pin as it was, and that afterwards no
// thread of the process is left restricted and nothing dedicated, also
// when a context fails.
func TestForEachDevicePins(t *testing.T) {
	all := affinity.Allowed()
	if len(all) < 2 {
		t.Skipf("CPUs %v: no pinning here", all)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(len(all)))
	defer func(m string) { pinMode = m }(pinMode)
	pinMode = "1"
	devs := cpuContexts(len(all))
	for _, fail := range []bool{false, true} {
		seen := make([][]int, len(devs))
		dedicated := make([]int, len(devs))
		var inner [][]int
		var afterInner []int
		err := ForEachDevice(devs, func(i int, _ ctx.Context) error {
			seen[i] = affinity.Current()
			dedicated[i] = nd.DedicatedCores()
			if i == 0 {
				inner = make([][]int, len(devs))
				if err := ForEachDevice(devs, func(j int, _ ctx.Context) error {
					inner[j] = affinity.Current()
					return nil
				}); err != nil {
					return err
				}
				afterInner = affinity.Current()
			}
			if fail && i == 1 {
				panic(&nd.Error{Op: "test", Msg: "a failing context"})
			}
			return nil
		})
		if (err != nil) != fail {
			t.Fatalf("fail=%v: err %v", fail, err)
		}
		for i := range devs {
			if !slices.Equal(seen[i], all[i:i+1]) || dedicated[i] != len(devs) {
				t.Errorf("fail=%v: context %d ran on CPUs %v with %d dedicated, want [%d] and %d", fail, i, seen[i], dedicated[i], all[i], len(devs))
			}
		}
		if !slices.Equal(inner[1], all) || !slices.Equal(afterInner, all[:1]) {
			t.Errorf("fail=%v: a nested call ran context 1 on CPUs %v (want %v, unpinned) and left context 0 on %v (want %v)", fail, inner[1], all, afterInner, all[:1])
		}
		if nd.DedicatedCores() != 0 {
			t.Errorf("fail=%v: %d goroutines still dedicated", fail, nd.DedicatedCores())
		}
		for task, cpus := range threadCPUs(t) {
			if !slices.Equal(cpus, all) {
				t.Errorf("fail=%v: thread %s left on CPUs %v, want %v", fail, task, cpus, all)
			}
		}
	}
}

// TestChoice checks the choice between pinned and unpinned calls: a run
// of each kind first, then runs of the faster kind with one run in about
// choiceExplore of the other; the first calls of the first run and of a
// run that changes kind are not timed, and a run's slowest calls do not
// move the estimate; a change of which kind is faster is followed.
func TestChoice(t *testing.T) {
	c := newChoice()
	ms := time.Millisecond
	for i := range 2 * choiceRun {
		pin, timed := c.pick()
		wantPin, wantTimed := i < choiceRun, i%choiceRun >= choiceSettle
		if pin != wantPin || timed != wantTimed {
			t.Fatalf("warm-up call %d: pinned %v timed %v, want %v %v", i, pin, timed, wantPin, wantTimed)
		}
		d := ms
		switch i % choiceRun {
		case choiceSettle + 1:
			d = ms / 10 // a fast outlier
		case choiceSettle + 2:
			d = 50 * ms // a spike where an unsorted median would look
		}
		if timed {
			c.record(pin, d)
		}
	}
	if c.est != [2]float64{ms.Seconds(), ms.Seconds()} {
		t.Fatalf("after the warm-up: estimates %v, want 1ms each (a run's median)", c.est)
	}
	// A run moves its kind's estimate halfway to the run's median.
	half := &choice{pin: true, left: choiceRun, runs: [2]int{1, 1}, est: [2]float64{1e-3, 1e-3}}
	for range choiceRun {
		if pin, timed := half.pick(); pin && timed {
			half.record(true, 3*ms)
		}
	}
	if half.est[1] != 2e-3 || half.runs[1] != 2 {
		t.Errorf("a pinned run of 3ms from 1ms: estimate %v after %d runs, want 2ms after 2", half.est[1], half.runs[1])
	}
	// Runs change kind only when the other estimate is lower by the margin.
	for _, m := range []struct {
		other float64
		want  bool
	}{{0.99, true}, {0.97, false}} {
		h := &choice{best: true, runs: [2]int{1, 1}, est: [2]float64{m.other, 1}, rand: 1}
		if got := h.next(); got != m.want {
			t.Errorf("pinned estimate 1, unpinned %v: next run pinned %v, want %v", m.other, got, m.want)
		}
	}
	// phase runs calls in which pinned ones take pin and the others
	// unpinned, and returns how many of the last half were pinned; it
	// checks that a call is untimed exactly when it is among the first
	// choiceSettle of a run that changed kind.
	last, since := false, choiceRun // the warm-up ended with a run of unpinned calls
	phase := func(calls int, pin, unpinned time.Duration) int {
		n := 0
		for i := range calls {
			p, timed := c.pick()
			if p != last {
				last, since = p, 0
			}
			if want := since >= choiceSettle; timed != want {
				t.Fatalf("call %d, %d since the kind changed: timed %v, want %v", i, since, timed, want)
			}
			since++
			d := unpinned
			if p {
				d = pin
			}
			if timed {
				c.record(p, d)
			}
			if p && i >= calls/2 {
				n++
			}
		}
		return n
	}
	const calls = 12800
	explore := calls / 2 / choiceExplore
	if got := calls/2 - phase(calls, 1*ms, 2*ms); got < explore/2 || got > 3*explore/2 {
		t.Errorf("pinned faster: %d of the last %d calls unpinned, want about %d", got, calls/2, explore)
	}
	if got := phase(calls, 3*ms, 2*ms); got < explore/2 || got > 3*explore/2 {
		t.Errorf("unpinned faster: %d of the last %d calls pinned, want about %d", got, calls/2, explore)
	}
}

// TestForEachDeviceChooses runs ForEachDevice with a fresh choice: a run
// of pinned calls, then one of unpinned calls, each run timed once its
// first calls are past, and a failing call not timed.
func TestForEachDeviceChooses(t *testing.T) {
	all := affinity.Allowed()
	if len(all) < 2 {
		t.Skipf("CPUs %v: no pinning here", all)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(len(all)))
	defer func(m string, c *choice) { pinMode, pinChoice = m, c }(pinMode, pinChoice)
	pinMode, pinChoice = "", newChoice()
	devs := cpuContexts(len(all))
	for i := range 2 * choiceRun {
		var pinned bool
		err := ForEachDevice(devs, func(j int, _ ctx.Context) error {
			if j == 0 {
				pinned = slices.Equal(affinity.Current(), all[:1])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := i < choiceRun; pinned != want {
			t.Fatalf("call %d: pinned %v, want %v", i, pinned, want)
		}
	}
	if pinChoice.runs != [2]int{1, 1} || !(pinChoice.est[0] > 0 && pinChoice.est[1] > 0) {
		t.Fatalf("after a run of each kind: %d runs timed, estimates %v", pinChoice.runs, pinChoice.est)
	}
	// A failing call is not timed: a run of failures leaves no median.
	pinChoice = newChoice()
	for range choiceRun {
		ForEachDevice(devs, func(int, ctx.Context) error { return errors.New("fails") })
	}
	if pinChoice.runs != [2]int{} || len(pinChoice.times) != 0 {
		t.Errorf("failing calls timed: %d runs, times %v", pinChoice.runs, pinChoice.times)
	}
}

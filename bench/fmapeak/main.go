// Command fmapeak measures this machine's float32 FMA peak: register-only
// loops of independent fused multiply-adds, 256-bit (AVX2) and, where the
// CPU has it, 512-bit (AVX-512), on 1 thread and on every core. It is the
// ceiling the CPU kernels are judged against (bench/README.md quotes sgemm
// as a fraction of it).
//
//	go run ./bench/fmapeak            # a table and a JSON line
//	go run ./bench/fmapeak -seconds 2
//
// Each measurement is the best of -reps timed runs of about -seconds/reps
// each, so a busy moment on a shared machine does not pull it down.
//
// It also measures the core-to-core round trip (see handoff), which on
// virtual machines changes over time: -handoff prints that alone (a few
// milliseconds), which make bench does before and after each pair.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/goluon/goluon/nd/cpu"
)

// kernel is one FMA loop: its name, the flops of one iteration and the
// loop itself.
type kernel struct {
	name  string
	flops int
	run   func(n int)
}

// result is one measurement.
type result struct {
	Width   string  `json:"width"`
	Threads int     `json:"threads"`
	GFLOPS  float64 `json:"gflops"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fmapeak:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("fmapeak", flag.ContinueOnError)
	seconds := fs.Float64("seconds", 1, "time spent per measurement")
	reps := fs.Int("reps", 5, "timed runs per measurement (the best counts)")
	only := fs.Bool("handoff", false, "measure only the core-to-core round trip")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rt := handoff(2000, 7)
	if *only {
		return report(w, map[string]any{"program": "fmapeak", "handoff_ns": rt.Nanoseconds()})
	}
	if *seconds <= 0 || *reps < 1 {
		return fmt.Errorf("-seconds and -reps must be positive")
	}
	ks := kernels()
	if len(ks) == 0 {
		return fmt.Errorf("no FMA loop for this CPU (%s, %s)", runtime.GOARCH, cpu.ISAReport())
	}
	threads := []int{1}
	if n := runtime.GOMAXPROCS(0); n > 1 {
		threads = append(threads, n)
	}
	fmt.Fprintf(w, "%s; GOMAXPROCS %d\n", cpu.ISAReport(), runtime.GOMAXPROCS(0))
	var out []result
	for _, k := range ks {
		for _, t := range threads {
			g := measure(k, t, *seconds/float64(*reps), *reps)
			out = append(out, result{k.name, t, g})
			fmt.Fprintf(w, "%-8s %2d thread(s) %7.1f GFLOP/s (%.1f per thread)\n", k.name, t, g, g/float64(t))
		}
	}
	return report(w, map[string]any{"program": "fmapeak", "results": out, "handoff_ns": rt.Nanoseconds()})
}

// report prints the core-to-core round trip and then v as a JSON line.
func report(w io.Writer, v map[string]any) error {
	if ns := v["handoff_ns"].(int64); ns > 0 {
		fmt.Fprintf(w, "core-to-core round trip %d ns (median of 7 runs of 2000)\n", ns)
	} else {
		fmt.Fprintln(w, "core-to-core round trip not measured (one core, or the other busy)")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// measure returns the best GFLOP/s of reps runs of about d seconds each,
// with k's loop on t locked OS threads at once.
func measure(k kernel, t int, d float64, reps int) float64 {
	// Calibrate the iteration count on one thread.
	n := 1 << 16
	for {
		start := time.Now()
		k.run(n)
		if el := time.Since(start).Seconds(); el > 0.01 {
			n = int(float64(n) * d / el)
			break
		}
		n *= 4
	}
	best := 0.0
	for range reps {
		var wg sync.WaitGroup
		start := time.Now()
		for range t {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				k.run(n)
			}()
		}
		wg.Wait()
		el := time.Since(start).Seconds()
		best = max(best, float64(n)*float64(k.flops)*float64(t)/el/1e9)
	}
	return best
}

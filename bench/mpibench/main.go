//go:build mpi

// Command mpibench measures the distributed kvstore on one machine: MPI
// allreduce latency and bandwidth over message sizes, and training steps
// of LeNet and the Keras CIFAR-10 CNN with dist_sync, with the share of
// each step spent exchanging gradients. With -model it also predicts the
// scaling efficiency on a network from those measurements.
//
//	go build -tags mpi -o /tmp/mpibench ./bench/mpibench
//	mpirun -np 4 /tmp/mpibench -allreduce
//	mpirun -np 2 /tmp/mpibench -step lenet
//
// bench/mpi.sh runs the whole set; rank 0 prints the results.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi"
)

func main() {
	allreduce := flag.Bool("allreduce", false, "measure allreduce latency and bandwidth, 4 KiB to 64 MiB")
	step := flag.String("step", "", "measure training steps of this network (lenet or cifar) with dist_sync")
	batch := flag.Int("batch", 0, "per-process batch for -step (default: lenet 128/np, cifar 32)")
	steps := flag.Int("steps", 30, "measured steps per repetition for -step")
	reps := flag.Int("reps", 5, "repetitions (the median is reported)")
	model := flag.String("model", "", "with -step: also predict the efficiency on these networks, e.g. 10,100 (Gbit/s)")
	latency := flag.Duration("latency", 25*time.Microsecond, "per-message network latency assumed by -model")
	bucket := flag.Int("bucket", 0, "with -step: gradient bucket size in bytes (default: the Trainer's)")
	timeline := flag.Bool("timeline", false, "with -step: every rank prints percentiles of its forward and backward passes and of its Step calls")
	cpuprofile := flag.String("cpuprofile", "", "write each rank's CPU profile to this path with the rank appended (e.g. cpu.prof.0)")
	flag.Parse()
	comm, err := mpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpibench:", err)
		os.Exit(1)
	}
	if *cpuprofile != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", *cpuprofile, comm.Rank()))
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "mpibench:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	switch {
	case *allreduce:
		err = benchAllreduce(comm, *reps)
	case *step != "":
		err = benchStep(comm, *step, *batch, *steps, *reps, *model, *latency, *bucket, *timeline)
	default:
		err = fmt.Errorf("choose -allreduce or -step lenet|cifar")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpibench rank %d: %v\n", comm.Rank(), err)
		comm.Abort(1)
		os.Exit(1)
	}
	if err := dist.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "mpibench:", err)
		os.Exit(1)
	}
}

// benchAllreduce times in-place float32 sum allreduces. Each size runs a
// fixed number of calls (the same on every rank), timed between barriers;
// the slowest rank's time counts.
func benchAllreduce(comm *mpi.Comm, reps int) error {
	buf, err := mpi.Alloc(64 << 20)
	if err != nil {
		return err
	}
	defer buf.Free()
	np := comm.Size()
	if comm.Rank() == 0 {
		fmt.Printf("allreduce, %d processes (median of %d repetitions; busbw = algbw · 2(n-1)/n)\n", np, reps)
		fmt.Printf("| size | latency µs | algbw GB/s | busbw GB/s |\n|---:|---:|---:|---:|\n")
	}
	for size := 4 << 10; size <= 64<<20; size *= 4 {
		count := size / 4
		calls := max(3, min(1000, (256<<20)/size)) // ~256 MiB moved per repetition
		var times []float64
		for r := range reps + 1 {
			if err := comm.Barrier(); err != nil {
				return err
			}
			t0 := time.Now()
			for range calls {
				if err := comm.Allreduce(buf, mpi.Float32, count, mpi.Sum); err != nil {
					return err
				}
			}
			el, err := slowest(comm, time.Since(t0).Seconds()/float64(calls))
			if err != nil {
				return err
			}
			if r > 0 { // the first repetition warms up
				times = append(times, el)
			}
		}
		t := median(times)
		alg := float64(size) / t / 1e9
		if comm.Rank() == 0 {
			fmt.Printf("| %s | %.1f | %.2f | %.2f |\n", human(size), t*1e6, alg, alg*2*float64(np-1)/float64(np))
			fmt.Printf("JSON {\"kind\":\"allreduce\",\"np\":%d,\"bytes\":%d,\"seconds\":%.9f}\n", np, size, t)
		}
	}
	return nil
}

// slowest returns the largest v over the ranks.
func slowest(comm *mpi.Comm, v float64) (float64, error) {
	b, err := mpi.Alloc(8)
	if err != nil {
		return 0, err
	}
	defer b.Free()
	b.Float64s()[0] = v
	if err := comm.Allreduce(b, mpi.Float64, 1, mpi.Max); err != nil {
		return 0, err
	}
	return b.Float64s()[0], nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func human(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}

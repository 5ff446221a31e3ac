package mpi

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// warnBinding prints, once, from the first process of each machine, a
// warning when mpirun bound this machine's processes to fewer CPUs than it
// has: Open MPI binds each of up to 2 processes to one core by default, so
// a 1-process job runs on one core whatever GOMAXPROCS says.
func warnBinding() {
	if os.Getenv("OMPI_COMM_WORLD_LOCAL_RANK") != "0" {
		return
	}
	local, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
	if err != nil {
		return
	}
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return
	}
	if msg := bindingAdvice(local, runtime.NumCPU(), countCPUs(string(b))); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
}

// bindingAdvice returns the warning for local processes that can each use
// usable of the machine's online CPUs, or "" when together they can use
// them all (or the counts are unknown).
func bindingAdvice(local, usable, online int) string {
	if local <= 0 || usable <= 0 || online <= 0 || local*usable >= online {
		return ""
	}
	per := max(online/local, 1)
	who := "the process on this machine"
	if local > 1 {
		who = fmt.Sprintf("each of the %d processes on this machine", local)
	}
	return fmt.Sprintf("goluon/mpi: %s can use %d of its %d CPUs (mpirun bound it); "+
		"to give each process %d, launch with `mpirun --map-by slot:PE=%d --bind-to core` (or --use-hwthread-cpus and --bind-to hwthread where CPUs are hardware threads), or --bind-to none",
		who, usable, online, per, per)
}

// countCPUs counts the CPUs of a Linux CPU list such as "0-3,8,10-11"; 0
// if it cannot be read.
func countCPUs(list string) int {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(list), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

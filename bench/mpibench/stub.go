//go:build !mpi

// Command mpibench measures the distributed kvstore; it needs -tags mpi
// (see bench/mpi.sh).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "mpibench: build with -tags mpi and run it with mpirun (see bench/mpi.sh)")
	os.Exit(2)
}

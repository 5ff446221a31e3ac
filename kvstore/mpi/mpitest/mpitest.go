// Package mpitest runs tests as MPI jobs: a test launches its own test
// binary under mpirun, and the copies mpirun starts run one worker test
// each. It needs OpenMPI's mpirun on PATH (Debian: openmpi-bin).
//
//	func TestAllreduce(t *testing.T) {
//		out := mpitest.Run(t, 4, "TestAllreduceWorker", nil)
//		...
//	}
//
//	func TestAllreduceWorker(t *testing.T) {
//		if !mpitest.Worker() {
//			t.Skip("runs under mpirun, launched by TestAllreduce")
//		}
//		...
//	}
package mpitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// workerEnv marks the processes that mpirun starts for a test.
const workerEnv = "GOLUON_MPI_WORKER"

// Worker reports whether this process was started by Run.
func Worker() bool { return os.Getenv(workerEnv) == "1" }

// Rank returns this worker's rank from OpenMPI's environment (-1 outside
// mpirun); it is known before MPI is initialised.
func Rank() int {
	r, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK"))
	if err != nil {
		return -1
	}
	return r
}

// Result is what an MPI job left behind.
type Result struct {
	Output  string        // mpirun's stdout and stderr, all ranks
	Err     error         // mpirun's exit error; nil when every rank passed
	Elapsed time.Duration // wall time of the job
}

// Options adjust a job.
type Options struct {
	// Env holds extra NAME=value pairs for every rank.
	Env []string
	// Timeout kills the job (default 3 minutes).
	Timeout time.Duration
}

// Run launches np copies of the running test binary under mpirun, each
// running only the test named test, and waits for them. The job's output
// is logged when the calling test fails. Run skips the calling test when
// mpirun is not installed.
func Run(t testing.TB, np int, test string, o *Options) Result {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev); make test installs it")
	}
	if o == nil {
		o = &Options{}
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	env := append([]string{workerEnv + "=1"}, o.Env...)
	args := []string{"--oversubscribe", "--bind-to", "none", "-np", strconv.Itoa(np)}
	for _, kv := range env {
		args = append(args, "-x", kv)
	}
	args = append(args, os.Args[0], "-test.run", "^"+test+"$", "-test.count=1", "-test.v")
	c, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(c, mpirun, args...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	r := Result{Output: out.String(), Err: err, Elapsed: time.Since(start)}
	if errors.Is(c.Err(), context.DeadlineExceeded) {
		r.Err = fmt.Errorf("mpirun -np %d %s: killed after %v: %w", np, test, timeout, c.Err())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mpirun -np %d %s output:\n%s", np, test, r.Output)
		}
	})
	return r
}

// RunSingle runs the test named test in a new process of the running test
// binary, without mpirun, with the extra environment env: MPI can be
// initialised only once per process, so a test that needs a fresh
// singleton MPI world runs in a child.
func RunSingle(t testing.TB, test string, env []string) Result {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(c, os.Args[0], "-test.run", "^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return Result{Output: string(out), Err: err, Elapsed: time.Since(start)}
}

// Passed counts the ranks whose output says test passed.
func (r Result) Passed(test string) int {
	return strings.Count(r.Output, "--- PASS: "+test+" (")
}

// Check fails t unless the job succeeded with all np ranks passing test.
func (r Result) Check(t testing.TB, np int, test string) {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("MPI job %s failed: %v", test, r.Err)
	}
	if n := r.Passed(test); n != np {
		t.Fatalf("%d of %d ranks passed %s", n, np, test)
	}
}

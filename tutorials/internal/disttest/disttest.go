// Package disttest runs a tutorial program as a 2-process MPI job in its
// package's tests (-kvstore dist_sync): the test TestDistSync calls Job,
// and the worker test TestDistSyncWorker calls Worker on each rank.
package disttest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// Ranks is the size of the jobs.
const Ranks = 2

// Job runs the test binary's TestDistSyncWorker on Ranks processes with
// the extra environment env. It fails t unless every rank passed and the
// job printed exactly one summary line of program (rank 0's), and
// returns that summary and the job's output.
func Job(t *testing.T, program string, env []string) (map[string]any, string) {
	t.Helper()
	r := mpitest.Run(t, Ranks, "TestDistSyncWorker", &mpitest.Options{Env: env})
	r.Check(t, Ranks, "TestDistSyncWorker")
	sums, err := common.Summaries(r.Output, program)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 {
		t.Fatalf("%d summary lines, want 1 (rank 0 only)", len(sums))
	}
	return sums[0], r.Output
}

// Worker is the body of TestDistSyncWorker: it skips outside mpirun, runs
// the program with args, fails when a rank other than 0 printed anything,
// echoes the output for Job to read, and returns it.
func Worker(t *testing.T, run func(args []string, w io.Writer) error, args []string) string {
	t.Helper()
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestDistSync")
	}
	var buf bytes.Buffer
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
	}
	if rank := mpitest.Rank(); rank != 0 && buf.Len() != 0 {
		t.Errorf("rank %d printed:\n%s", rank, buf.String())
	}
	fmt.Print(buf.String())
	return buf.String()
}

// Once fails t unless want occurs exactly once in output (a line that
// only rank 0 may print).
func Once(t *testing.T, output, want string) {
	t.Helper()
	if n := strings.Count(output, want); n != 1 {
		t.Errorf("%q was printed %d times, want once", want, n)
	}
}

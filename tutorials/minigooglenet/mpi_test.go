//go:build mpi

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// TestDistSync runs the program as a 2-process MPI job (-kvstore
// dist_sync) on generated data: only rank 0 prints and writes (the plot
// included), the summary counts both workers, and the workers shared the
// epoch.
func TestDistSync(t *testing.T) {
	root, err := common.WriteFakeCIFAR10(t.TempDir(), 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	r := mpitest.Run(t, 2, "TestDistSyncWorker", &mpitest.Options{Env: []string{"GOLUON_TEST_DATA=" + root, "GOLUON_TEST_OUT=" + out}})
	r.Check(t, 2, "TestDistSyncWorker")
	sums, err := common.Summaries(r.Output, program)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 {
		t.Fatalf("%d summary lines, want 1 (rank 0 only)", len(sums))
	}
	batch, _ := strconv.Atoi(smokeBatch)
	extra, _ := sums[0]["extra"].(map[string]any)
	if sums[0]["epochs"] != 1.0 || extra["workers"] != 2.0 || extra["global_batch"] != float64(2*batch) {
		t.Errorf("summary %v: want 1 epoch, 2 workers and a global batch of 2×%d", sums[0], batch)
	}
	if n := strings.Count(r.Output, "[INFO] loading CIFAR-10 data..."); n != 1 {
		t.Errorf("the first line was printed %d times, want once", n)
	}
	if hist := checkOutputs(t, out); len(hist) != 1 {
		t.Errorf("history %+v: want 1 epoch", hist)
	}
}

func TestDistSyncWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestDistSync")
	}
	var buf bytes.Buffer
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-out", os.Getenv("GOLUON_TEST_OUT"), "-epochs", "1",
		"-limit", smokeLimit, "-batch-size", smokeBatch, "-contexts", "cpu:0", "-kvstore", "dist_sync"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
	}
	if rank := mpitest.Rank(); rank != 0 && buf.Len() != 0 {
		t.Errorf("rank %d printed:\n%s", rank, buf.String())
	}
	// Each worker trained on its half of the images in batches of
	// -batch-size: two of 16 (one of 4 under the race detector).
	limit, _ := strconv.Atoi(smokeLimit)
	batch, _ := strconv.Atoi(smokeBatch)
	steps := limit / 2 / batch
	if want := fmt.Sprintf("100%% %d/%d batches", steps, steps); mpitest.Rank() == 0 && !strings.Contains(buf.String(), want) {
		t.Errorf("rank 0's output lacks %q:\n%s", want, buf.String())
	}
	fmt.Print(buf.String())
}

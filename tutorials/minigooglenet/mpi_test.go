//go:build mpi

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/tutorials/internal/common"
	"github.com/goluon/goluon/tutorials/internal/disttest"
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
	sum, output := disttest.Job(t, program, []string{"GOLUON_TEST_DATA=" + root, "GOLUON_TEST_OUT=" + out})
	batch, _ := strconv.Atoi(smokeBatch)
	extra, _ := sum["extra"].(map[string]any)
	if sum["epochs"] != 1.0 || extra["processes"] != 2.0 || extra["global_batch"] != float64(2*batch) {
		t.Errorf("summary %v: want 1 epoch, 2 workers and a global batch of 2×%d", sum, batch)
	}
	disttest.Once(t, output, "[INFO] loading CIFAR-10 data...")
	if hist := checkOutputs(t, out); len(hist) != 1 {
		t.Errorf("history %+v: want 1 epoch", hist)
	}
}

func TestDistSyncWorker(t *testing.T) {
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-out", os.Getenv("GOLUON_TEST_OUT"), "-epochs", "1",
		"-limit", smokeLimit, "-batch-size", smokeBatch, "-contexts", "cpu:0", "-kvstore", "dist_sync"}
	out := disttest.Worker(t, run, args)
	// Each worker trained on its half of the images in batches of
	// -batch-size: two of 16 (one of 4 under the race detector).
	limit, _ := strconv.Atoi(smokeLimit)
	batch, _ := strconv.Atoi(smokeBatch)
	steps := limit / 2 / batch
	if want := fmt.Sprintf("100%% %d/%d batches", steps, steps); mpitest.Rank() == 0 && !strings.Contains(out, want) {
		t.Errorf("rank 0's output lacks %q:\n%s", want, out)
	}
}

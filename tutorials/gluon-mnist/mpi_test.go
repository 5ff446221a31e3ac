//go:build mpi

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/tutorials/internal/common"
	"github.com/goluon/goluon/tutorials/internal/disttest"
)

// TestDistSync runs the program as a 2-process MPI job (-kvstore
// dist_sync) on generated data: only rank 0 prints and writes, the summary
// counts both workers, and the workers shared the epoch.
func TestDistSync(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 256, 64, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, output := disttest.Job(t, program, []string{"GOLUON_TEST_DATA=" + dataDir, "GOLUON_TEST_OUT=" + out})
	extra, _ := sum["extra"].(map[string]any)
	if extra["processes"] != 2.0 || extra["batch_global"] != 64.0 {
		t.Errorf("summary extra %v: want 2 workers and a global batch of 2×32", extra)
	}
	disttest.Once(t, output, "training LeNet on")
	if _, err := os.Stat(filepath.Join(out, "lenet.safetensors")); err != nil {
		t.Errorf("rank 0 wrote no parameters: %v", err)
	}
}

func TestDistSyncWorker(t *testing.T) {
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-epochs", "1", "-limit", "256", "-contexts", "cpu:0",
		"-out", os.Getenv("GOLUON_TEST_OUT"), "-batch-size", "32", "-kvstore", "dist_sync"}
	out := disttest.Worker(t, run, args)
	// Each worker trained on its half of the 256 samples: 4 batches of 32.
	if mpitest.Rank() == 0 && !strings.Contains(out, "100% 4/4 batches") {
		t.Errorf("rank 0 did not run 4 batches of its 128-sample shard:\n%s", out)
	}
}

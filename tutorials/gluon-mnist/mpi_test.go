//go:build mpi

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/tutorials/internal/common"
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
	r := mpitest.Run(t, 2, "TestDistSyncWorker", &mpitest.Options{Env: []string{"GOLUON_TEST_DATA=" + dataDir, "GOLUON_TEST_OUT=" + out}})
	r.Check(t, 2, "TestDistSyncWorker")
	sums, err := common.Summaries(r.Output, program)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 {
		t.Fatalf("%d summary lines, want 1 (rank 0 only)", len(sums))
	}
	extra, _ := sums[0]["extra"].(map[string]any)
	if extra["workers"] != 2.0 || extra["batch_global"] != 64.0 {
		t.Errorf("summary extra %v: want 2 workers and a global batch of 2×32", extra)
	}
	if n := strings.Count(r.Output, "training LeNet on"); n != 1 {
		t.Errorf("the banner was printed %d times, want once", n)
	}
	if _, err := os.Stat(filepath.Join(out, "lenet.safetensors")); err != nil {
		t.Errorf("rank 0 wrote no parameters: %v", err)
	}
}

func TestDistSyncWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestDistSync")
	}
	var buf bytes.Buffer
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-epochs", "1", "-limit", "256", "-contexts", "cpu:0",
		"-out", os.Getenv("GOLUON_TEST_OUT"), "-batch-size", "32", "-kvstore", "dist_sync"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
	}
	if rank := mpitest.Rank(); rank != 0 && buf.Len() != 0 {
		t.Errorf("rank %d printed:\n%s", rank, buf.String())
	}
	// Each worker trained on its half of the 256 samples: 4 batches of 32.
	if mpitest.Rank() == 0 && !strings.Contains(buf.String(), "100% 4/4 batches") {
		t.Errorf("rank 0 did not run 4 batches of its 128-sample shard:\n%s", buf.String())
	}
	fmt.Print(buf.String())
}

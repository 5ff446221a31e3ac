//go:build mpi

package main

import (
	"io"
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
	if err := common.WriteFakeMNIST(dataDir, 128, 32, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, output := disttest.Job(t, program, []string{"GOLUON_TEST_DATA=" + dataDir, "GOLUON_TEST_OUT=" + out})
	extra, _ := sum["extra"].(map[string]any)
	if sum["epochs"] != 1.0 || extra["processes"] != 2.0 || extra["kvstore"] != "dist_sync" {
		t.Errorf("summary %v: want 1 epoch, 2 workers and kvstore dist_sync", sum)
	}
	disttest.Once(t, output, "total: ")
	if st, err := os.Stat(filepath.Join(out, paramsFile)); err != nil || st.Size() == 0 {
		t.Errorf("rank 0 wrote no parameters: %v", err)
	}
	if n := countJSONLines(t, filepath.Join(out, "metrics.jsonl")); n != 1 {
		t.Errorf("metrics log has %d lines, want 1 (rank 0 only)", n)
	}
}

// TestDistSyncSyncBN runs the job with 2 contexts per process and
// SyncBatchNorm, whose statistics exchanges over the processes share MPI
// with the gradient buckets' reductions during backward.
func TestDistSyncSyncBN(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 128, 32, 1); err != nil {
		t.Fatal(err)
	}
	sum, _ := disttest.Job(t, program, []string{"GOLUON_TEST_DATA=" + dataDir, "GOLUON_TEST_OUT=" + filepath.Join(dir, "out"), "GOLUON_TEST_SYNCBN=1"})
	extra, _ := sum["extra"].(map[string]any)
	if sum["epochs"] != 1.0 || extra["processes"] != 2.0 {
		t.Errorf("summary %v: want 1 epoch and 2 workers", sum)
	}
}

func TestDistSyncWorker(t *testing.T) {
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-out", os.Getenv("GOLUON_TEST_OUT"), "-epochs", "1",
		"-limit", smokeLimit, "-contexts", "cpu:0", "-batch-size", "64", "-workers", "0", "-kvstore", "dist_sync"}
	syncBN := os.Getenv("GOLUON_TEST_SYNCBN") == "1"
	if syncBN {
		args = append(args, "-sync-bn")
		args[9], args[11] = "cpu:0,cpu:1", "32"
	}
	out := disttest.Worker(t, func(args []string, w io.Writer) error { _, err := train(args, w); return err }, args)
	if syncBN {
		return
	}
	// Each worker trained on its half of the samples: one batch (of 64
	// from 128 samples, of 16 under the race detector).
	if mpitest.Rank() == 0 {
		for _, want := range []string{"2 workers × contexts [cpu(0)], batch 64 per context (128 in all)", "100% 1/1 batches"} {
			if !strings.Contains(out, want) {
				t.Errorf("rank 0's output lacks %q:\n%s", want, out)
			}
		}
	}
}

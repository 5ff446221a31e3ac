//go:build mpi

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon/data/vision"
	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/tutorials/internal/common"
	"github.com/goluon/goluon/tutorials/internal/disttest"
)

// TestDistSync runs the program as a 2-process MPI job (-kvstore
// dist_sync) on generated data: only rank 0 prints and writes, the summary
// counts both workers, and the workers shared the epoch. A second job
// resumes from rank 0's checkpoint on both ranks (rank 1 read-only).
func TestDistSync(t *testing.T) {
	dir := t.TempDir()
	root, err := common.WriteFakeCIFAR10(filepath.Join(dir, "data"), 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	env := []string{"GOLUON_TEST_DATA=" + root, "GOLUON_TEST_OUT=" + out, vision.EnvData + "=" + filepath.Join(dir, "cache")}

	sum := distSyncJob(t, env, "1")
	extra, _ := sum["extra"].(map[string]any)
	if sum["epochs"] != 1.0 || extra["processes"] != 2.0 || extra["global_batch"] != 64.0 {
		t.Errorf("summary %v: want 1 epoch, 2 workers and a global batch of 2×32", sum)
	}
	for _, f := range []string{paramsFile, metricsFile, filepath.Join(ckptDir, "checkpoint.json")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("rank 0 did not write %s: %v", f, err)
		}
	}

	// -resume: both ranks restore epoch 1 and train epoch 2 together.
	sum = distSyncJob(t, append(env, "GOLUON_TEST_RESUME=1"), "2")
	if extra, _ := sum["extra"].(map[string]any); sum["epochs"] != 2.0 || extra["resumed_from"] != 1.0 || extra["epochs_this_run"] != 1.0 {
		t.Errorf("resumed summary %v: want epoch 2 after the checkpoint of epoch 1", sum)
	}
	b, err := os.ReadFile(filepath.Join(out, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("metrics log has %d lines, want 2 (rank 0 only):\n%s", n, b)
	}
}

// distSyncJob runs TestDistSyncWorker on 2 ranks for -epochs epochs and
// returns the one summary line of the job.
func distSyncJob(t *testing.T, env []string, epochs string) map[string]any {
	t.Helper()
	sum, output := disttest.Job(t, program, append(env, "GOLUON_TEST_EPOCHS="+epochs))
	disttest.Once(t, output, "train samples")
	return sum
}

func TestDistSyncWorker(t *testing.T) {
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-out", os.Getenv("GOLUON_TEST_OUT"),
		"-epochs", os.Getenv("GOLUON_TEST_EPOCHS"), "-limit", "64", "-contexts", "cpu:0", "-workers", "2", "-kvstore", "dist_sync"}
	if os.Getenv("GOLUON_TEST_RESUME") != "" {
		args = append(args, "-resume")
	}
	out := disttest.Worker(t, run, args)
	// Each worker trained on its half of the 64 samples: one batch of 32.
	if mpitest.Rank() == 0 && !strings.Contains(out, "batch 32 per context (64 in all), 1 steps per epoch") {
		t.Errorf("rank 0 did not run 1 batch of its 32-sample shard:\n%s", out)
	}
}

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
	if err := common.WriteFakeMNIST(dataDir, 128, 32, 1); err != nil {
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
	if sums[0]["epochs"] != 1.0 || extra["workers"] != 2.0 || extra["kvstore"] != "dist_sync" {
		t.Errorf("summary %v: want 1 epoch, 2 workers and kvstore dist_sync", sums[0])
	}
	if n := strings.Count(r.Output, "total: "); n != 1 {
		t.Errorf("the total line was printed %d times, want once", n)
	}
	if st, err := os.Stat(filepath.Join(out, paramsFile)); err != nil || st.Size() == 0 {
		t.Errorf("rank 0 wrote no parameters: %v", err)
	}
	if n := countJSONLines(t, filepath.Join(out, "metrics.jsonl")); n != 1 {
		t.Errorf("metrics log has %d lines, want 1 (rank 0 only)", n)
	}
}

func TestDistSyncWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestDistSync")
	}
	var buf bytes.Buffer
	args := []string{"-data", os.Getenv("GOLUON_TEST_DATA"), "-out", os.Getenv("GOLUON_TEST_OUT"), "-epochs", "1",
		"-limit", smokeLimit, "-contexts", "cpu:0", "-batch-size", "64", "-workers", "0", "-kvstore", "dist_sync"}
	if _, err := train(args, &buf); err != nil {
		t.Fatalf("train: %v\noutput:\n%s", err, buf.String())
	}
	if rank := mpitest.Rank(); rank != 0 && buf.Len() != 0 {
		t.Errorf("rank %d printed:\n%s", rank, buf.String())
	}
	// Each worker trained on its half of the samples: one batch (of 64
	// from 128 samples, of 16 under the race detector).
	if mpitest.Rank() == 0 {
		for _, want := range []string{"2 workers × contexts [cpu(0)], batch 64 per context (128 in all)", "100% 1/1 batches"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("rank 0's output lacks %q:\n%s", want, buf.String())
			}
		}
	}
	fmt.Print(buf.String())
}

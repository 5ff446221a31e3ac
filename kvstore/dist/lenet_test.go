//go:build mpi

package dist_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi/mpitest"
)

// The worker tests read their job from the environment.
const (
	envOut     = "GOLUON_TEST_OUT"     // directory for the ranks' parameters
	envMode    = "GOLUON_TEST_MODE"    // which job: see workerJob
	envCkpt    = "GOLUON_TEST_CKPT"    // checkpoint directory
	envOnKV    = "GOLUON_TEST_ONKV"    // "1": update on the kvstore
	envMoment  = "GOLUON_TEST_MOMENT"  // SGD momentum
	envDevices = "GOLUON_TEST_DEVICES" // CPU contexts per process
	envBucket  = "GOLUON_TEST_BUCKET"  // bucket size in bytes
)

const lenetSteps = 20

// workerJob is the job of this rank for the mode in the environment.
func workerJob(t *testing.T, rank, size int) lenetJob {
	mom, _ := strconv.ParseFloat(os.Getenv(envMoment), 64)
	j := lenetJob{
		devices: 1, kv: "dist_sync", rank: rank, size: size, steps: lenetSteps,
		momentum: mom, onKV: os.Getenv(envOnKV) == "1",
		// Different seeds per rank: the replicas agree only because Init
		// broadcasts rank 0's values.
		seed:   uint64(2024 + 1000*rank),
		outDir: os.Getenv(envOut), die: -1, freezeRank: -1,
	}
	if n, err := strconv.Atoi(os.Getenv("GOLUON_TEST_STEPS")); err == nil {
		j.steps = n
	}
	if n, err := strconv.Atoi(os.Getenv(envDevices)); err == nil {
		j.devices = n
	}
	if n, err := strconv.Atoi(os.Getenv(envBucket)); err == nil {
		j.bucket = n
	}
	j.twice = os.Getenv("GOLUON_TEST_TWICE") == "1"

	switch os.Getenv(envMode) {
	case "full":
	case "first-half": // steps 0..9, then rank 0 writes a checkpoint
		j.steps, j.saveTo = lenetSteps/2, os.Getenv(envCkpt)
	case "second-half": // steps 10..19 from the checkpoint
		j.first, j.steps, j.resumeFrom = lenetSteps/2, lenetSteps/2, os.Getenv(envCkpt)
	case "deferred": // shapes deferred to the first step, seeds differ
		j.deferred, j.expectErr = true, "initial parameters differed"
	case "die": // rank 2 exits before step 5
		j.die, j.dieAt = 2, 5
		j.dieHook = func() { fmt.Println("rank 2 exits on purpose"); os.Exit(3) }
	case "stale": // rank 1 runs no backward pass before step 5
		j.die, j.dieAt, j.skip, j.errAt = 1, 5, true, 5
		j.expectErr = "another worker's step failed"
		if rank == 1 {
			j.expectErr = "gradient of parameter"
		}
	case "stale-ignore": // the same with StepIgnoreStale: the workers disagree
		j.die, j.dieAt, j.skip, j.errAt, j.ignore = 1, 5, true, 5, true
		j.expectErr = "workers disagree"
	case "freeze": // every rank freezes the first parameter after backward at step 5, unfreezes it at step 10
		j.freezeAt, j.thawAt = 5, 10
	case "freeze-short": // as freeze, and rank 1 has one sample over its 2 contexts at step 5
		j.freezeAt, j.thawAt, j.die, j.dieAt, j.short = 5, 10, 1, 5, true
	case "stale-frozen": // as stale, with the first parameter frozen from the start
		j.die, j.dieAt, j.skip, j.errAt, j.frozen = 1, 5, true, 5, true
		j.expectErr = "another worker's step failed"
		if rank == 1 {
			j.expectErr = "gradient of parameter"
		}
	case "frozen-start": // frozen from the start (the ranks' seeds differ), unfrozen before step 10
		j.frozen, j.thawAt = true, 10
	case "thaw-short": // frozen from the start, unfrozen after the backward pass of step 5, where rank 1 has one sample
		j.frozen, j.thawAt, j.thawAfter, j.die, j.dieAt, j.short, j.ignore = true, 5, true, 1, 5, true, true
	case "lazy-frozen": // frozen from the start; rank 0 alone writes it after NewTrainer, no Init
		j.frozen, j.thawAt, j.deferred, j.lazyWrite, j.errAt = true, -1, true, true, 0
		j.expectErr = "initial parameters differed"
	case "late": // a layer frozen and not initialised at the first use joins at step 5 (Init)
		j.late = 5
	case "freeze-one": // rank 1 alone freezes it at step 5: the workers disagree
		j.freezeAt, j.thawAt, j.freezeRank, j.errAt = 5, 10, 1, 5
		j.expectErr = "workers disagree"
	case "overflow": // rank 1's gradients are NaN at step 5: every rank skips it
		j.die, j.dieAt, j.overflow = 1, 5, true
	case "unused": // a trained layer no forward pass uses, skipped with StepIgnoreStale
		j.unused, j.ignore = true, true
	case "unused-retry": // the same, each step after a Step that fails on it
		j.unused, j.retry = true, true
	case "stall": // rank 2 stops taking part before step 5
		j.die, j.dieAt = 2, 5
		j.dieHook = func() { time.Sleep(time.Minute) }
	default:
		t.Fatalf("unknown mode %q", os.Getenv(envMode))
	}
	return j
}

func TestLeNetWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by the LeNet tests")
	}
	kv, err := dist.New(dist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := workerJob(t, kv.Rank(), kv.NumWorkers())
	trainLeNet(t, j)
	if err := dist.Finalize(); err != nil {
		t.Fatal(err)
	}
}

// runLeNet runs a 4-worker LeNet job in mode and returns its output
// directory.
func runLeNet(t *testing.T, mode string, extra ...string) (string, mpitest.Result) {
	out := t.TempDir()
	env := append([]string{envOut + "=" + out, envMode + "=" + mode}, extra...)
	return out, mpitest.Run(t, 4, "TestLeNetWorker", &mpitest.Options{Env: env, Timeout: 2 * time.Minute})
}

// TestLeNetEquivalence is the equivalence test: LeNet trained 20
// steps with 4 processes × 1 context each ends with the parameters of 1
// process × 4 contexts and of 1 process × 1 context at the same global
// batch, within 1e-5 relative; all 4 workers end bitwise equal.
func TestLeNetEquivalence(t *testing.T) {
	for _, c := range []struct {
		momentum float64
		onKV     bool
	}{{0, false}, {0.9, false}, {0.9, true}} {
		t.Run(fmt.Sprintf("momentum%v/onkv=%v", c.momentum, c.onKV), func(t *testing.T) {
			onKV := "0"
			if c.onKV {
				onKV = "1"
			}
			dir, r := runLeNet(t, "full", envOnKV+"="+onKV, envMoment+"="+fmt.Sprint(c.momentum))
			r.Check(t, 4, "TestLeNetWorker")
			got := loadParams(t, rankFile(dir, 0))
			for rank := 1; rank < 4; rank++ {
				other := loadParams(t, rankFile(dir, rank))
				for name, w := range got {
					if !slices.Equal(w, other[name]) {
						t.Errorf("rank %d's %s differs from rank 0's", rank, name)
					}
				}
			}
			base := lenetJob{steps: lenetSteps, seed: 2024, momentum: c.momentum, onKV: c.onKV, size: 1, die: -1}
			one, four := base, base
			one.devices, one.kv = 1, "local"
			four.devices, four.kv = 4, "device"
			ref1, ref4 := trainLeNet(t, one), trainLeNet(t, four)
			initial := base
			initial.devices, initial.kv, initial.steps = 1, "local", 0
			start := trainLeNet(t, initial)
			for name, w := range ref1 { // training must move every parameter
				if d := relDiff(w, start[name]); d < 1e-3 {
					t.Fatalf("%s moved only %.3g relative: is the trainer updating?", name, d)
				}
			}
			d1 := compare(t, "4 processes vs 1 process × 1 context", ref1, got, 1e-5)
			d4 := compare(t, "4 processes vs 1 process × 4 contexts", ref4, got, 1e-5)
			t.Logf("largest relative difference: %.3g vs 1×1, %.3g vs 1×4 (%v for the 4-process job)", d1, d4, r.Elapsed.Round(time.Millisecond))
		})
	}
}

// TestLeNetBucketsAcrossWorkers: 4 processes × 2 contexts, with buckets
// small enough that LeNet's gradients fill several, started in order
// during backward, end where 1 process × 1 context ends.
func TestLeNetBucketsAcrossWorkers(t *testing.T) {
	dir, r := runLeNet(t, "full", envMoment+"=0.9", envDevices+"=2", envBucket+"=16384")
	r.Check(t, 4, "TestLeNetWorker")
	ref := trainLeNet(t, lenetJob{steps: lenetSteps, seed: 2024, momentum: 0.9, size: 1, die: -1, devices: 1, kv: "local"})
	for rank := range 4 {
		compare(t, fmt.Sprintf("rank %d of 4 processes × 2 contexts vs 1 process × 1 context", rank), ref, loadParams(t, rankFile(dir, rank)), 1e-5)
	}
}

// TestSecondBackwardAcrossWorkers: two backward passes before each step
// (the second overwrites the gradients, after their buckets were summed
// during the first) train as one pass does: the restarted buckets are
// summed again, in the same order on every worker.
func TestSecondBackwardAcrossWorkers(t *testing.T) {
	dir, r := runLeNet(t, "full", envMoment+"=0.9", envDevices+"=2", envBucket+"=16384", "GOLUON_TEST_TWICE=1")
	r.Check(t, 4, "TestLeNetWorker")
	ref := trainLeNet(t, lenetJob{steps: lenetSteps, seed: 2024, momentum: 0.9, size: 1, die: -1, devices: 1, kv: "local"})
	for rank := range 4 {
		compare(t, fmt.Sprintf("rank %d with two backward passes per step vs one process", rank), ref, loadParams(t, rankFile(dir, rank)), 1e-5)
	}
}

// TestFreezeAcrossWorkers: a parameter frozen on every worker after the
// backward pass of step 5, its bucket's sum started during that pass, is
// skipped from step 5 to 9 and trained again from step 10; the workers end
// where one process with the same freezing ends. Frozen on one worker
// only, every worker fails that step: they disagree on what to update.
func TestFreezeAcrossWorkers(t *testing.T) {
	dir, r := runLeNet(t, "freeze", envMoment+"=0.9", envDevices+"=2", envBucket+"=16384")
	r.Check(t, 4, "TestLeNetWorker")
	ref := trainLeNet(t, lenetJob{steps: lenetSteps, seed: 2024, momentum: 0.9, size: 1, die: -1, devices: 1, kv: "local", freezeAt: 5, thawAt: 10, freezeRank: -1})
	for rank := range 4 {
		compare(t, fmt.Sprintf("rank %d freezing a parameter vs one process", rank), ref, loadParams(t, rankFile(dir, rank)), 1e-5)
	}
	// Frozen from the start, the parameter is rank 0's on every worker
	// (the seeds differ), and the job ends where one process with the
	// same batch per context ends. (Against one context and the whole
	// batch it differs by 1% from the second step on, as one process with
	// 4 contexts does: the first dense layer's GEMM rounds differently at
	// smaller batches than at 32 (1,636 of its 3,840 outputs differ in
	// their last bits between batch 1 and 32), and one pre-activation of
	// the second step lies within that rounding of 0, so its ReLU passes
	// the gradient in one and not in the other.)
	dir, r = runLeNet(t, "frozen-start", envMoment+"=0.9", envDevices+"=1")
	r.Check(t, 4, "TestLeNetWorker")
	ref = trainLeNet(t, lenetJob{steps: lenetSteps, seed: 2024, momentum: 0.9, size: 1, die: -1, devices: 4, kv: "device", frozen: true, thawAt: 10})
	for rank := range 4 {
		compare(t, fmt.Sprintf("rank %d with a parameter frozen from the start vs one process", rank), ref, loadParams(t, rankFile(dir, rank)), 1e-5)
	}
	// A worker whose second context has no sample at that step starts no
	// sum during backward: every worker still finishes the round alike,
	// when freezing and when unfreezing after backward.
	for _, mode := range []string{"freeze-short", "thaw-short"} {
		dir, r = runLeNet(t, mode, envMoment+"=0.9", envDevices+"=2", envBucket+"=16384")
		r.Check(t, 4, "TestLeNetWorker")
		got := loadParams(t, rankFile(dir, 0))
		for rank := 1; rank < 4; rank++ {
			for name, w := range loadParams(t, rankFile(dir, rank)) {
				if !slices.Equal(w, got[name]) {
					t.Errorf("%s: rank %d's %s differs from rank 0's", mode, rank, name)
				}
			}
		}
	}
	// A layer that was frozen and not initialised at the first use, then
	// initialised with each rank's own seed, unfrozen and entered with
	// Init, trains from rank 0's values on every worker.
	dir, r = runLeNet(t, "late", envMoment+"=0.9", envDevices+"=2", envBucket+"=16384")
	r.Check(t, 4, "TestLeNetWorker")
	ref = trainLeNet(t, lenetJob{steps: lenetSteps, seed: 2024, momentum: 0.9, size: 1, die: -1, devices: 8, kv: "device", late: 5, bucket: 16384})
	for rank := range 4 {
		compare(t, fmt.Sprintf("rank %d with a layer joining at step 5 vs one process", rank), ref, loadParams(t, rankFile(dir, rank)), 1e-5)
	}
	for _, mode := range []string{"freeze-one", "lazy-frozen"} {
		// Frozen on one worker only, or a frozen weight that differs
		// between the workers when their first gradients are computed:
		// every worker fails that step.
		_, r = runLeNet(t, mode, "GOLUON_MPI_TIMEOUT=30s")
		r.Check(t, 4, "TestLeNetWorker")
		if n := strings.Count(r.Output, "expected error"); n != 4 {
			t.Errorf("%s: %d of 4 ranks got the error", mode, n)
		}
	}
}

// TestStaleWorkerFailsEveryWorker: a worker whose step fails on its own (a
// stale gradient) still takes part in the step's collectives, so every
// worker fails that step with an error at once, instead of waiting for
// the collective deadline; with StepIgnoreStale, the workers disagree on
// what to update, which every worker reports.
func TestStaleWorkerFailsEveryWorker(t *testing.T) {
	for _, mode := range []string{"stale", "stale-ignore", "stale-frozen"} {
		t.Run(mode, func(t *testing.T) {
			_, r := runLeNet(t, mode, "GOLUON_MPI_TIMEOUT=30s")
			r.Check(t, 4, "TestLeNetWorker")
			if n := strings.Count(r.Output, "expected error"); n != 4 {
				t.Errorf("%d of 4 ranks got the error", n)
			}
		})
	}
}

// TestStaleRetryAcrossWorkers: a Step that fails on every worker for a
// stale gradient has summed the others over the workers already; the
// StepIgnoreStale its error suggests then updates as a StepIgnoreStale
// in its place does (it summed them a second time, a 4× update with 2
// workers of 2 contexts).
func TestStaleRetryAcrossWorkers(t *testing.T) {
	env := []string{envMoment + "=0.9", envDevices + "=2", envBucket + "=16384", "GOLUON_TEST_STEPS=4"}
	want, r := runLeNet(t, "unused", env...)
	r.Check(t, 4, "TestLeNetWorker")
	got, r := runLeNet(t, "unused-retry", env...)
	r.Check(t, 4, "TestLeNetWorker")
	for rank := range 4 {
		w, g := loadParams(t, rankFile(want, rank)), loadParams(t, rankFile(got, rank))
		for name := range w {
			if !slices.Equal(w[name], g[name]) {
				t.Errorf("rank %d: %s after retries differs from StepIgnoreStale alone (%.3g relative)", rank, name, relDiff(w[name], g[name]))
			}
		}
	}
}

// TestOverflowSkipsEveryWorker: with a GradScaler, a step whose gradients
// are not finite on one worker is skipped on every worker (they all see
// the same sums), and the workers end bitwise equal.
func TestOverflowSkipsEveryWorker(t *testing.T) {
	dir, r := runLeNet(t, "overflow", envDevices+"=2")
	r.Check(t, 4, "TestLeNetWorker")
	if n := strings.Count(r.Output, "skipped step 5"); n != 4 {
		t.Errorf("%d of 4 ranks skipped step 5", n)
	}
	got := loadParams(t, rankFile(dir, 0))
	for rank := 1; rank < 4; rank++ {
		for name, w := range loadParams(t, rankFile(dir, rank)) {
			if !slices.Equal(w, got[name]) {
				t.Errorf("rank %d's %s differs from rank 0's", rank, name)
			}
		}
	}
}

// TestCheckpointResumesTheJob: rank 0 writes a checkpoint after 10 steps;
// a new 4-process job, in which only rank 0 reads the parameters, resumes
// from it and ends where the uninterrupted 20-step job ends.
func TestCheckpointResumesTheJob(t *testing.T) {
	ckpt := t.TempDir()
	env := []string{envCkpt + "=" + ckpt, envMoment + "=0.9"}
	fullDir, r := runLeNet(t, "full", envMoment+"=0.9")
	r.Check(t, 4, "TestLeNetWorker")
	_, r = runLeNet(t, "first-half", env...)
	r.Check(t, 4, "TestLeNetWorker")
	for _, f := range []string{"params.safetensors", "trainer.states"} {
		if _, err := os.Stat(ckpt + "/" + f); err != nil {
			t.Fatalf("rank 0 wrote no %s: %v", f, err)
		}
	}
	resumed, r := runLeNet(t, "second-half", env...)
	r.Check(t, 4, "TestLeNetWorker")
	want := loadParams(t, rankFile(fullDir, 0))
	for rank := range 4 {
		d := compare(t, fmt.Sprintf("rank %d resumed vs uninterrupted", rank), want, loadParams(t, rankFile(resumed, rank)), 1e-6)
		if rank == 0 {
			t.Logf("resumed job vs uninterrupted: largest relative difference %.3g", d)
		}
	}
}

// TestDeferredInitWithDifferentSeedsFails: when the workers' parameters
// are created at the first forward pass with different seeds, the first
// step's gradients were computed before the broadcast; every worker's
// Step says so (instead of silently training from mixed weights).
func TestDeferredInitWithDifferentSeedsFails(t *testing.T) {
	_, r := runLeNet(t, "deferred")
	r.Check(t, 4, "TestLeNetWorker")
	if n := strings.Count(r.Output, "expected error"); n != 4 {
		t.Errorf("%d of 4 ranks got the error", n)
	}
}

// TestDeadWorkerEndsTheJob: a rank that exits mid-run ends the whole job
// with an error, within a bounded time.
func TestDeadWorkerEndsTheJob(t *testing.T) {
	_, r := runLeNet(t, "die")
	if r.Err == nil {
		t.Fatal("the job succeeded although rank 2 died")
	}
	if !strings.Contains(r.Output, "rank 2 exits on purpose") {
		t.Fatal("rank 2 did not reach its exit")
	}
	if n := r.Passed("TestLeNetWorker"); n != 0 {
		t.Errorf("%d ranks passed", n)
	}
	if r.Elapsed > 60*time.Second {
		t.Errorf("the job took %v to end", r.Elapsed)
	}
	t.Logf("job ended after %v: %v", r.Elapsed.Round(time.Millisecond), r.Err)
}

// TestStalledWorkerTimesOut: a rank that stops taking part (alive, but
// not calling the collectives) makes the others fail with a clear error
// after the collective deadline.
func TestStalledWorkerTimesOut(t *testing.T) {
	_, r := runLeNet(t, "stall", "GOLUON_MPI_TIMEOUT=3s")
	if r.Err == nil {
		t.Fatal("the job succeeded although rank 2 stalled")
	}
	if n := strings.Count(r.Output, "did not complete within 3s"); n < 1 {
		t.Error("no rank reported the timeout")
	}
	if !strings.Contains(r.Output, "kvstore dist_sync (rank") {
		t.Error("the error does not name the kvstore and rank")
	}
	if r.Elapsed > 40*time.Second {
		t.Errorf("the job took %v to end", r.Elapsed)
	}
	t.Logf("job ended after %v", r.Elapsed.Round(time.Millisecond))
}

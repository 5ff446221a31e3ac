package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon/data/vision"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// runOut runs the program with args and returns what it printed.
func runOut(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(args, &out)
	return out.String(), err
}

// summaryOf parses the last output line, which must be the JSON summary
// with every field the tutorials promise.
func summaryOf(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var s map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("last line is not JSON (%v):\n%s", err, out)
	}
	for _, k := range []string{"epochs", "contexts", "train_acc", "val_acc", "samples_per_sec", "seconds"} {
		if _, ok := s[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, lines[len(lines)-1])
		}
	}
	return s
}

// TestSmoke trains one epoch of one step (32 samples on each of two CPU
// contexts) on generated CIFAR-10 files, then resumes for a second epoch
// from the checkpoint.
func TestSmoke(t *testing.T) {
	t.Setenv(vision.EnvData, t.TempDir()) // never pick up a real cache
	root, err := common.WriteFakeCIFAR10(t.TempDir(), 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(t.TempDir(), "out")
	args := []string{"-data", root, "-out", outDir, "-contexts", "cpu:0,cpu:1", "-limit", "64", "-epochs", "1", "-workers", "2"}

	out, err := runOut(t, args...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, want := range []string{"x_train shape: (64, 32, 32, 3)", "Total params: 1,250,858", "Using real-time data augmentation.",
		"Estimated time:", "Epoch 1/1 - ", "val_accuracy: ", "Test accuracy: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s := summaryOf(t, out)
	if s["epochs"] != 1.0 || len(s["contexts"].([]any)) != 2 || !(s["samples_per_sec"].(float64) > 0) {
		t.Errorf("summary %v", s)
	}
	for _, k := range []string{"train_acc", "val_acc"} {
		if v := s[k].(float64); v < 0 || v > 1 || math.IsNaN(v) {
			t.Errorf("%s = %v", k, v)
		}
	}
	for _, f := range []string{paramsFile, metricsFile, filepath.Join(ckptDir, "checkpoint.json")} {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Errorf("output file: %v", err)
		}
	}

	// A second fresh run would overwrite the checkpoint: refused.
	if _, err := runOut(t, args...); err == nil || !strings.Contains(err.Error(), "-resume") {
		t.Errorf("fresh run over a checkpoint: %v", err)
	}

	// -resume continues with epoch 2 and appends to the metrics log.
	args[len(args)-3] = "2" // -epochs 2
	out, err = runOut(t, append(args, "-resume")...)
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Resuming from the checkpoint of epoch 1.") || strings.Contains(out, "Epoch 1/2 - ") {
		t.Errorf("resume did not start at epoch 2:\n%s", out)
	}
	if s := summaryOf(t, out); s["epochs"] != 2.0 {
		t.Errorf("resumed summary %v", s)
	}
	b, err := os.ReadFile(filepath.Join(outDir, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("metrics log has %d lines, want 2:\n%s", n, b)
	}
}

// TestMissingData: without CIFAR-10 the program says where to get it.
func TestMissingData(t *testing.T) {
	t.Setenv(vision.EnvData, t.TempDir())
	_, err := runOut(t, "-data", t.TempDir(), "-out", t.TempDir(), "-epochs", "1")
	if err == nil {
		t.Fatal("ran without data")
	}
	for _, want := range []string{"cifar-10-binary.tar.gz", "-data", "-download", "searched"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-epochs", "0"}, {"-batch-size", "-1"}, {"stray"}, {"-decay", "-1"}, {"-contexts", "tpu:0"}} {
		_, err := runOut(t, append(args, "-data", t.TempDir(), "-out", t.TempDir())...)
		if err == nil || strings.Contains(err.Error(), "CIFAR-10") {
			t.Errorf("%q: %v, want a flag error before looking for data", args, err)
		}
	}
}

// TestOptimizerIsKeras checks Keras' RMSprop(lr=1e-4, decay=1e-6)
// learning rate: lr/(1 + decay·iterations), iterations 0 at the first update.
func TestOptimizerIsKeras(t *testing.T) {
	opt, err := newOptimizer(1e-4, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if !opt.KerasEpsilon || opt.Epsilon != 1e-7 || opt.Gamma1 != 0.9 {
		t.Errorf("rmsprop %+v, want Keras' epsilon 1e-7 after the square root and rho 0.9", opt)
	}
	for _, c := range []struct {
		step int
		want float64
	}{{1, 1e-4}, {2, 1e-4 / (1 + 1e-6)}, {781*200 + 1, 1e-4 / (1 + 1e-6*781*200)}} {
		if got := opt.Hyperparams().LearningRate(c.step); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("lr at update %d = %g, want %g", c.step, got, c.want)
		}
	}
}

// TestSmokeAMP: -amp fp16 trains through the estimator, which scales the
// loss with the Trainer's loss scaler.
func TestSmokeAMP(t *testing.T) {
	t.Setenv(vision.EnvData, t.TempDir())
	root, err := common.WriteFakeCIFAR10(t.TempDir(), 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runOut(t, "-data", root, "-out", t.TempDir(), "-contexts", "cpu:0,cpu:1", "-limit", "64", "-epochs", "1", "-amp", "fp16")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	s := summaryOf(t, out)
	if v, _ := s["train_loss"].(float64); s["extra"].(map[string]any)["amp"] != "fp16" || !(v > 0 && v < 20) {
		t.Errorf("summary %v", s)
	}
}

// TestSmokeHybridize: -hybridize trains the CNN (dropout and augmentation
// included) on two contexts to the summary of the eager run, to the last
// bit: the replays draw the eager masks.
func TestSmokeHybridize(t *testing.T) {
	t.Setenv(vision.EnvData, t.TempDir())
	root, err := common.WriteFakeCIFAR10(t.TempDir(), 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(extra ...string) map[string]any {
		args := append([]string{"-data", root, "-out", filepath.Join(t.TempDir(), "out"), "-contexts", "cpu:0,cpu:1", "-limit", "64", "-epochs", "1", "-workers", "2"}, extra...)
		out, err := runOut(t, args...)
		if err != nil {
			t.Fatalf("run %v: %v\n%s", extra, err, out)
		}
		return summaryOf(t, out)
	}
	eager, hybrid := summary(), summary("-hybridize")
	for _, k := range []string{"train_loss", "train_acc", "val_loss", "val_acc"} {
		if eager[k] == nil || eager[k] != hybrid[k] {
			t.Errorf("%s: eager %v, hybridized %v", k, eager[k], hybrid[k])
		}
	}
}

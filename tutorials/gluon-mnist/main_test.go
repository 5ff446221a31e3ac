package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/tutorials/internal/common"
)

// TestRunSmoke trains for one epoch on a small generated MNIST-format data
// set on two CPU contexts and checks the summary line, the epoch line and
// the files the program writes.
func TestRunSmoke(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 256, 64, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var buf bytes.Buffer
	args := []string{"-data", dataDir, "-epochs", "1", "-limit", "256", "-contexts", "cpu:0,cpu:1", "-out", out, "-batch-size", "32"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	var sum map[string]any
	if err := json.Unmarshal([]byte(last), &sum); err != nil {
		t.Fatalf("last line %q is not JSON: %v\noutput:\n%s", last, err, buf.String())
	}
	for _, k := range []string{"epochs", "contexts", "train_acc", "val_acc", "samples_per_sec", "seconds"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, last)
		}
	}
	if sum["epochs"] != 1.0 {
		t.Errorf("epochs = %v, want 1", sum["epochs"])
	}
	if c, _ := sum["contexts"].([]any); len(c) != 2 || c[0] != "cpu(0)" && c[0] != "cpu:0" {
		t.Errorf("contexts = %v, want two CPU contexts", sum["contexts"])
	}
	for _, k := range []string{"train_acc", "val_acc"} {
		if v, _ := sum[k].(float64); v < 0 || v > 1 {
			t.Errorf("%s = %v, want a fraction", k, sum[k])
		}
	}
	if v, _ := sum["samples_per_sec"].(float64); v <= 0 {
		t.Errorf("samples_per_sec = %v, want > 0", sum["samples_per_sec"])
	}
	if !strings.Contains(buf.String(), "Epoch 1/1 - ") || !strings.Contains(buf.String(), "val_acc: ") {
		t.Errorf("no Keras-like epoch line in output:\n%s", buf.String())
	}

	if fi, err := os.Stat(filepath.Join(out, "lenet.safetensors")); err != nil || fi.Size() == 0 {
		t.Errorf("parameters file: %v", err)
	}
	f, err := os.Open(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatalf("metrics log: %v", err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var r epochResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Epoch != n+1 || r.Samples != 256 {
			t.Errorf("metrics line %d %q: %+v, %v", n+1, sc.Text(), r, err)
		}
	}
	if n != 1 {
		t.Errorf("metrics log has %d lines, want 1", n)
	}
}

// TestRunRejectsBadFlags checks that bad contexts and other bad flags are
// errors, not crashes, and that nothing is trained.
func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-contexts", "tpu:0"},
		{"-contexts", "gpu:0"}, // no GPU backend without -tags cuda
		{"-contexts", ""},
		{"-epochs", "0"},
		{"-batch-size", "-1"},
		{"-no-such-flag"},
	} {
		var buf bytes.Buffer
		args = append(args, "-data", t.TempDir(), "-out", t.TempDir())
		if err := run(args, &buf); err == nil {
			t.Errorf("run(%q) succeeded, want an error; output:\n%s", args, buf.String())
		}
	}
}

// TestRunAMP: -amp fp16 and bf16 train (autocast, loss scaling on two
// contexts) to a finite loss and say so in the summary.
func TestRunAMP(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 256, 64, 1); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"fp16", "bf16"} {
		t.Run(mode, func(t *testing.T) {
			var buf bytes.Buffer
			args := []string{"-data", dataDir, "-epochs", "1", "-limit", "256", "-contexts", "cpu:0,cpu:1", "-out", t.TempDir(), "-batch-size", "32", "-amp", mode}
			if err := run(args, &buf); err != nil {
				t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			var sum struct {
				TrainLoss float64 `json:"train_loss"`
				Extra     map[string]any
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Extra["amp"] != mode || !(sum.TrainLoss > 0 && sum.TrainLoss < 10) {
				t.Errorf("summary: amp %v, train loss %v", sum.Extra["amp"], sum.TrainLoss)
			}
		})
	}
	if err := run([]string{"-amp", "fp8", "-data", dataDir, "-out", t.TempDir()}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "fp8") {
		t.Errorf("-amp fp8: %v", err)
	}
}

// TestRunHybridize: -hybridize and -compile (gluon.CompileStep) train
// LeNet on two contexts to the same loss and accuracy as the eager run, to
// the last bit (the replays run the eager kernels, dropout-free here, in
// the same order).
func TestRunHybridize(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 256, 64, 1); err != nil {
		t.Fatal(err)
	}
	summary := func(extra ...string) map[string]any {
		var buf bytes.Buffer
		args := append([]string{"-data", dataDir, "-epochs", "2", "-limit", "256", "-contexts", "cpu:0,cpu:1", "-out", t.TempDir(), "-batch-size", "32"}, extra...)
		if err := run(args, &buf); err != nil {
			t.Fatalf("run %v: %v\noutput:\n%s", extra, err, buf.String())
		}
		lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
		var sum map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
			t.Fatal(err)
		}
		return sum
	}
	eager := summary()
	for _, flag := range []string{"-hybridize", "-compile"} {
		other := summary(flag)
		for _, k := range []string{"train_loss", "train_acc", "val_loss", "val_acc"} {
			if eager[k] == nil || eager[k] != other[k] {
				t.Errorf("%s: eager %v, with %s %v", k, eager[k], flag, other[k])
			}
		}
		if ex, _ := other["extra"].(map[string]any); ex == nil || ex[flag[1:]] != true {
			t.Errorf("summary extra %v: want %s true", other["extra"], flag[1:])
		}
	}
	// With -amp the compiled step scales the loss as the loop does.
	half, compiled := summary("-amp", "fp16"), summary("-amp", "fp16", "-compile")
	for _, k := range []string{"train_loss", "train_acc", "val_loss", "val_acc"} {
		if half[k] == nil || half[k] != compiled[k] {
			t.Errorf("%s: -amp fp16 %v, with -compile %v", k, half[k], compiled[k])
		}
	}
}

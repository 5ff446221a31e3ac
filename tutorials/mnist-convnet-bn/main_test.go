package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/tensorboard"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// smokeLimit is the number of training samples of the smoke test: one
// global batch of 2×64. The network is heavy (a 256-channel 3×3
// convolution over 26×26 maps); under the race detector, whose
// instrumentation slows the CPU backend's Go loops several times,
// race_test.go lowers it to 32.
var smokeLimit = "128"

// TestSmoke trains one epoch on generated MNIST-format data with two
// contexts, checks the output and the files, and loads the saved
// parameters onto another context, where they must give the same
// predictions as the trained network.
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	dataDir, outDir := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if err := common.WriteFakeMNIST(dataDir, 128, 32, 1); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	logDir := filepath.Join(dir, "tb")
	res, err := train([]string{"-data", dataDir, "-out", outDir, "-epochs", "1", "-limit", smokeLimit,
		"-contexts", "cpu:0,cpu:1", "-workers", "0", "-logdir", logDir}, &buf)
	if err != nil {
		t.Fatalf("train: %v\noutput:\n%s", err, buf.String())
	}
	// -logdir: one event file whose records all check out, with the
	// epoch's metrics and the parameter histograms.
	files, _ := filepath.Glob(filepath.Join(logDir, "events.out.tfevents.*"))
	if len(files) != 1 {
		t.Fatalf("event files in -logdir: %v", files)
	}
	eb, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, err := tensorboard.ReadRecords(eb)
	if err != nil || len(recs) < 2 {
		t.Fatalf("event file: %d records, %v", len(recs), err)
	}
	all := bytes.Join(recs, nil)
	for _, tag := range []string{tensorboard.FileVersion, "train/loss", "val/accuracy", "perf/samples_per_sec", "params/"} {
		if !bytes.Contains(all, []byte(tag)) {
			t.Errorf("the event file has no %q", tag)
		}
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("output too short:\n%s", buf.String())
	}

	// The last line is the JSON summary with the required fields.
	var sum map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, lines[len(lines)-1])
	}
	for _, k := range []string{"epochs", "contexts", "train_acc", "val_acc", "samples_per_sec", "seconds"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q: %s", k, lines[len(lines)-1])
		}
	}
	if sum["epochs"] != 1.0 {
		t.Errorf("epochs = %v, want 1", sum["epochs"])
	}
	if got, _ := json.Marshal(sum["contexts"]); string(got) != `["cpu(0)","cpu(1)"]` {
		t.Errorf("contexts = %s", got)
	}
	for _, k := range []string{"train_acc", "val_acc"} {
		if v, _ := sum[k].(float64); v < 0 || v > 1 {
			t.Errorf("%s = %v, want a fraction", k, sum[k])
		}
	}
	if v, _ := sum["samples_per_sec"].(float64); v <= 0 {
		t.Errorf("samples_per_sec = %v, want > 0", sum["samples_per_sec"])
	}

	// The epoch line carries the epoch's time; "total:" comes just before the JSON.
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Epoch 1/1 - ") && strings.Contains(l, "s - ") }) {
		t.Errorf("no timed epoch line in:\n%s", buf.String())
	}
	if !strings.HasPrefix(lines[len(lines)-2], "total: ") {
		t.Errorf("line before the summary = %q, want the total duration", lines[len(lines)-2])
	}

	// Files in -out: the parameters and a one-line metrics log.
	params := filepath.Join(outDir, paramsFile)
	if res.Params != params || sum["params"] != params {
		t.Errorf("params path %q (summary %v), want %q", res.Params, sum["params"], params)
	}
	if st, err := os.Stat(params); err != nil || st.Size() == 0 {
		t.Errorf("parameters file: %v", err)
	}
	if n := countJSONLines(t, filepath.Join(outDir, "metrics.jsonl")); n != 1 {
		t.Errorf("metrics log has %d lines, want 1", n)
	}

	checkLoadElsewhere(t, res)
	checkResume(t, dataDir, outDir)
}

// checkResume continues the one-epoch run of TestSmoke from its checkpoint
// for a second epoch: only epoch 2 runs, the metrics log keeps both, and a
// further -resume with nothing left to train is an error.
func checkResume(t *testing.T, dataDir, outDir string) {
	t.Helper()
	args := []string{"-data", dataDir, "-out", outDir, "-epochs", "2", "-limit", smokeLimit,
		"-contexts", "cpu:0,cpu:1", "-workers", "0", "-resume"}
	var buf bytes.Buffer
	if _, err := train(args, &buf); err != nil {
		t.Fatalf("resume: %v\noutput:\n%s", err, buf.String())
	}
	out := buf.String()
	if strings.Contains(out, "Epoch 1/2 - ") || !strings.Contains(out, "Epoch 2/2 - ") {
		t.Errorf("resumed run should train epoch 2 only:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var sum struct {
		Epochs int `json:"epochs"`
		Extra  struct {
			ResumedFrom  int       `json:"resumed_from"`
			EpochSeconds []float64 `json:"epoch_seconds"`
		} `json:"extra"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not JSON: %v", err)
	}
	if sum.Epochs != 2 || sum.Extra.ResumedFrom != 1 || len(sum.Extra.EpochSeconds) != 1 {
		t.Errorf("resumed summary: epochs %d, resumed_from %d, %d epoch times; want 2, 1, 1",
			sum.Epochs, sum.Extra.ResumedFrom, len(sum.Extra.EpochSeconds))
	}
	if n := countJSONLines(t, filepath.Join(outDir, "metrics.jsonl")); n != 2 {
		t.Errorf("metrics log has %d lines after the resume, want 2", n)
	}
	buf.Reset()
	if _, err := train(args, &buf); err == nil || !strings.Contains(err.Error(), "nothing to train") {
		t.Errorf("resume of a finished run: err = %v, want nothing to train", err)
	}
	// Another data limit would make the resumed run another experiment.
	other := slices.Clone(args)
	other[slices.Index(other, "-limit")+1] = "64"
	other[slices.Index(other, "-epochs")+1] = "3"
	buf.Reset()
	if _, err := train(other, &buf); err == nil || !strings.Contains(err.Error(), "limit was "+smokeLimit+", now 64") {
		t.Errorf("resume with another -limit: err = %v, want the settings named", err)
	}
}

// checkLoadElsewhere loads the saved parameters into a fresh network on
// cpu(3), a context the training never used, and compares its predictions
// with the trained network's on cpu(0), whose replica the file holds
// (batch-norm statistics are per context).
func checkLoadElsewhere(t *testing.T, res *outcome) {
	t.Helper()
	fresh := newNet(false)
	if err := gluon.LoadParameters(fresh, res.Params, ctx.CPU(3)); err != nil {
		t.Fatalf("LoadParameters onto cpu(3): %v", err)
	}
	for _, p := range gluon.CollectParams(fresh).List() {
		if got := p.Contexts(); len(got) != 1 || got[0] != ctx.CPU(3) {
			t.Fatalf("%s loaded onto %v, want [cpu(3)]", p.Name(), got)
		}
	}
	s := nd.NewScope()
	defer s.Close()
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, 4, 1, 28, 28)
	var want, got []float32
	autograd.PredictMode(func() {
		want = res.Net.Forward(x).Float32s()
		got = fresh.Forward(x.CopyTo(ctx.CPU(3))).Float32s()
	})
	if len(got) != 4*10 || len(want) != len(got) {
		t.Fatalf("outputs of %d and %d values, want 40", len(want), len(got))
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("output %d: loaded on cpu(3) %g, trained on cpu(0) %g", i, got[i], want[i])
		}
	}
}

// countJSONLines returns the number of lines of a JSON-lines file,
// failing on a line that is not a JSON object.
func countJSONLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s line %d: %v", path, n+1, err)
		}
		n++
	}
	return n
}

// TestLoadMNIST reads generated files as the original MNIST (same names and
// format) with -limit, without training.
func TestLoadMNIST(t *testing.T) {
	dir := t.TempDir()
	if err := common.WriteFakeMNIST(dir, 20, 10, 2); err != nil {
		t.Fatal(err)
	}
	f := &common.Flags{DataDir: dir, Limit: 15}
	train, test, err := loadData(f, dsMNIST, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 15 || test.Len() != 3 {
		t.Errorf("lengths %d, %d; want 15, 3", train.Len(), test.Len())
	}
	s, err := train.Get(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Data.Shape, []int{1, 28, 28}) || s.Data.F32 == nil {
		t.Errorf("sample shape %v (float32: %v), want float32 [1 28 28]", s.Data.Shape, s.Data.F32 != nil)
	}
	if v := slices.Max(s.Data.F32); v > 1 {
		t.Errorf("pixel %g, want values scaled to [0, 1]", v)
	}
}

// TestBadArguments checks that mistakes are reported before any training.
func TestBadArguments(t *testing.T) {
	dir := t.TempDir()
	if err := common.WriteFakeMNIST(dir, 8, 4, 3); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dataset", []string{"-dataset", "cifar"}, "unknown -dataset"},
		{"epochs", []string{"-epochs", "0"}, "must be positive"},
		{"context", []string{"-contexts", "gpu:0"}, "cuda"},
		{"extra", []string{"stray"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-data", dir, "-out", t.TempDir()}, tc.args...)
			err := run(args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run %v: %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestSmokeHybridize: -hybridize trains the BatchNorm ConvNet on two
// contexts to the eager run's summary, to the last bit.
func TestSmokeHybridize(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 128, 32, 1); err != nil {
		t.Fatal(err)
	}
	summary := func(extra ...string) common.Summary {
		var buf bytes.Buffer
		args := append([]string{"-data", dataDir, "-out", t.TempDir(), "-epochs", "1", "-limit", smokeLimit,
			"-contexts", "cpu:0,cpu:1", "-workers", "0"}, extra...)
		res, err := train(args, &buf)
		if err != nil {
			t.Fatalf("train %v: %v\noutput:\n%s", extra, err, buf.String())
		}
		return res.Summary
	}
	eager, hybrid := summary(), summary("-hybridize")
	if eager.TrainLoss != hybrid.TrainLoss || eager.TrainAcc != hybrid.TrainAcc || eager.ValLoss != hybrid.ValLoss || eager.ValAcc != hybrid.ValAcc {
		t.Errorf("eager %+v\nhybridized %+v", eager, hybrid)
	}
}

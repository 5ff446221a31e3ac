package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// The smoke test's data size. The network costs about 1.4 GFLOP per
// training image, so the run is kept to 64 training images (two steps of
// 2×16) and 12 validation images per epoch; race_test.go makes it smaller
// still under the race detector.
var smokeLimit, smokeBatch = "64", "16"

// TestSmoke trains two tiny epochs on generated CIFAR-10 files over two
// CPU contexts, then resumes for a third, and checks the summary line and
// the files in the output directory.
func TestSmoke(t *testing.T) {
	root, err := common.WriteFakeCIFAR10(t.TempDir(), 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"-data", root, "-out", out, "-limit", smokeLimit, "-batch-size", smokeBatch}
	var stdout bytes.Buffer
	if err := run(append(args, "-epochs", "2"), &stdout); err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	sum := lastLine(t, stdout.String())
	for _, k := range []string{"epochs", "contexts", "train_acc", "val_acc", "samples_per_sec", "seconds"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q: %v", k, sum)
		}
	}
	if sum["program"] != program || sum["epochs"] != 2.0 || len(sum["contexts"].([]any)) != 2 {
		t.Errorf("summary %v", sum)
	}
	if sum["samples_per_sec"].(float64) <= 0 || sum["val_loss"].(float64) <= 0 {
		t.Errorf("summary %v: want a positive rate and validation loss", sum)
	}
	if n := strings.Count(stdout.String(), "Epoch 2/2 - "); n != 1 {
		t.Errorf("want one Keras-like line for epoch 2, got %d:\n%s", n, stdout.String())
	}
	if hist := checkOutputs(t, out); len(hist) != 2 || math.Abs(hist[1].LR-5e-3/2) > 1e-12 {
		t.Errorf("history %+v: want 2 epochs, the second at lr 2.5e-3", hist)
	}

	// Resume for a third epoch: only epoch 3 runs, the history keeps all three.
	stdout.Reset()
	if err := run(append(args, "-epochs", "3", "-resume"), &stdout); err != nil {
		t.Fatalf("resume: %v\n%s", err, stdout.String())
	}
	sum = lastLine(t, stdout.String())
	extra := sum["extra"].(map[string]any)
	if sum["epochs"] != 3.0 || extra["resumed_from"] != 2.0 || extra["epochs_this_run"] != 1.0 {
		t.Errorf("resumed summary %v", sum)
	}
	if hist := checkOutputs(t, out); len(hist) != 3 {
		t.Errorf("history after resume: %+v", hist)
	}
}

// lastLine decodes the last line of the output as the JSON summary.
func lastLine(t *testing.T, s string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line %q is not JSON: %v", lines[len(lines)-1], err)
	}
	return m
}

// checkOutputs checks the parameters, the metrics log and the plot, and
// returns the history.
func checkOutputs(t *testing.T, out string) []epochRecord {
	t.Helper()
	if _, err := os.Stat(filepath.Join(out, program+".safetensors")); err != nil {
		t.Error(err)
	}
	f, err := os.Open(filepath.Join(out, "plot.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("plot.png: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
		t.Errorf("plot.png is %v", b)
	}
	hist, err := readHistory(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range hist {
		if math.IsNaN(r.Loss) || math.IsNaN(r.Acc) || math.IsNaN(r.ValLoss) || math.IsNaN(r.ValAcc) {
			t.Errorf("epoch %d lacks a value: %+v", r.Epoch, r)
		}
	}
	return hist
}

// TestOutputShape runs the network on a batch of two CIFAR-sized images.
func TestOutputShape(t *testing.T) {
	dev := ctx.CPU(0)
	net := MiniGoogLeNet(10)
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, 32, 32)
	var y *nd.NDArray
	autograd.PredictMode(func() { y = net.Forward(x) })
	if got := y.Shape(); !slices.Equal(got, []int{2, 10}) {
		t.Fatalf("output shape %v, want [2 10]", got)
	}
	for _, v := range y.Float32s() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("output %v", y.Float32s())
		}
	}
}

// kerasParams counts the parameters of the tutorial's Keras model from its
// definition, as model.summary() reports them: a Conv2D of K filters over
// C channels with a k×k kernel has K·C·k·k weights and K biases; a
// BatchNormalization over K channels has K gammas and K betas (trainable)
// and a moving mean and variance of K each (non-trainable); the final
// Dense has 336·10 weights and 10 biases.
func kerasParams() (trainable, nonTrainable int) {
	ch := 3
	convModule := func(k, kernel int) {
		trainable += k*ch*kernel*kernel + k + 2*k
		nonTrainable += 2 * k
	}
	inception := func(k1, k3 int) { convModule(k1, 1); convModule(k3, 3); ch = k1 + k3 }
	downsample := func(k int) { convModule(k, 3); ch += k }
	convModule(96, 3)
	ch = 96
	inception(32, 32)
	inception(32, 48)
	downsample(80)
	inception(112, 48)
	inception(96, 64)
	inception(80, 80)
	inception(48, 96)
	downsample(96)
	inception(176, 160)
	inception(176, 160)
	trainable += ch*10 + 10
	return trainable, nonTrainable
}

// TestParamCount compares the network's parameters with the Keras model's.
func TestParamCount(t *testing.T) {
	wantT, wantN := kerasParams()
	// The figures the README quotes: 1,656,250 in all.
	if wantT != 1652826 || wantN != 3424 {
		t.Errorf("Keras model: %d trainable, %d non-trainable; the README says 1,652,826 and 3,424", wantT, wantN)
	}
	gotT, gotN := paramCount(gluon.CollectParams(MiniGoogLeNet(10)))
	if gotT != wantT || gotN != wantN {
		t.Errorf("MiniGoogLeNet has %d trainable and %d non-trainable parameters, the Keras model %d and %d", gotT, gotN, wantT, wantN)
	}
}

// TestPolyDecay checks the schedule against the tutorial's poly_decay at
// the 0-based epochs Keras passes.
func TestPolyDecay(t *testing.T) {
	lr := polyDecay(70, 5e-3, 1)
	for _, c := range []struct {
		epoch int
		want  float64
	}{{0, 5e-3}, {1, 5e-3 * 69 / 70}, {35, 2.5e-3}, {69, 5e-3 / 70}} {
		if got := lr(c.epoch); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("epoch %d: lr %g, want %g", c.epoch, got, c.want)
		}
	}
}

// TestReadHistoryKeepsLastLine checks that an epoch logged twice (after a
// resume) keeps its last record and that missing values are NaN.
func TestReadHistoryKeepsLastLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.jsonl")
	log := `{"epoch":1,"loss":2,"accuracy":0.1,"val_loss":2.1,"val_accuracy":0.1,"lr":0.005}
{"epoch":2,"loss":1.5,"accuracy":0.2,"val_loss":null,"lr":0.004}
{"epoch":2,"loss":1.4,"accuracy":0.3,"val_loss":1.6,"val_accuracy":0.25,"lr":0.004}
`
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	hist, err := readHistory(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[1].Loss != 1.4 || hist[1].ValAcc != 0.25 {
		t.Errorf("history %+v", hist)
	}
	if err := os.WriteFile(p, []byte(`{"epoch":1,"loss":2}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if hist, err = readHistory(p); err != nil || !math.IsNaN(hist[0].ValLoss) {
		t.Errorf("history %+v, %v: want NaN for the missing val_loss", hist, err)
	}
	if err := savePlot(hist, "t", filepath.Join(t.TempDir(), "p.png")); err != nil {
		t.Errorf("plot without validation values: %v", err)
	}
}

// TestEpochTicks checks the x-axis ticks of the plot.
func TestEpochTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []float64
	}{{0.5, 1.5, []float64{1}}, {0.5, 3.5, []float64{1, 2, 3}}, {0.5, 15.5, []float64{2, 4, 6, 8, 10, 12, 14}}, {0.5, 70.5, []float64{10, 20, 30, 40, 50, 60, 70}}} {
		var got []float64
		for _, tk := range (epochTicks{}).Ticks(c.min, c.max) {
			got = append(got, tk.Value)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ticks on [%g, %g]: %v, want %v", c.min, c.max, got, c.want)
		}
	}
}

// TestMissingDataSaysHow checks the error when CIFAR-10 is absent.
func TestMissingDataSaysHow(t *testing.T) {
	t.Setenv("GOLUON_DATA", t.TempDir())
	err := run([]string{"-data", t.TempDir(), "-out", t.TempDir()}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "cifar-10") {
		t.Fatalf("run without data: %v", err)
	}
}

// TestFashionMNIST trains one epoch on a tiny Fashion-MNIST-format set:
// the grey 28×28 images are padded to 32×32 and the network takes one
// input channel; the plot is titled after the data.
func TestFashionMNIST(t *testing.T) {
	root := t.TempDir()
	if err := common.WriteFakeMNIST(root, 64, 16, 3); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	args := []string{"-dataset", "fashion-mnist", "-data", root, "-out", t.TempDir(), "-limit", "64", "-batch-size", "16", "-epochs", "1"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	if !strings.Contains(buf.String(), "Fashion-MNIST") || !strings.Contains(buf.String(), `"epochs":1`) {
		t.Errorf("output:\n%s", buf.String())
	}
	if err := run([]string{"-dataset", "imagenet", "-out", t.TempDir()}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "imagenet") {
		t.Errorf("unknown data set: %v", err)
	}
}

// TestAMP: -amp bf16 trains MiniGoogLeNet (BatchNorm with float32
// statistics beside bfloat16 activations) to a finite loss.
func TestAMP(t *testing.T) {
	root := t.TempDir()
	if err := common.WriteFakeMNIST(root, 64, 16, 3); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	args := []string{"-dataset", "fashion-mnist", "-data", root, "-out", t.TempDir(), "-limit", "64", "-batch-size", "16", "-epochs", "1", "-amp", "bf16"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\n%s", err, buf.String())
	}
	if !strings.Contains(buf.String(), `"amp":"bf16"`) || strings.Contains(buf.String(), "NaN") {
		t.Errorf("output:\n%s", buf.String())
	}
}

// TestSmokeHybridize: -hybridize (Inception modules' concatenations,
// BatchNorm in training and predict mode) ends an epoch with the eager
// run's summary, to the last bit.
func TestSmokeHybridize(t *testing.T) {
	root, err := common.WriteFakeCIFAR10(t.TempDir(), 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(extra ...string) map[string]any {
		var stdout bytes.Buffer
		args := append([]string{"-data", root, "-out", filepath.Join(t.TempDir(), "out"), "-limit", smokeLimit, "-batch-size", smokeBatch, "-epochs", "1"}, extra...)
		if err := run(args, &stdout); err != nil {
			t.Fatalf("run %v: %v\n%s", extra, err, stdout.String())
		}
		return lastLine(t, stdout.String())
	}
	eager, hybrid := summary(), summary("-hybridize")
	for _, k := range []string{"train_loss", "train_acc", "val_loss", "val_acc"} {
		if eager[k] == nil || eager[k] != hybrid[k] {
			t.Errorf("%s: eager %v, hybridized %v", k, eager[k], hybrid[k])
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// smokeLimit is the number of generated training images of the smoke test
// (about half of them per task) and smokeWidth the ResNet-18's width;
// race_test.go makes both smaller under the race detector.
var smokeLimit, smokeWidth = "160", "8"

// smokeRun runs the whole tutorial on generated Fashion-MNIST-format data
// with a narrow ResNet-18 on two CPU contexts (1 pretraining and 2
// fine-tuning epochs) and the extra flags, and returns its outcome, its
// output directory and what it printed.
func smokeRun(t *testing.T, extra ...string) (*outcome, string, string) {
	t.Helper()
	dir := t.TempDir()
	dataDir, outDir := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if err := common.WriteFakeMNIST(dataDir, 256, 100, 1); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	args := append([]string{"-data", dataDir, "-out", outDir, "-limit", smokeLimit, "-width", smokeWidth,
		"-pretrain-epochs", "1", "-epochs", "2", "-batch-size", "16", "-contexts", "cpu:0,cpu:1",
		"-workers", "0"}, extra...)
	res, err := train(args, &buf)
	if err != nil {
		t.Fatalf("train: %v\noutput:\n%s", err, buf.String())
	}
	return res, outDir, buf.String()
}

// TestSmoke runs the whole tutorial on generated Fashion-MNIST-format data
// with a narrow ResNet-18 on two CPU contexts, -finetune-all included, and
// checks what the tutorial claims: the reloaded network scores exactly
// the pretrained one's accuracy, fine-tuning the head changes the head and
// nothing else (BatchNorm's running statistics included), the plot is a
// PNG, the metrics log has every epoch of every phase and the summary
// line parses.
func TestSmoke(t *testing.T) {
	res, outDir, output := smokeRun(t, "-finetune-all")

	// The reload: the same accuracy, and one that means something.
	if res.ReloadedAcc != res.PretrainAcc {
		t.Errorf("reloaded accuracy %v, pretrained %v: want them equal", res.ReloadedAcc, res.PretrainAcc)
	}
	if math.Abs(res.ONNXAcc-res.PretrainAcc) > 0.002 {
		t.Errorf("accuracy from pretrained.onnx %v, pretrained %v", res.ONNXAcc, res.PretrainAcc)
	}
	if res.PretrainAcc <= 0 || res.PretrainAcc > 1 {
		t.Errorf("pretrained accuracy %v", res.PretrainAcc)
	}
	// Stronger: on every context the network loaded from the file gives
	// the pretrained network's outputs bit for bit (which needs the
	// per-context BatchNorm statistics averaged before saving).
	width, _ := strconv.Atoi(smokeWidth)
	reloaded := vision.ResNet18(vision.Options{Classes: nClasses, Width: width})
	if err := vision.LoadStateDict(gluon.CollectParams(reloaded), filepath.Join(outDir, pretrainedFile), res.Devs); err != nil {
		t.Fatal(err)
	}
	in := make([]float32, 4*3*32*32)
	for i := range in {
		in[i] = float32(math.Sin(float64(i)))
	}
	for _, dev := range res.Devs {
		x := nd.FromSlice(dev, in, 4, 3, 32, 32)
		var want, got []float32
		autograd.PredictMode(func() {
			want = res.Pretrained.Forward(x).Float32s()
			got = reloaded.Forward(x).Float32s()
		})
		if !slices.Equal(got, want) {
			t.Errorf("on %v the reloaded network gives %v, the pretrained one %v", dev, got[:5], want[:5])
		}
	}

	// Fine-tuning the head left every other tensor of the file as it was
	// saved after pretraining, and changed the head.
	pre, err := safetensors.ReadFile(filepath.Join(outDir, pretrainedFile))
	if err != nil {
		t.Fatal(err)
	}
	ft, err := safetensors.ReadFile(filepath.Join(outDir, finetunedFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pre.Names(), ft.Names()) {
		t.Fatalf("the files hold different tensors:\n%v\n%v", pre.Names(), ft.Names())
	}
	frozen, stats := 0, 0
	for _, name := range pre.Names() {
		a, b := pre.Tensors[name], ft.Tensors[name]
		same := bytes.Equal(a.Data, b.Data) && slices.Equal(a.Shape, b.Shape)
		switch head := strings.HasPrefix(name, "fc."); {
		case head && same:
			t.Errorf("head tensor %s did not change in fine-tuning", name)
		case !head && !same:
			t.Errorf("frozen tensor %s changed in fine-tuning", name)
		case !head:
			frozen++
			if strings.HasSuffix(name, ".running_mean") || strings.HasSuffix(name, ".running_var") {
				stats++
			}
		}
	}
	if frozen < 100 || stats != 40 {
		t.Errorf("compared %d frozen tensors, %d of them running statistics; want over 100 and 40", frozen, stats)
	}
	// The same in memory: the fine-tuned network's frozen parameters are
	// the pretrained network's, the head is another.
	dev := res.Devs[0]
	if !slices.Equal(res.Pretrained.Conv1.Weight.Data(dev).Float32s(), res.Finetuned.Conv1.Weight.Data(dev).Float32s()) {
		t.Error("conv1.weight differs between the pretrained and the fine-tuned network")
	}
	if res.Finetuned.FC == res.Pretrained.FC {
		t.Error("the fine-tuned network kept the pretrained head")
	}

	// The summary line.
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	var sum struct {
		common.Summary
		Extra map[string]any `json:"extra"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not JSON: %v\n%s", err, lines[len(lines)-1])
	}
	if sum.Program != program || sum.Epochs != 2 || len(sum.Contexts) != 2 || sum.SamplesPerSec <= 0 {
		t.Errorf("summary %+v", sum.Summary)
	}
	for _, k := range []string{"pretrain_acc", "reloaded_acc", "finetune_acc", "scratch_acc", "finetune_all_acc"} {
		v, ok := sum.Extra[k].(float64)
		if !ok || v < 0 || v > 1 {
			t.Errorf("summary: %s = %v, want an accuracy", k, sum.Extra[k])
		}
	}
	if sum.Extra["pretrain_acc"] != sum.Extra["reloaded_acc"] {
		t.Errorf("summary: pretrain_acc %v, reloaded_acc %v", sum.Extra["pretrain_acc"], sum.Extra["reloaded_acc"])
	}
	if accs, _ := sum.Extra["scratch_val_acc"].([]any); len(accs) != 2 {
		t.Errorf("summary: scratch_val_acc %v, want 2 epochs", sum.Extra["scratch_val_acc"])
	}
	if sum.ValAcc != res.Head[len(res.Head)-1].ValAcc {
		t.Errorf("summary val_acc %v, fine-tuned head's last epoch %v", sum.ValAcc, res.Head[len(res.Head)-1].ValAcc)
	}
	for _, want := range []string{"pretrain: Epoch 1/1 - ", "finetune-head: Epoch 2/2 - ", "finetune-all: Epoch 2/2 - ", "scratch: Epoch 2/2 - ", "reloaded pretrained.safetensors: test accuracy"} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}

	// The plot is a PNG of the size savePlot draws.
	pf, err := os.Open(filepath.Join(outDir, plotFile))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	cfg, err := png.DecodeConfig(pf)
	if err != nil {
		t.Fatalf("plot: %v", err)
	}
	if cfg.Width < 500 || cfg.Height < 300 {
		t.Errorf("plot is %d×%d pixels", cfg.Width, cfg.Height)
	}

	// The metrics log: every epoch of every phase, in order.
	mf, err := os.Open(filepath.Join(outDir, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	var got []string
	for sc := bufio.NewScanner(mf); sc.Scan(); {
		var r epochResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Samples == 0 || math.IsNaN(r.ValAcc) {
			t.Errorf("metrics line %q: %+v, %v", sc.Text(), r, err)
		}
		got = append(got, r.Phase+" "+string(rune('0'+r.Epoch)))
	}
	want := []string{"pretrain 1", "finetune-head 1", "finetune-head 2", "finetune-all 1", "finetune-all 2", "scratch 1", "scratch 2"}
	if !slices.Equal(got, want) {
		t.Errorf("metrics log has %v, want %v", got, want)
	}
}

// TestData checks the class split and the image preparation.
func TestData(t *testing.T) {
	img := make([]uint8, 28*28)
	img[0], img[28*28-1] = 255, 51
	var ds data.SimpleDataset
	for l := range 10 {
		ds = append(ds, data.Sample{Data: data.Tensor{Shape: []int{28, 28, 1}, U8: img}, Label: float32(l)})
	}
	tgt, err := classes(ds, 5, 5)
	if err != nil {
		t.Fatal(err)
	}
	if tgt.Len() != 5 {
		t.Fatalf("classes 5-9 of 10 samples: %d samples", tgt.Len())
	}
	for i := range 5 {
		s, err := tgt.Get(i, nil)
		if err != nil || s.Label != float32(i) {
			t.Errorf("sample %d: label %v, %v; want %d", i, s.Label, err, i)
		}
	}
	s, _ := tgt.Get(0, nil)
	x, err := toRGB32()(s.Data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Shape, []int{3, 32, 32}) || len(x.F32) != 3*32*32 {
		t.Fatalf("prepared image has shape %v", x.Shape)
	}
	at := func(c, y, xx int) float64 { return float64(x.F32[c*1024+y*32+xx]) }
	for _, c := range []struct {
		y, x int
		v    float64
	}{{0, 0, 0}, {2, 2, 1}, {29, 29, 0.2}, {31, 31, 0}} {
		want := (c.v - fashionMean) / fashionStd
		for ch := range 3 {
			if got := at(ch, c.y, c.x); math.Abs(got-want) > 1e-5 {
				t.Errorf("pixel (%d, %d, %d) = %v, want %v", ch, c.y, c.x, got, want)
			}
		}
	}
}

// TestRunRejectsBadFlags checks that bad flags are errors, not crashes.
func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-contexts", "tpu:0"},
		{"-contexts", ""},
		{"-epochs", "0"},
		{"-pretrain-epochs", "0"},
		{"-width", "0"},
		{"-batch-size", "-1"},
		{"-kvstore", "dist_sync"},
		{"-no-such-flag"},
		{"extra-argument"},
	} {
		var buf bytes.Buffer
		args = append(args, "-data", t.TempDir(), "-out", t.TempDir())
		if err := run(args, &buf); err == nil {
			t.Errorf("run(%q) succeeded, want an error; output:\n%s", args, buf.String())
		}
	}
	// An unfreezing that would never happen is refused before any work.
	for _, args := range [][]string{{"-unfreeze-after", "3", "-epochs", "3"}, {"-unfreeze-after", "-1"}} {
		args = append(args, "-data", t.TempDir(), "-out", t.TempDir())
		if err := run(args, io.Discard); err == nil || !strings.Contains(err.Error(), "-unfreeze-after") {
			t.Errorf("run(%q): %v, want an error about -unfreeze-after", args, err)
		}
	}
}

// TestUnfreezeAfter: with -unfreeze-after 1 the head trains alone for
// the first epoch, then the same Trainer trains the whole network: the
// backbone moves away from the pretrained weights, and the fine-tuning
// phase still reports every epoch.
func TestUnfreezeAfter(t *testing.T) {
	res, _, output := smokeRun(t, "-finetune-all=false", "-unfreeze-after", "1")
	if !strings.Contains(output, "backbone unfrozen after epoch 1") {
		t.Errorf("output does not say the backbone was unfrozen:\n%s", output)
	}
	if len(res.Head) != 2 {
		t.Errorf("%d fine-tuning epochs reported, want 2", len(res.Head))
	}
	for _, dev := range res.Devs {
		if slices.Equal(res.Pretrained.Conv1.Weight.Data(dev).Float32s(), res.Finetuned.Conv1.Weight.Data(dev).Float32s()) {
			t.Errorf("on %v conv1.weight did not move once unfrozen", dev)
		}
	}
	if a, b := res.Finetuned.Conv1.Weight.Data(res.Devs[0]).Float32s(), res.Finetuned.Conv1.Weight.Data(res.Devs[1]).Float32s(); !slices.Equal(a, b) {
		t.Error("conv1.weight's replicas differ")
	}
}

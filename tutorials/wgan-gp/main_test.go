package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/tutorials/internal/common"
)

// TestRunSmoke trains for two epochs on a small generated
// Fashion-MNIST-format data set over two CPU contexts: every figure is
// finite, the critic tells real from generated images (a positive
// Wasserstein estimate), and the summary line, the generator's
// parameters, the plot and the sample grid are there.
func TestRunSmoke(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 128, 32, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var buf bytes.Buffer
	args := []string{"-data", dataDir, "-epochs", "2", "-limit", "128", "-contexts", "cpu:0,cpu:1", "-out", out,
		"-batch-size", "16", "-latent", "8", "-critic-steps", "2"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	var sum struct {
		Program  string   `json:"program"`
		Contexts []string `json:"contexts"`
		Extra    struct {
			Wasserstein float64 `json:"wasserstein"`
			Penalty     float64 `json:"penalty"`
			GenLoss     float64 `json:"generator_loss"`
		} `json:"extra"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not the summary: %v\n%s", err, buf.String())
	}
	e := sum.Extra
	if sum.Program != "wgan-gp" || len(sum.Contexts) != 2 || math.IsNaN(e.Penalty+e.GenLoss) || math.IsInf(e.Penalty+e.GenLoss, 0) || !(e.Penalty >= 0) {
		t.Errorf("summary %+v", sum)
	}
	if !(e.Wasserstein > 0) {
		t.Errorf("the critic's Wasserstein estimate is %v: it does not tell real images from generated ones\n%s", e.Wasserstein, buf.String())
	}
	for _, name := range []string{"generator.safetensors", "loss.png"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	file, err := os.Open(filepath.Join(out, "samples.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	img, err := png.Decode(file)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 8*29+1 || b.Dy() != 8*29+1 {
		t.Errorf("samples.png is %dx%d", b.Dx(), b.Dy())
	}
}

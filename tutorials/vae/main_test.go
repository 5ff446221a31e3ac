package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/tutorials/internal/common"
)

// TestRunSmoke trains for three epochs on a small generated
// Fashion-MNIST-format data set over two CPU contexts: the loss falls,
// the summary line, the parameters, the plot and the image grids are
// there.
func TestRunSmoke(t *testing.T) {
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if err := common.WriteFakeMNIST(dataDir, 256, 64, 1); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var buf bytes.Buffer
	args := []string{"-data", dataDir, "-epochs", "3", "-limit", "256", "-contexts", "cpu:0,cpu:1", "-out", out,
		"-batch-size", "32", "-hidden", "64", "-latent", "4"}
	if err := run(args, &buf); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, buf.String())
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	var sum struct {
		Program   string   `json:"program"`
		Contexts  []string `json:"contexts"`
		TrainLoss float64  `json:"train_loss"`
		ValLoss   float64  `json:"val_loss"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("last line is not the summary: %v\n%s", err, buf.String())
	}
	if sum.Program != "vae" || len(sum.Contexts) != 2 || !(sum.TrainLoss > 0) || !(sum.ValLoss > 0) {
		t.Errorf("summary %+v", sum)
	}
	var first, last float64
	for _, l := range lines {
		var e, n int
		var tr, te float64
		if c, _ := fmtSscanf(l, &e, &n, &tr, &te); c == 4 {
			if e == 1 {
				first = tr
			}
			last = tr
		}
	}
	if !(last < first) {
		t.Errorf("the training loss went from %v to %v\n%s", first, last, buf.String())
	}
	for _, name := range []string{"vae.safetensors", "loss.png"} {
		if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, size := range map[string][2]int{"samples.png": {8*29 + 1, 8*29 + 1}, "reconstructions.png": {8*29 + 1, 2*29 + 1}} {
		file, err := os.Open(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(file)
		file.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != size[0] || b.Dy() != size[1] {
			t.Errorf("%s is %dx%d, want %dx%d", name, b.Dx(), b.Dy(), size[0], size[1])
		}
	}
}

// fmtSscanf reads an epoch line's epoch, epoch count and train and test
// losses.
func fmtSscanf(line string, e, n *int, tr, te *float64) (int, error) {
	return fmt.Sscanf(line, "Epoch %d/%d - loss %g - test loss %g", e, n, tr, te)
}

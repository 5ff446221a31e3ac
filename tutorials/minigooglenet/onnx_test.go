package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/nd"
)

// TestExportONNX: MiniGoogLeNet (Inception modules: Concurrent branches,
// BatchNorm, pooling) exports to ONNX, and the file, loaded back, predicts
// what the network predicts (1e-5 relative).
func TestExportONNX(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(3)
	net := MiniGoogLeNet(10)
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	autograd.Record(func() { net.Forward(nd.RandomNormal(dev, nd.Float32, 0.3, 1, 2, 3, 32, 32)) }) // running statistics move
	dir := os.Getenv("GOLUON_ONNX_EXPORT_DIR")                                                      // make onnx-check keeps the file for onnx.checker
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, "minigooglenet.onnx")
	if err := onnx.Save(path, net, []int{1, 3, 32, 32}, onnx.ExportOpts{}); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, 32, 32)
	var want, got []float32
	autograd.PredictMode(func() {
		want = net.Forward(x).Float32s()
		got = m.Forward(x).Float32s()
	})
	var num, den float64
	for i := range want {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if rel := math.Sqrt(num / den); rel > 1e-5 || len(got) != len(want) {
		t.Errorf("%d outputs (want %d), relative L2 difference %.3g", len(got), len(want), rel)
	}
}

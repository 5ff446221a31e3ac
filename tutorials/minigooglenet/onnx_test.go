package main

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/onnxtest"
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
	onnxtest.RoundTrip(t, "minigooglenet", net, []int{1, 3, 32, 32}, onnx.ExportOpts{}, nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, 32, 32))
}

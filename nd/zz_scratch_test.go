package nd_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestZZIndexDTypeLeak(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1.0001, 2.0001, 3.0001, 4.0001}, 2, 2)
	idx16 := nd.FromSlice(dev, []float32{1, 0}, 2).AsType(nd.Float16)
	idxI := nd.FromSlice(dev, []int64{1, 0}, 2)
	p := nd.Pick(x, idx16, 1)
	t.Logf("Pick(F32 x, F16 idx) -> %v %v ; with Int64 idx -> %v %v", p.DType(), p.Float32s(), nd.Pick(x, idxI, 1).DType(), nd.Pick(x, idxI, 1).Float32s())
	tk := nd.Take(x, idx16, 0)
	t.Logf("Take(F32 x, F16 idx) -> %v", tk.DType())
	sce := nd.SoftmaxCrossEntropy(x, idx16, 1)
	t.Logf("SoftmaxCrossEntropy(F32 x, F16 labels) -> %v", sce.DType())
	if p.DType() != nd.Float32 || tk.DType() != nd.Float32 || sce.DType() != nd.Float32 {
		t.Errorf("float32 data gathered with float16 indices comes back rounded to float16")
	}
}

func TestZZMixedNoAutocast(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float32{1.0001, 2}, 1, 2).AsType(nd.Float16)
	w := nd.FromSlice(dev, []float32{1.0001, 2.0001}, 1, 2)
	err := nd.Catch(func() { nd.Add(x, w) })
	var fc *nd.NDArray
	err2 := nd.Catch(func() { fc = nd.FullyConnected(x, w, nil) })
	t.Logf("Add(F16,F32) err=%v ; FullyConnected(F16,F32) err=%v dtype=%v", err, err2, fc.DType())
}

func TestZZAutocastInferenceMemory(t *testing.T) {
	dev := ctx.CPU(5)
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 256)
	w := nd.RandomNormal(dev, nd.Float32, 0, 1, 256, 256)
	run := func() {
		y := nd.FullyConnected(x, w, nil)
		y.Release()
	}
	run()
	base := nd.MemoryStats(dev).InUse
	for range 10 {
		run()
	}
	plain := nd.MemoryStats(dev).InUse - base
	off := nd.Autocast
	_ = off
	nd.Autocast(nd.Float16, func() {
		run()
		b2 := nd.MemoryStats(dev).InUse
		for range 10 {
			run()
		}
		t.Logf("in use growth over 10 released FC calls: float32 %d B, autocast %d B", plain, nd.MemoryStats(dev).InUse-b2)
	})
	_ = autograd.Record
}

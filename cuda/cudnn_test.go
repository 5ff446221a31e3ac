//go:build cuda && !cudaemu

package cuda

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// TestCudnnConvAgainstCPU runs convolutions through cuDNN (the odd shapes
// of the im2col test and the tutorials' layers) forward and backward,
// compares them with the CPU and checks that every pass of every case did
// go through cuDNN rather than falling back to im2col.
func TestCudnnConvAgainstCPU(t *testing.T) {
	needGPUs(t, 1)
	lib, version, err := CudnnPath()
	if err != nil {
		t.Skip(err)
	}
	t.Logf("cuDNN %d from %s", version, lib)
	cases := []convCase{{[]int{4, 16, 9, 9}, []int{24, 16, 3, 3}, nd.ConvOpts{Stride: [2]int{2, 2}}}}
	for _, n := range []int{8, 32, 128} { // the tutorials' layers at several batch sizes
		cases = append(cases,
			convCase{[]int{n, 1, 28, 28}, []int{6, 1, 5, 5}, nd.ConvOpts{}},
			convCase{[]int{n, 6, 12, 12}, []int{16, 6, 3, 3}, nd.ConvOpts{}},
			convCase{[]int{n, 3, 32, 32}, []int{32, 3, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}},
			convCase{[]int{n, 32, 32, 32}, []int{32, 32, 3, 3}, nd.ConvOpts{}},
			convCase{[]int{n, 64, 15, 15}, []int{64, 64, 3, 3}, nd.ConvOpts{Pad: [2]int{1, 1}}})
	}
	cases = append(cases, convCases...)
	d := Default().started(ctx.GPU(0))
	d.dnn.mu.Lock()
	clear(d.dnn.plans)
	d.dnn.mu.Unlock()
	compareConvWithCPU(t, "cudnn/", cases, 1e-4)
	d.dnn.mu.Lock()
	defer d.dnn.mu.Unlock()
	if len(d.dnn.plans) < len(cases) {
		t.Errorf("%d cuDNN plans for %d convolutions", len(d.dnn.plans), len(cases))
	}
	for p, pl := range d.dnn.plans {
		if pl.err != nil {
			t.Errorf("%+v: %v", p, pl.err)
			continue
		}
		for pass, a := range pl.algo {
			// Dilated convolutions may have no algorithm that is not a
			// Winograd one; they fall back to im2col (tested above).
			if a < 0 && p.DilateH == 1 && p.DilateW == 1 {
				t.Errorf("%+v: no cuDNN algorithm for pass %d (fell back to im2col)", p, pass)
			}
		}
		t.Logf("N%d C%d %dx%d -> K%d %dx%d k%dx%d g%d %v: algorithms fwd %d bwd-data %d bwd-filter %d, workspace %v bytes, ms %v (fastest %v)",
			p.N, p.InC, p.InH, p.InW, p.OutC, p.OutH, p.OutW, p.KH, p.KW, p.Groups, p.DType, pl.algo[0], pl.algo[1], pl.algo[2], pl.ws, pl.ms, pl.best)
	}
}

// TestLeNetGradsAgainstCPU computes LeNet's gradients for one batch of 32 on
// cpu(0) and on gpu(0), with convolutions through cuDNN and through
// im2col, and compares every parameter's gradient (relative L2 error).
func TestLeNetGradsAgainstCPU(t *testing.T) {
	needGPUs(t, 1)
	defer func() { dnnOff = false }()
	for _, off := range []bool{false, true} {
		dnnOff = off
		nd.Seed(3)
		net := modelzoo.LeNet()
		params := gluon.CollectParams(net)
		devs := []ctx.Context{ctx.CPU(0), ctx.GPU(0)}
		if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, 32, 1, 28, 28)
		labels := make([]float32, 32)
		for i := range labels {
			labels[i] = float32(i % 10)
		}
		y := nd.FromSlice(ctx.CPU(0), labels)
		lossFn := loss.NewSoftmaxCrossEntropy().Forward
		for _, dev := range devs {
			if err := traintest.Backward(net, lossFn, x, y, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range params.Names() {
			p := params.Get(name)
			a, b := p.Grad(ctx.CPU(0)).Float64s(), p.Grad(ctx.GPU(0)).Float64s()
			var num, den float64
			for i := range a {
				num += (a[i] - b[i]) * (a[i] - b[i])
				den += a[i] * a[i]
			}
			rel := math.Sqrt(num / max(den, 1e-30))
			if rel > 1e-5 {
				t.Errorf("im2col=%v: %s: gradient differs from the CPU's by %.3g (relative L2)", off, name, rel)
			} else {
				t.Logf("im2col=%v: %s: relative L2 difference %.3g", off, name, rel)
			}
		}
	}
}

// TestCudnnEachAlgorithm runs LeNet's and the CIFAR CNN's convolutions at
// batch 32 with every cuDNN algorithm of every pass in turn (each queued
// three times behind other work, without waiting) and logs each one's
// largest difference from the CPU, scaled by the largest magnitude: a
// diagnosis of which algorithms to trust.
func TestCudnnEachAlgorithm(t *testing.T) {
	needGPUs(t, 1)
	if _, _, err := CudnnPath(); err != nil {
		t.Skip(err)
	}
	saved := dnnForce
	defer func() { dnnForce = saved }()
	shapes := []convCase{
		{[]int{32, 1, 28, 28}, []int{6, 1, 5, 5}, nd.ConvOpts{}},
		{[]int{32, 6, 12, 12}, []int{16, 6, 3, 3}, nd.ConvOpts{}},
		{[]int{32, 32, 32, 32}, []int{32, 32, 3, 3}, nd.ConvOpts{}},
	}
	for si, c := range shapes {
		nd.Seed(uint64(si))
		xc := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, c.x...)
		wc := nd.RandomUniform(ctx.CPU(0), nd.Float32, -1, 1, c.w...)
		conv := func(x, w *nd.NDArray) *nd.NDArray { return nd.Conv2D(x, w, nil, c.o) }
		run := func(dev ctx.Context) (r [3][]float64) {
			for range 3 { // queued behind other work, without waiting
				r = fwdBwd(dev, xc, wc, nil, conv)
			}
			return r
		}
		want := run(ctx.CPU(0))
		for pass := range 3 {
			for algo := range 8 {
				dnnForce = [3]int{-1, -1, -1}
				dnnForce[pass] = algo
				d := Default().started(ctx.GPU(0))
				d.dnn.mu.Lock()
				clear(d.dnn.plans)
				d.dnn.mu.Unlock()
				got := run(ctx.GPU(0))
				// the pass's own result: y for forward, dx for data, dw for filter
				a, b := want[pass], got[pass]
				scale, worst := maxAbs(a), 0.0
				for i := range a {
					worst = max(worst, math.Abs(a[i]-b[i]))
				}
				d.dnn.mu.Lock()
				used := -2
				for _, pl := range d.dnn.plans {
					used = int(pl.algo[pass])
				}
				d.dnn.mu.Unlock()
				t.Logf("shape %d pass %d algo %d (used %d): largest error %.3g of scale %.3g (%.2g)", si, pass, algo, used, worst, scale, worst/scale)
			}
		}
	}
}

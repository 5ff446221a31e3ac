package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestUpdateBatchNorm: after UpdateBatchNorm every BatchNorm's running
// mean and variance are the averages of its batch means and unbiased
// variances over the batches (each batch weighing the same, as PyTorch's
// update_bn), on every context; later training keeps the layers' momenta.
func TestUpdateBatchNorm(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	d1, d2 := nn.NewDense(5, nn.DenseOpts{InUnits: 4}), nn.NewDense(3, nn.DenseOpts{InUnits: 5})
	bn1, bn2 := nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(1), InChannels: 5}), nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(1), InChannels: 3})
	net := nn.NewSequential(d1, bn1, nn.NewActivation("relu"), d2, bn2)
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	var batches []*nd.NDArray
	for i, n := range []int{8, 5, 11} {
		batches = append(batches, nd.RandomNormal(devs[0], nd.Float32, float64(i), 1, n, 4))
	}
	// The expected statistics: each layer's input in a training pass.
	var want [4][]float64
	for _, x := range batches {
		nd.DefaultSession().TrainMode(func() {
			h1 := d1.Forward(x)
			h2 := d2.Forward(nd.Relu(bn1.Forward(h1)))
			for i, h := range []*nd.NDArray{h1, h2} {
				m, v := nd.Mean(h, 0).Float64s(), nd.Var(h, 1, 0).Float64s()
				if want[2*i] == nil {
					want[2*i], want[2*i+1] = make([]float64, len(m)), make([]float64, len(v))
				}
				for j := range m {
					want[2*i][j] += m[j] / float64(len(batches))
					want[2*i+1][j] += v[j] / float64(len(batches))
				}
			}
		})
	}
	if err := nn.UpdateBatchNorm(net, slices.Values(batches)); err != nil {
		t.Fatal(err)
	}
	got := []*gluon.Parameter{bn1.RunningMean, bn1.RunningVar, bn2.RunningMean, bn2.RunningVar}
	for i, p := range got {
		for _, dev := range devs {
			v := p.Data(dev).Float64s()
			for j := range v {
				if math.Abs(v[j]-want[i][j]) > 1e-5*math.Max(1, math.Abs(want[i][j])) {
					t.Fatalf("%s on %v element %d: %v, want %v", p.Name(), dev, j, v[j], want[i][j])
				}
			}
		}
	}
	// The momentum is the layer's again: a training pass moves the
	// statistics a tenth of the way (MXNet's default 0.9 keeps nine).
	before := bn2.RunningMean.Data(devs[0]).Float64s()
	x := nd.RandomNormal(devs[0], nd.Float32, 3, 1, 6, 4)
	var batchMean []float64
	nd.DefaultSession().TrainMode(func() {
		h := d2.Forward(nd.Relu(bn1.Forward(d1.Forward(x))))
		batchMean = nd.Mean(h, 0).Float64s()
		bn2.Forward(h)
	})
	after := bn2.RunningMean.Data(devs[0]).Float64s()
	for j := range after {
		if want := 0.9*before[j] + 0.1*batchMean[j]; math.Abs(after[j]-want) > 1e-5 {
			t.Fatalf("after UpdateBatchNorm, a training pass gave %v, want %v", after[j], want)
		}
	}
	sync := nn.NewSequential(nn.NewSyncBatchNorm(nn.BatchNormOpts{InChannels: 4}))
	if err := nn.UpdateBatchNorm(sync, slices.Values(batches)); err == nil {
		t.Error("a SyncBatchNorm: no error")
	}
}

// TestUpdateBatchNormHybridized: a hybridized network (whose traces hold
// the momenta) gets the eager network's statistics, and a BatchNorm that
// normalises with its running statistics keeps them.
func TestUpdateBatchNormHybridized(t *testing.T) {
	dev := ctx.CPU(0)
	bn := nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(1), InChannels: 3})
	frozen := nn.NewBatchNorm(nn.BatchNormOpts{Axis: new(1), InChannels: 3, UseGlobalStats: true})
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2}), bn, frozen)
	if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	frozen.RunningMean.SetData(nd.Full(dev, nd.Float32, 5, 3))
	var batches []*nd.NDArray
	for i := range 3 {
		batches = append(batches, nd.RandomNormal(dev, nd.Float32, float64(i), 1, 4, 2))
	}
	if err := nn.UpdateBatchNorm(net, slices.Values(batches)); err != nil {
		t.Fatal(err)
	}
	eager := bn.RunningMean.Data(dev).Float64s()
	hyb := gluon.Hybridize(net, gluon.HybridOpts{})
	nd.DefaultSession().TrainMode(func() { hyb.Forward(batches[0]) }) // a trace made before
	if err := nn.UpdateBatchNorm(hyb, slices.Values(batches)); err != nil {
		t.Fatal(err)
	}
	if got := bn.RunningMean.Data(dev).Float64s(); !slices.Equal(got, eager) {
		t.Errorf("hybridized: %v, eager %v", got, eager)
	}
	if got := frozen.RunningMean.Data(dev).Float64s(); got[0] != 5 {
		t.Errorf("a UseGlobalStats BatchNorm's mean became %v", got)
	}
}

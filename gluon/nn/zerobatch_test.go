package nn_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// TestEmbeddingBagNoIndexGradient: a batch in which no bag holds an
// index (a zero batch, [B, 0] indices, offsets whose bags are all empty)
// gives zeros connected to the weight, as in PyTorch 1.13, where
//
//	e = torch.nn.EmbeddingBag(6, 2, mode=m)
//	e(torch.zeros(0, 3, dtype=torch.long)).sum().backward()
//	e(torch.zeros(0, dtype=torch.long), torch.tensor([0, 0])).sum().backward()
//
// give a zero result and e.weight.grad zeros for every mode ([B, 0]
// indices, which torch 1.13 refuses with "step must be nonzero", give B
// empty bags here: zeros, as an empty bag of offsets does). The batch used
// to return constant zeros: Backward failed (the head was not recorded) and
// a Trainer reported the weight's gradient stale.
func TestEmbeddingBagNoIndexGradient(t *testing.T) {
	for _, mode := range []string{"sum", "mean", "max"} {
		for _, c := range []struct {
			name  string
			in    func() []*nd.NDArray
			shape []int
		}{
			{"zero-batch", func() []*nd.NDArray { return []*nd.NDArray{nd.Zeros(cpu0, nd.Int64, 0, 3)} }, []int{0, 2}},
			{"empty-bags", func() []*nd.NDArray { return []*nd.NDArray{nd.Zeros(cpu0, nd.Int64, 3, 0)} }, []int{3, 2}},
			{"offsets-all-empty", func() []*nd.NDArray {
				return []*nd.NDArray{nd.Zeros(cpu0, nd.Int64, 0), nd.FromSlice(cpu0, []int64{0, 0}, 2)}
			}, []int{2, 2}},
			{"offsets-none", func() []*nd.NDArray {
				return []*nd.NDArray{nd.Zeros(cpu0, nd.Int64, 0), nd.Zeros(cpu0, nd.Int64, 0)}
			}, []int{0, 2}},
		} {
			t.Run(mode+"/"+c.name, func(t *testing.T) {
				e := nn.NewEmbeddingBag(6, 2, mode)
				params := initNet(t, e, initializer.Xavier{}, nd.Float64)
				tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				nd.FillInPlace(e.Weight.Grad(cpu0), 7) // a stale value the backward pass must overwrite
				var y *nd.NDArray
				if err := nd.Catch(func() {
					autograd.Record(func() {
						y = e.ForwardMulti(c.in()...)[0]
						autograd.Backward(nd.Sum(nd.Square(nd.AddScalar(y, 1))))
					})
				}); err != nil {
					t.Fatalf("backward: %v", err)
				}
				if !slices.Equal(y.Shape(), c.shape) || y.DType() != nd.Float64 {
					t.Errorf("output %v %v, want %v float64", y.Shape(), y.DType(), c.shape)
				}
				for _, v := range y.Float64s() {
					if v != 0 {
						t.Fatalf("output %v, want zeros", y.Float64s())
					}
				}
				for _, g := range e.Weight.Grad(cpu0).Float64s() {
					if g != 0 {
						t.Fatalf("weight gradient %v, want zeros", e.Weight.Grad(cpu0).Float64s())
					}
				}
				if err := tr.Step(1); err != nil {
					t.Errorf("step: %v", err)
				}
			})
		}
	}
}

// TestZeroBatchFlatten: layers that flatten their input take a zero batch
// as PyTorch does ([0, 3, 4, 4] flattens to [0, 48]); nd.Flatten asked
// Reshape to infer the -1 of [0, -1], which no size determines.
func TestZeroBatchFlatten(t *testing.T) {
	for _, c := range []struct {
		name  string
		net   func() gluon.Block
		shape []int
	}{
		{"flatten", func() gluon.Block { return nn.NewFlatten() }, []int{0, 48}},
		{"dense", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{InUnits: 48}) }, []int{0, 5}},
		{"dense-deferred-unknown", func() gluon.Block { return nn.NewDense(5, nn.DenseOpts{}) }, []int{0, 5}},
		{"conv-flatten-dense", func() gluon.Block {
			return nn.NewSequential(nn.NewConv2D(3, 3, nn.Conv2DOpts{InChannels: 3, Pad: [2]int{1, 1}}), nn.NewFlatten(), nn.NewDense(2, nn.DenseOpts{InUnits: 48}))
		}, []int{0, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			net := c.net()
			initNet(t, net, initializer.Xavier{}, nd.Float32)
			x := nd.Zeros(cpu0, nd.Float32, 0, 3, 4, 4)
			x.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			if err := nd.Catch(func() {
				autograd.Record(func() {
					y = net.Forward(x)
					autograd.Backward(nd.Sum(y))
				})
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(y.Shape(), c.shape) {
				t.Errorf("shape %v, want %v", y.Shape(), c.shape)
			}
			if g := x.Grad(); !slices.Equal(g.Shape(), x.Shape()) {
				t.Errorf("input gradient shape %v", g.Shape())
			}
		})
	}
}

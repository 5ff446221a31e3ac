package prune_test

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/nd"
)

// L1Unstructured prunes the entries of smallest magnitude: the weight
// becomes weight_orig · weight_mask, both in the layer's parameters under
// torch's names. A second round prunes a fraction of the entries left.
// Remove bakes the zeros into a plain weight again.
func ExampleL1Unstructured() {
	dev := ctx.CPU(0)
	d := nn.NewDense(2, nn.DenseOpts{InUnits: 3, NoBias: true})
	_ = gluon.Initialize(d, initializer.Zero(), dev)
	d.Weight.SetData(nd.FromSlice(dev, []float32{0.5, -3, 0.1, 2, -0.2, 1}, 2, 3))

	p := prune.L1Unstructured(d, "weight", prune.Fraction(0.5), nil) // round(0.5·6) = 3 entries
	fmt.Println(gluon.CollectParams(d).Names())
	fmt.Println(p.Mask.Data(dev))
	fmt.Println(d.Weight.Data(dev))

	prune.L1Unstructured(d, "weight", prune.Count(1), nil) // one of the 3 left
	fmt.Println(d.Weight.Data(dev), p.Methods())

	_ = prune.Remove(d, "weight")
	fmt.Println(gluon.CollectParams(d).Names(), d.Weight.Data(dev))
	// Output:
	// [weight_orig weight_mask]
	// NDArray[2 3] float32 @cpu(0) [0 1 0 1 0 1]
	// NDArray[2 3] float32 @cpu(0) [0 -3 0 2 -0 1]
	// NDArray[2 3] float32 @cpu(0) [0 -3 0 2 -0 0] [l1_unstructured(amount=0.5) l1_unstructured(amount=1)]
	// [weight] NDArray[2 3] float32 @cpu(0) [0 -3 0 2 -0 0]
}

// LnStructured prunes whole channels: here the output unit (row, dim 0)
// of the Dense layer's weight with the smallest L2 norm, and then, of the
// input columns (dim 1), the one with the smallest largest magnitude.
func ExampleLnStructured() {
	dev := ctx.CPU(0)
	d := nn.NewDense(3, nn.DenseOpts{InUnits: 2, NoBias: true})
	_ = gluon.Initialize(d, initializer.Zero(), dev)
	d.Weight.SetData(nd.FromSlice(dev, []float32{3, 4, 0.5, 0.5, -1, 2}, 3, 2))

	prune.LnStructured(d, "weight", prune.Count(1), 2, 0, nil)
	fmt.Println(d.Weight.Data(dev))
	prune.LnStructured(d, "weight", prune.Count(1), math.Inf(1), 1, nil)
	fmt.Println(d.Weight.Data(dev))
	// Output:
	// NDArray[3 2] float32 @cpu(0) [3 4 0 0 -1 2]
	// NDArray[3 2] float32 @cpu(0) [0 4 0 0 -0 2]
}

// GlobalUnstructured ranks the entries of several layers together, and
// Sparsity reports the zeros each pruned weight now has.
func ExampleGlobalUnstructured() {
	dev := ctx.CPU(0)
	a := nn.NewDense(2, nn.DenseOpts{InUnits: 2, NoBias: true})
	b := nn.NewDense(1, nn.DenseOpts{InUnits: 2, NoBias: true})
	net := nn.NewSequential(a, b)
	_ = gluon.Initialize(net, initializer.Zero(), dev)
	a.Weight.SetData(nd.FromSlice(dev, []float32{0.1, 0.2, 3, 4}, 2, 2))
	b.Weight.SetData(nd.FromSlice(dev, []float32{0.3, 5}, 1, 2))

	prune.GlobalUnstructured([]prune.Target{{Block: a, Name: "weight"}, {Block: b, Name: "weight"}}, prune.L1, prune.Fraction(0.5))
	fmt.Print(prune.Sparsity(net))
	// Output:
	// dense0.weight  50.00% (2 of 4)
	// dense1.weight  50.00% (1 of 2)
	// global         50.00% (3 of 6)
}

// A pruned state dict (torch's or Goluon's: weight_orig and weight_mask)
// loads into a network whose parameters are pruned with Identity first,
// as torch's recipe does with prune.identity.
func ExampleIdentity() {
	d := nn.NewDense(4, nn.DenseOpts{})
	prune.Identity(d, "weight")
	fmt.Println(gluon.CollectParams(d).Names(), prune.IsPruned(d))
	// then: gluon.LoadParameters(d, "pruned.pt", ctx.CPU(0))
	// Output:
	// [weight_orig weight_mask bias] true
}

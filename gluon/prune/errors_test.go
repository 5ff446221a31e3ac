package prune_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/nd"
)

// TestErrors: each mistake panics with an *nd.Error of the right kind
// and a message naming it, before anything changes: the block keeps its
// parameters, a pruned one its mask.
func TestErrors(t *testing.T) {
	dense := func() *nn.Dense {
		d := nn.NewDense(6, nn.DenseOpts{InUnits: 5})
		if err := gluon.Initialize(d, nil, cpu0); err != nil {
			t.Fatal(err)
		}
		return d
	}
	ones := func(shape ...int) *nd.NDArray { return nd.Ones(cpu0, nd.Float32, shape...) }
	for _, c := range []struct {
		name   string
		pruned bool // weight L1-pruned by a quarter first
		call   func(d *nn.Dense)
		kind   nd.ErrorKind
		msg    string
	}{
		{"fraction-above-1", false, func(d *nn.Dense) { prune.L1Unstructured(d, "weight", prune.Fraction(1.5), nil) }, nd.ErrArgument, "Fraction(1.5): a fraction must be in [0, 1]"},
		{"fraction-negative", false, func(d *nn.Dense) { prune.RandomUnstructured(d, "weight", prune.Fraction(-0.1)) }, nd.ErrArgument, "must be in [0, 1]"},
		{"fraction-nan", false, func(d *nn.Dense) { prune.LnStructured(d, "weight", prune.Fraction(math.NaN()), 2, 0, nil) }, nd.ErrArgument, "Fraction(NaN)"},
		{"count-negative", false, func(d *nn.Dense) { prune.RandomStructured(d, "weight", prune.Count(-1), 0) }, nd.ErrArgument, "Count(-1): a count must be non-negative"},
		{"count-too-large", false, func(d *nn.Dense) { prune.L1Unstructured(d, "weight", prune.Count(31), nil) }, nd.ErrArgument, "Count(31) is more than the 30 unpruned entries"},
		{"count-too-large-after-a-round", true, func(d *nn.Dense) { prune.L1Unstructured(d, "weight", prune.Count(23), nil) }, nd.ErrArgument, "Count(23) is more than the 22 unpruned entries"},
		{"channels-too-many", false, func(d *nn.Dense) { prune.LnStructured(d, "weight", prune.Count(7), 1, 0, nil) }, nd.ErrArgument, "Count(7) is more than the 6 channels along dim 0"},
		{"unknown-parameter", false, func(d *nn.Dense) { prune.L1Unstructured(d, "weights", prune.Fraction(0.1), nil) }, nd.ErrArgument, `has no parameter "weights" (its parameters: weight, bias)`},
		{"structured-1d", false, func(d *nn.Dense) { prune.LnStructured(d, "bias", prune.Count(1), 1, 0, nil) }, nd.ErrArgument, "two or more dimensions"},
		{"dim-too-large", false, func(d *nn.Dense) { prune.LnStructured(d, "weight", prune.Count(1), 1, 2, nil) }, nd.ErrArgument, "dim 2 is not an axis"},
		{"dim-too-negative", false, func(d *nn.Dense) { prune.RandomStructured(d, "weight", prune.Count(1), -3) }, nd.ErrArgument, "dim -3 is not an axis"},
		{"norm-nan", false, func(d *nn.Dense) { prune.LnStructured(d, "weight", prune.Count(1), math.NaN(), 0, nil) }, nd.ErrArgument, "n is NaN"},
		{"scores-shape", true, func(d *nn.Dense) { prune.L1Unstructured(d, "weight", prune.Count(1), ones(5, 6)) }, nd.ErrShape, "scores of shape [5 6] for weight of shape [6 5]"},
		{"scores-dtype", false, func(d *nn.Dense) {
			prune.L1Unstructured(d, "weight", prune.Count(1), nd.Zeros(cpu0, nd.Int64, 6, 5))
		}, nd.ErrDType, "scores are int64"},
		{"mask-values", true, func(d *nn.Dense) {
			prune.CustomFromMask(d, "weight", nd.Full(cpu0, nd.Float32, 0.5, 6, 5))
		}, nd.ErrArgument, "mask entry 0 is 0.5"},
		{"mask-shape", false, func(d *nn.Dense) { prune.CustomFromMask(d, "bias", ones(5)) }, nd.ErrShape, "mask of shape [5] for bias of shape [6]"},
		{"global-twice", true, func(d *nn.Dense) {
			prune.GlobalUnstructured([]prune.Target{{Block: d}, {Block: d, Name: "bias"}, {Block: d, Name: "weight"}}, prune.L1, prune.Count(1))
		}, nd.ErrArgument, `"weight" of block "" is named twice`},
		{"global-method", false, func(d *nn.Dense) {
			prune.GlobalUnstructured([]prune.Target{{Block: d}}, prune.Method("ln_structured"), prune.Count(1))
		}, nd.ErrArgument, `method "ln_structured"`},
		{"global-empty", false, func(*nn.Dense) { prune.GlobalUnstructured(nil, prune.L1, prune.Count(1)) }, nd.ErrArgument, "no parameters"},
		{"no-block", false, func(*nn.Dense) { prune.Identity(nil, "weight") }, nd.ErrArgument, "no block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := dense()
			if c.pruned {
				prune.L1Unstructured(d, "weight", prune.Fraction(0.25), nil)
			}
			names := gluon.CollectParams(d).Names()
			var mask []float64
			if p := prune.Of(d, "weight"); p != nil {
				mask = p.Mask.Data(cpu0).Float64s()
			}
			err := nd.Catch(func() { c.call(d) })
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %v, want an *nd.Error", err)
			}
			if e.Kind != c.kind || !strings.Contains(e.Error(), c.msg) {
				t.Fatalf("error %q (kind %v), want kind %v containing %q", e, e.Kind, c.kind, c.msg)
			}
			if got := gluon.CollectParams(d).Names(); !slices.Equal(got, names) {
				t.Errorf("parameters %v after the error, were %v", got, names)
			}
			if p := prune.Of(d, "weight"); mask != nil {
				equalSlice(t, "mask after the error", p.Mask.Data(cpu0).Float64s(), mask)
			}
		})
	}
}

// TestNotReady: a parameter whose shape is still to be inferred can only
// be pruned with Identity; then pruning it further waits for values.
func TestNotReady(t *testing.T) {
	d := nn.NewDense(3, nn.DenseOpts{})
	if err := gluon.Initialize(d, nil, cpu0); err != nil {
		t.Fatal(err)
	}
	err := nd.Catch(func() { prune.L1Unstructured(d, "weight", prune.Count(1), nil) })
	if err == nil || !strings.Contains(err.Error(), "has no values yet") || !strings.Contains(err.Error(), "or prune it with Identity") {
		t.Fatalf("err %v", err)
	}
	prune.Identity(d, "weight")
	err = nd.Catch(func() { prune.L1Unstructured(d, "weight", prune.Count(1), nil) })
	if err == nil || !strings.Contains(err.Error(), "has no values yet") {
		t.Fatalf("err %v", err)
	}
	predict(d, nd.Ones(cpu0, nd.Float32, 2, 4)) // infers [3 4]: the mask starts at ones
	p := prune.L1Unstructured(d, "weight", prune.Count(5), nil)
	if n := zeros(p.Mask.Data(cpu0).Float64s()); n != 5 {
		t.Errorf("%d zeros in the mask, want 5", n)
	}
}

// TestRemove: Remove makes the pruning permanent (the weight keeps its
// zeros, the block its former parameter names and the layer its weight
// parameter); removing an unpruned parameter, or twice, is an error.
func TestRemove(t *testing.T) {
	net, conv, dense := prunedNet(t, nd.Float32)
	x := nd.RandomNormal(cpu0, nd.Float32, 0, 1, 2, 2, 4, 4)
	want := predict(net, x).Float64s()
	weight := conv.Weight.Data(cpu0).Float64s()
	if !prune.IsPruned(net) {
		t.Fatal("IsPruned: false")
	}
	p := prune.Of(conv, "weight")
	for _, r := range []struct {
		b    gluon.Component
		name string
	}{{conv, "weight"}, {dense, "weight"}, {dense, "bias"}} {
		if err := prune.Remove(r.b, r.name); err != nil {
			t.Fatal(err)
		}
	}
	if got := gluon.CollectParams(net).Names(); !slices.Equal(got, []string{"conv0.weight", "conv0.bias", "dense0.weight", "dense0.bias"}) {
		t.Errorf("parameters %v", got)
	}
	if prune.IsPruned(net) {
		t.Error("IsPruned after Remove: true")
	}
	equalSlice(t, "weight", conv.Weight.Data(cpu0).Float64s(), weight)
	equalSlice(t, "output", predict(net, x).Float64s(), want)
	if conv.Weight.Derivation() != nil || conv.Weight.GradReq() != nd.GradWrite {
		t.Errorf("weight derived %v, grad_req %v", conv.Weight.Derivation(), conv.Weight.GradReq())
	}
	for _, err := range []error{prune.Remove(conv, "weight"), p.Remove(), prune.Remove(conv, "bias")} {
		if err == nil || !strings.Contains(err.Error(), "prune: Remove") {
			t.Errorf("err %v, want an error", err)
		}
	}
	// Pruning again after Remove starts afresh.
	q := prune.L1Unstructured(conv, "weight", prune.Count(1), nil)
	if q == p || len(q.Methods()) != 1 {
		t.Errorf("a new pruning was expected, methods %v", q.Methods())
	}
}

// TestDerivedWeight: a weight-normalised layer's weight is derived; its
// direction weight_v is a stored parameter and prunes like any other.
func TestDerivedWeight(t *testing.T) {
	d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
	if err := gluon.Initialize(d, nil, cpu0); err != nil {
		t.Fatal(err)
	}
	nn.ApplyWeightNorm(d, nn.WeightNormOpts{})
	err := nd.Catch(func() { prune.L1Unstructured(d, "weight", prune.Count(1), nil) })
	if err == nil || !strings.Contains(err.Error(), "its parameters: weight_v, weight_g, bias") {
		t.Fatalf("err %v", err)
	}
	prune.L1Unstructured(d, "weight_v", prune.Count(4), nil)
	if n := zeros(d.Weight.Data(cpu0).Float64s()); n != 4 {
		t.Errorf("%d zeros in the weight, want 4", n)
	}
	if got := gluon.CollectParams(d).Names(); !slices.Equal(got, []string{"weight_v_orig", "weight_v_mask", "weight_g", "bias"}) {
		t.Errorf("parameters %v", got)
	}
}

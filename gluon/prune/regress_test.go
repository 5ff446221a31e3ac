package prune_test

// Review tests (scratch): gluon/prune against torch 1.13 and edge cases.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/nd"
)

// Regression tests from the review of the pruning package: tied
// parameters, norm layers' aliases, a pruning's own parameters, nil
// blocks.

// tiedDecoder projects back with its encoder's weight (tied weights), read
// through DataFor as layers do.
type tiedDecoder struct {
	gluon.BlockMeta
	w *gluon.Parameter
}

func (d *tiedDecoder) Forward(h *nd.NDArray) *nd.NDArray {
	return nd.Dot(h, d.w.DataFor(h), false, false)
}

// tiedNet is x → tanh(x·Wᵀ) → ·W with one W registered in both halves
// (gluon's TestTiedWeightsTrain network).
type tiedNet struct {
	gluon.BlockMeta
	enc *nn.Dense
	dec *tiedDecoder
}

func (m *tiedNet) Forward(x *nd.NDArray) *nd.NDArray { return m.dec.Forward(m.enc.Forward(x)) }

func newTiedNet(t *testing.T) *tiedNet {
	m := &tiedNet{BlockMeta: gluon.NewBlockMeta("ae")}
	m.enc = m.AddChild(nn.NewDense(4, nn.DenseOpts{InUnits: 3, NoBias: true, Act: "tanh"})).(*nn.Dense)
	m.dec = &tiedDecoder{BlockMeta: gluon.NewBlockMeta("dec")}
	m.dec.w = m.dec.AddParam(m.enc.Weight)
	m.AddChild(m.dec)
	if err := gluon.Initialize(m, nil, cpu0); err != nil {
		t.Fatal(err)
	}
	m.enc.Weight.SetData(nd.FromSlice(cpu0, []float32{1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12}, 4, 3))
	return m
}

// catchAny runs f and returns its *nd.Error (nd.Catch) or, for any other
// panic, an error saying so.
func catchAny(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("runtime panic (not an *nd.Error): %v", r)
		}
	}()
	return nd.Catch(f)
}

// TestPruneGlobalTiedParameter: GlobalUnstructured given one parameter
// through the two blocks it is registered in (tied weights) refuses it
// before changing anything.
func TestPruneGlobalTiedParameter(t *testing.T) {
	m := newTiedNet(t)
	before := gluon.CollectParams(m).Names()
	err := catchAny(func() {
		prune.GlobalUnstructured([]prune.Target{{Block: m.enc}, {Block: m.dec, Name: "weight"}}, prune.L1, prune.Count(2))
	})
	if err == nil {
		t.Errorf("a tied parameter named through two blocks was accepted; parameters now %v (were %v)", gluon.CollectParams(m).Names(), before)
		x := nd.Ones(cpu0, nd.Float32, 2, 3)
		if ferr := catchAny(func() { predict(m, x) }); ferr != nil {
			t.Errorf("and the network no longer runs: %v", ferr)
		}
		return
	}
	if got := gluon.CollectParams(m).Names(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("after the error the parameters are %v, were %v", got, before)
	}
}

// TestPrunePruneTiedParameter: a parameter tied to several blocks is
// refused with an *nd.Error before anything changes; the network still
// saves and trains.
func TestPrunePruneTiedParameter(t *testing.T) {
	m := newTiedNet(t)
	before := gluon.CollectParams(m).Names()
	err := catchAny(func() { prune.L1Unstructured(m.enc, "weight", prune.Count(3), nil) })
	if err != nil {
		var e *nd.Error
		if !errors.As(err, &e) {
			t.Fatalf("panic %v, want an *nd.Error", err)
		}
		if got := gluon.CollectParams(m).Names(); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("after the error the parameters are %v, were %v", got, before)
		}
		return
	}
	if err := gluon.SaveParameters(m, filepath.Join(t.TempDir(), "tied.safetensors")); err != nil {
		t.Errorf("pruning a tied parameter was accepted, then SaveParameters fails: %v (parameters %v)", err, gluon.CollectParams(m).Names())
	}
	trainer := newTrainer(t, m)
	x := nd.Ones(cpu0, nd.Float32, 2, 3)
	autograd.Record(func() { autograd.Backward(nd.Sum(m.Forward(x))) })
	if err := trainer.Step(2); err != nil {
		t.Errorf("pruning a tied parameter was accepted, then Trainer.Step fails: %v", err)
	}
}

// TestPrunePruneNormGamma: pruning a BatchNorm's gamma (PyTorch's
// "weight") keeps what gamma carries: its Alias, so that the state dict
// of the network pruned in torch (batchnorm0.weight_orig, weight_mask)
// loads, and KeepFloat32, so that gluon.Cast to float16 leaves the pruned
// scale in float32 like its beta.
func TestPrunePruneNormGamma(t *testing.T) {
	bn := nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 3})
	net := nn.NewSequential(bn)
	if err := gluon.Initialize(net, nil, cpu0); err != nil {
		t.Fatal(err)
	}
	bn.Gamma.SetData(nd.FromSlice(cpu0, []float32{0.5, -2, 1.5}, 3))
	p := prune.L1Unstructured(bn, "gamma", prune.Count(1), nil)
	if p.Orig.Alias != "weight_orig" || p.Mask.Alias != "weight_mask" {
		t.Errorf("pruned gamma: Orig alias %q, Mask alias %q; want weight_orig and weight_mask (gamma's alias is %q)", p.Orig.Alias, p.Mask.Alias, bn.Gamma.Alias)
	}
	// A state dict under torch's names loads into the network pruned here.
	params := gluon.CollectParams(net)
	tensors := map[string]*nd.NDArray{}
	var names []string
	for _, n := range params.Names() {
		tn := strings.NewReplacer("gamma_", "weight_", "beta", "bias").Replace(n)
		names = append(names, tn)
		tensors[tn] = params.Get(n).Data(cpu0)
	}
	path := filepath.Join(t.TempDir(), "bn_torch_names.pt")
	if err := pytorch.SaveStateDict(path, names, tensors); err != nil {
		t.Fatal(err)
	}
	if err := gluon.LoadParameters(net, path, cpu0); err != nil {
		t.Errorf("a state dict with torch's names %v does not load: %v", names, err)
	}
	if err := gluon.Cast(net, nd.Float16); err != nil {
		t.Fatal(err)
	}
	if bn.Beta.DType() != nd.Float32 {
		t.Fatalf("beta %v after the cast", bn.Beta.DType())
	}
	if dt := bn.Gamma.DType(); dt != nd.Float32 {
		t.Errorf("the pruned gamma is %v after gluon.Cast(float16); BatchNorm keeps gamma and beta float32 (KeepFloat32)", dt)
	}
}

// TestPruneNilBlock: a nil block is an error or an *nd.Error for every
// entry point (Remove, Of, IsPruned, Sparsity and the pruning methods).
func TestPruneNilBlock(t *testing.T) {
	for name, f := range map[string]func(){
		"Remove":   func() { _ = prune.Remove(nil, "weight") },
		"Of":       func() { prune.Of(nil, "weight") },
		"IsPruned": func() { prune.IsPruned(nil) },
		"Sparsity": func() { prune.Sparsity(nil) },
	} {
		if err := catchAny(f); err != nil {
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Errorf("%s(nil): %v", name, err)
			}
		}
	}
}

// TestPrunePruneOrigThenRemove: a pruning's own weight_orig and
// weight_mask are not pruned again, and Remove then works.
func TestPrunePruneOrigThenRemove(t *testing.T) {
	h := newHolder(t, arr{Shape: []int{2, 3}, Data: []float64{1, 2, 3, 4, 5, 6}})
	prune.L1Unstructured(h, "weight", prune.Count(1), nil)
	if err := catchAny(func() { prune.L1Unstructured(h, "weight_orig", prune.Count(1), nil) }); err != nil {
		return // refused: fine
	}
	weight := h.W.Data(cpu0).Float64s()
	var rerr error
	if err := catchAny(func() { rerr = prune.Remove(h, "weight") }); err != nil {
		t.Errorf("Remove panicked: %v", err)
		if err := catchAny(func() { h.W.Data(cpu0) }); err != nil {
			t.Errorf("and left the block half-changed: parameters %v, the layer's weight: %v", gluon.CollectParams(h).Names(), err)
		}
		return
	}
	if rerr != nil {
		if err := catchAny(func() { h.W.Data(cpu0) }); err != nil {
			t.Errorf("Remove failed (%v) but changed the weight: %v; parameters %v", rerr, err, gluon.CollectParams(h).Names())
		}
		return
	}
	equalSlice(t, "weight after Remove", h.W.Data(cpu0).Float64s(), weight)
}

package quantization_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

var dev = ctx.CPU(0)

func initNet(t testing.TB, net gluon.Component, seed uint64) {
	t.Helper()
	if err := gluon.Initialize(net, initializer.Uniform{Scale: 0.5}, dev); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for _, p := range gluon.CollectParams(net).List() {
		a := p.ListData()[0]
		v := make([]float32, a.Size())
		for i := range v {
			v[i] = float32(r.NormFloat64() * 0.3)
		}
		p.SetData(nd.FromSlice(dev, v, a.Shape()...))
	}
}

func randInput(seed uint64, shape ...int) *nd.NDArray {
	r := rand.New(rand.NewPCG(seed, 2))
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return nd.FromSlice(dev, v, shape...)
}

// maxRel returns max|a−b| / max|b|.
func maxRel(a, b []float32) float64 {
	var d, s float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
		s = max(s, math.Abs(float64(b[i])))
	}
	return d / s
}

// TestDenseLayouts: inputs flattened (2-D, 4-D), NoFlatten on 3-D and
// 1-D inputs, activations fused (relu) or applied after (tanh), no bias,
// an empty batch: shapes as nn.Dense's and values within int8's error of
// the float layer.
func TestDenseLayouts(t *testing.T) {
	cases := []struct {
		name  string
		opts  nn.DenseOpts
		shape []int
		out   []int
	}{
		{"2d", nn.DenseOpts{InUnits: 24}, []int{5, 24}, []int{5, 7}},
		{"4d-flatten", nn.DenseOpts{InUnits: 24, Act: "relu"}, []int{3, 2, 3, 4}, []int{3, 7}},
		{"3d-noflatten", nn.DenseOpts{InUnits: 24, NoFlatten: true, Act: "tanh"}, []int{2, 3, 24}, []int{2, 3, 7}},
		{"1d-noflatten", nn.DenseOpts{InUnits: 24, NoFlatten: true}, []int{24}, []int{7}},
		{"nobias", nn.DenseOpts{InUnits: 24, NoBias: true, Act: "sigmoid"}, []int{4, 24}, []int{4, 7}},
		{"empty", nn.DenseOpts{InUnits: 24}, []int{0, 24}, []int{0, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := nn.NewDense(7, c.opts)
			initNet(t, d, 1)
			q, err := quantization.NewDense(d, quantization.Opts{})
			if err != nil {
				t.Fatal(err)
			}
			x := randInput(2, c.shape...)
			want, got := d.Forward(x), q.Forward(x)
			if !slices.Equal(got.Shape(), c.out) || !slices.Equal(want.Shape(), c.out) {
				t.Fatalf("shape %v, float layer %v, want %v", got.Shape(), want.Shape(), c.out)
			}
			if got.Size() > 0 {
				if e := maxRel(got.Float32s(), want.Float32s()); e > 0.1 {
					t.Errorf("int8 differs from float32 by %.3g of the largest output", e)
				}
			}
		})
	}
}

// TestQuantizeDynamicTree: nested containers are walked, Skip leaves a
// layer float, a shared layer becomes one shared quantized layer, other
// layers and their parameters stay, the paths are reported, and a second
// call finds nothing left to do.
func TestQuantizeDynamicTree(t *testing.T) {
	shared := nn.NewDense(8, nn.DenseOpts{InUnits: 8, Act: "relu"})
	inner := nn.NewSequential(nn.NewDense(8, nn.DenseOpts{InUnits: 16}), shared)
	net := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 12, Act: "relu"}), inner,
		nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 8}), shared, nn.NewDense(3, nn.DenseOpts{InUnits: 8}))
	initNet(t, net, 3)
	x := randInput(4, 6, 12)
	want := net.Forward(x).Float32s()
	paths, err := quantization.QuantizeDynamic(net, quantization.Opts{Skip: func(p string) bool { return p == "dense2" }})
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"dense0", "sequential0.dense0", "sequential0.dense1", "dense1"}; !slices.Equal(paths, w) {
		t.Errorf("paths %v, want %v", paths, w)
	}
	kids := net.Children()
	if _, ok := kids[4].(*nn.Dense); !ok {
		t.Errorf("the skipped layer is %T", kids[4])
	}
	if kids[3] != inner.Children()[1] {
		t.Error("the shared layer was quantized twice")
	}
	names := gluon.CollectParams(net).Names()
	if w := []string{"layernorm0.gamma", "layernorm0.beta", "dense2.weight", "dense2.bias"}; !slices.Equal(names, w) {
		t.Errorf("parameters left %v, want %v", names, w)
	}
	if e := maxRel(net.Forward(x).Float32s(), want); e > 0.25 { // five int8 layers of 8 to 16 inputs

		t.Errorf("quantized network differs by %.3g", e)
	}
	if again, err := quantization.QuantizeDynamic(net, quantization.Opts{}); err != nil || !slices.Equal(again, []string{"dense2"}) {
		t.Errorf("second call: %v %v", again, err)
	}
}

// held is a block that keeps its layers in fields and calls them there.
type held struct {
	gluon.BlockMeta
	fc1, fc2 *nn.Dense
}

func (h *held) Forward(x *nd.NDArray) *nd.NDArray { return h.fc2.Forward(h.fc1.Forward(x)) }

// TestQuantizeDynamicHeld: layers a parent keeps in fields and calls
// there are quantized too (the float layer delegates to the int8 one):
// the parent's output changes to the int8 one, within int8's error of the
// float network.
func TestQuantizeDynamicHeld(t *testing.T) {
	h := &held{BlockMeta: gluon.NewBlockMeta("held")}
	h.fc1 = h.AddChild(nn.NewDense(4, nn.DenseOpts{InUnits: 5})).(*nn.Dense)
	h.fc2 = h.AddChild(nn.NewDense(2, nn.DenseOpts{InUnits: 4})).(*nn.Dense)
	net := nn.NewSequential(nn.NewDense(5, nn.DenseOpts{InUnits: 3}), h)
	initNet(t, net, 5)
	x := randInput(3, 6, 3)
	want := net.Forward(x).Float32s()
	paths, err := quantization.QuantizeDynamic(net, quantization.Opts{})
	if err != nil || !slices.Equal(paths, []string{"dense0", "held0.dense0", "held0.dense1"}) {
		t.Fatalf("paths %v, error %v", paths, err)
	}
	if _, ok := h.Children()[0].(*quantization.Dense); !ok {
		t.Errorf("held0's child is %T, want the quantized layer", h.Children()[0])
	}
	got := net.Forward(x).Float32s()
	same, worst := true, 0.0
	for i := range got {
		same = same && got[i] == want[i]
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	if same || worst > 0.05 {
		t.Errorf("through the fields: max difference %g from the float network (want int8's error: above 0, below 0.05)", worst)
	}
}

// TestQuantizeErrors: the calls that cannot quantize say why.
func TestQuantizeErrors(t *testing.T) {
	d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
	if _, err := quantization.QuantizeDynamic(d, quantization.Opts{}); err == nil || !strings.Contains(err.Error(), "NewDense") {
		t.Errorf("root Dense: %v", err)
	}
	if _, err := quantization.NewDense(d, quantization.Opts{}); err == nil || !strings.Contains(err.Error(), "not initialised") {
		t.Errorf("uninitialised: %v", err)
	}
	deferred := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{}))
	if err := gluon.Initialize(deferred, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	if _, err := quantization.QuantizeDynamic(deferred, quantization.Opts{}); err == nil || !strings.Contains(err.Error(), "dense0") {
		t.Errorf("deferred shape: %v", err)
	}
	initNet(t, d, 6)
	w := d.Weight.ListData()[0].Float32s()
	w[5] = float32(math.NaN())
	d.Weight.SetData(nd.FromSlice(dev, w, 3, 4))
	if _, err := quantization.NewDense(d, quantization.Opts{}); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN weight: %v", err)
	}
	if _, err := quantization.ChooseQParams(2, 1, 0, 255, false); err == nil {
		t.Error("ChooseQParams took lo > hi")
	}
}

// TestDenseForwardErrors: recording, a float64 input, a wrong size and a
// NaN input panic with an *nd.Error of the right kind naming the layer.
func TestDenseForwardErrors(t *testing.T) {
	d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
	initNet(t, d, 7)
	q, err := quantization.NewDense(d, quantization.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	x := randInput(8, 2, 4)
	nan := nd.FromSlice(dev, []float32{1, 2, float32(math.NaN()), 4}, 1, 4)
	cases := []struct {
		name string
		f    func()
		kind nd.ErrorKind
		text string
	}{
		{"record", func() { autograd.Record(func() { q.Forward(x) }) }, nd.ErrGraph, "cannot be recorded"},
		{"float64", func() { q.Forward(x.AsType(nd.Float64)) }, nd.ErrDType, "float32"},
		{"size", func() { q.Forward(randInput(9, 2, 5)) }, nd.ErrShape, "takes 4 inputs"},
		{"nan", func() { q.Forward(nan) }, nd.ErrArgument, "NaN"},
	}
	for _, c := range cases {
		err := nd.Catch(c.f)
		var e *nd.Error
		if !errors.As(err, &e) || e.Kind != c.kind || !strings.Contains(e.Error(), c.text) || !strings.Contains(e.Error(), "dense") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := nd.Catch(func() { autograd.PredictMode(func() { q.Forward(x) }) }); err != nil {
		t.Errorf("predict mode: %v", err)
	}
}

// TestDenseHybridizeAndConcurrent: a hybridized quantized network runs
// eagerly (EagerOnly) with the eager results, and goroutines calling one
// layer at once get the serial results bit for bit.
func TestDenseHybridizeAndConcurrent(t *testing.T) {
	net := nn.NewSequential(nn.NewDense(32, nn.DenseOpts{InUnits: 20, Act: "relu"}), nn.NewDense(5, nn.DenseOpts{InUnits: 32}))
	initNet(t, net, 10)
	if _, err := quantization.QuantizeDynamic(net, quantization.Opts{}); err != nil {
		t.Fatal(err)
	}
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	xs := make([]*nd.NDArray, 8)
	want := make([][]float32, len(xs))
	for i := range xs {
		xs[i] = randInput(uint64(20+i), 1+i, 20)
		want[i] = net.Forward(xs[i]).Float32s()
		if got := h.Forward(xs[i]).Float32s(); !slices.Equal(got, want[i]) {
			t.Fatalf("hybridized call %d differs", i)
		}
	}
	if h.EagerReason() == "" {
		t.Error("the hybridized network does not report running eagerly")
	}
	var wg sync.WaitGroup
	errs := make([]bool, len(xs))
	for i := range xs {
		wg.Go(func() {
			for range 20 {
				if got := net.Forward(xs[i]).Float32s(); !slices.Equal(got, want[i]) {
					errs[i] = true
				}
			}
		})
	}
	wg.Wait()
	if slices.Contains(errs, true) {
		t.Error("concurrent calls differ from serial ones")
	}
}

// TestSaveLoad: a quantized network saved and loaded into another one
// quantized the same way computes the same bits; the per-channel state
// comes along; bad files are errors that leave the network as it was.
func TestSaveLoad(t *testing.T) {
	build := func(seed uint64, perChannel bool) *nn.Sequential {
		net := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 10, Act: "relu"}),
			nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 16}), nn.NewDense(4, nn.DenseOpts{InUnits: 16, NoBias: true}))
		initNet(t, net, seed)
		if _, err := quantization.QuantizeDynamic(net, quantization.Opts{PerChannel: perChannel}); err != nil {
			t.Fatal(err)
		}
		return net
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "q.safetensors")
	src := build(11, true)
	if err := quantization.Save(src, path); err != nil {
		t.Fatal(err)
	}
	dst := build(12, false)
	x := randInput(13, 3, 10)
	before := dst.Forward(x).Float32s()
	if err := quantization.Load(dst, path); err != nil {
		t.Fatal(err)
	}
	if got, want := dst.Forward(x).Float32s(), src.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Error("the loaded network computes other values")
	}
	if q := dst.Children()[0].(*quantization.Dense); !q.PerChannel() {
		t.Error("per-channel scales were not loaded")
	}

	other := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 11, Act: "relu"}),
		nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 16}), nn.NewDense(4, nn.DenseOpts{InUnits: 16, NoBias: true}))
	initNet(t, other, 14)
	if _, err := quantization.QuantizeDynamic(other, quantization.Opts{}); err != nil {
		t.Fatal(err)
	}
	otherPath := filepath.Join(dir, "other.safetensors")
	if err := quantization.Save(other, otherPath); err != nil {
		t.Fatal(err)
	}
	dst2 := build(12, false)
	floatOnly := filepath.Join(dir, "float.safetensors")
	if err := gluon.SaveParameters(nn.NewSequential(), floatOnly); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{"shape": otherPath, "missing": floatOnly, "absent": filepath.Join(dir, "none")} {
		if err := quantization.Load(dst2, p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if got := dst2.Forward(x).Float32s(); !slices.Equal(got, before) {
		t.Error("a failed load changed the network")
	}
}

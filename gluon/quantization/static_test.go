package quantization_test

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// heldBlock calls its convolutions through fields of its own, as a ResNet
// block does: only delegation reaches them.
type heldBlock struct {
	gluon.BlockMeta
	a, b *nn.Conv2D
}

func newHeldBlock() *heldBlock {
	h := &heldBlock{BlockMeta: gluon.NewBlockMeta("held")}
	h.a = nn.NewConv2D(6, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 4, Act: "relu"})
	h.b = nn.NewConv2D(4, 1, nn.Conv2DOpts{InChannels: 6})
	h.AddChild(h.a)
	h.AddChild(h.b)
	return h
}

func (h *heldBlock) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.Relu(nd.Add(h.b.Forward(h.a.Forward(x)), x))
}

// smallCNN is a convolution, a held block, pooling and a classifier.
func smallCNN(t testing.TB, seed uint64) *nn.Sequential {
	t.Helper()
	net := nn.NewSequential(
		nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3, Act: "relu"}),
		newHeldBlock(),
		nn.NewMaxPool2D(2, nn.PoolOpts{}),
		nn.NewDense(5, nn.DenseOpts{InUnits: 4 * 4 * 4}),
	)
	initNet(t, net, seed)
	return net
}

func calBatches(n int) []*nd.NDArray {
	var xs []*nd.NDArray
	for i := range n {
		xs = append(xs, randInput(uint64(200+i), 4, 3, 8, 8))
	}
	return xs
}

// TestQuantizeStatic: every convolution and Dense is replaced, those held
// in fields included (they delegate); the outputs stay close to the
// float network's; the ranges are what the batches held.
func TestQuantizeStatic(t *testing.T) {
	net := smallCNN(t, 1)
	x := randInput(300, 6, 3, 8, 8)
	want := net.Forward(x).Float32s()
	cal, err := quantization.Prepare(net, quantization.StaticOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if got := net.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Fatal("a prepared network computes differently")
	}
	batches := calBatches(3)
	for _, b := range batches {
		net.Forward(b)
	}
	r := cal.Ranges()
	lo, hi, _ := nd.MinMaxF32(slices.Concat(x.Float32s(), batches[0].Float32s(), batches[1].Float32s(), batches[2].Float32s()))
	if len(r) != 4 || r[0].Path != "conv0" || r[0].Lo != lo || r[0].Hi != hi || r[0].Calls != 4 {
		t.Fatalf("ranges %+v; want conv0 in [%v, %v] over 4 calls", r, lo, hi)
	}
	paths, err := cal.Convert()
	want4 := []string{"conv0", "held0.conv0", "held0.conv1", "dense0"}
	if err != nil || !slices.Equal(paths, want4) {
		t.Fatalf("Convert: %v %v, want %v", paths, err, want4)
	}
	held := net.Children()[1].(*heldBlock)
	if _, ok := held.Children()[0].(*quantization.Conv2D); !ok {
		t.Fatalf("held child is %T", held.Children()[0])
	}
	got := net.Forward(x).Float32s()
	if d := maxRel(got, want); d > 0.05 || d == 0 {
		t.Errorf("int8 network differs from float by %.3g of max|y|", d)
	}
	if n := gluon.CollectParams(net).Len(); n != 0 {
		t.Errorf("%d float parameters left", n)
	}
	if _, err := cal.Convert(); err == nil {
		t.Error("a second Convert: no error")
	}
}

// TestStaticOptions: Skip and NoDense leave layers float; a layer shared
// by two parents becomes one quantized layer, or stays float at both when
// one of its paths is skipped; a layer wrapped by gluon.Hybridize is
// quantized.
func TestStaticOptions(t *testing.T) {
	shared := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3})
	net := nn.NewSequential(shared, nn.NewSequential(shared), nn.NewDense(4, nn.DenseOpts{InUnits: 3 * 8 * 8}))
	initNet(t, net, 2)
	paths, err := quantization.QuantizeStatic(net, quantization.StaticOpts{NoDense: true}, calBatches(1)...)
	if err != nil || !slices.Equal(paths, []string{"conv0", "sequential0.conv0"}) {
		t.Fatalf("NoDense: %v %v", paths, err)
	}
	a, b := net.Children()[0], net.Children()[1].Meta().Children()[0]
	if _, ok := a.(*quantization.Conv2D); !ok || a != b {
		t.Errorf("shared layer became %T and %T", a, b)
	}
	if _, ok := net.Children()[2].(*nn.Dense); !ok {
		t.Errorf("NoDense quantized the Dense: %T", net.Children()[2])
	}
	// Skipped at one of its places, a shared layer stays float at both.
	shared2 := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3})
	a2, b2 := nn.NewSequential(shared2), nn.NewSequential(shared2)
	net3 := nn.NewSequential(a2, b2, nn.NewConv2D(2, 1, nn.Conv2DOpts{InChannels: 3}))
	initNet(t, net3, 5)
	x := randInput(6, 2, 3, 8, 8)
	want := a2.Forward(x).Float32s()
	paths, err = quantization.QuantizeStatic(net3, quantization.StaticOpts{Skip: func(p string) bool { return p == "sequential0.conv0" }}, calBatches(1)...)
	if err != nil || !slices.Equal(paths, []string{"conv0"}) {
		t.Errorf("shared and skipped: %v %v", paths, err)
	}
	if got := b2.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Error("a shared layer skipped at one place runs int8 at the other")
	}
	// A layer hybridized on its own is found through the wrapper; a
	// network that is one such layer is refused.
	h := gluon.Hybridize(nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3}), gluon.HybridOpts{})
	net4 := nn.NewSequential(h, nn.NewDense(2, nn.DenseOpts{InUnits: 3 * 8 * 8}))
	initNet(t, net4, 7)
	paths, err = quantization.QuantizeStatic(net4, quantization.StaticOpts{}, calBatches(1)...)
	if err != nil || !slices.Equal(paths, []string{"conv0", "dense0"}) {
		t.Errorf("hybridized child: %v %v", paths, err)
	}
	if _, err := quantization.Prepare(gluon.Hybridize(nn.NewDense(2, nn.DenseOpts{}), gluon.HybridOpts{}), quantization.StaticOpts{}); err == nil {
		t.Error("a hybridized single layer: no error")
	}
	net2 := smallCNN(t, 3)
	paths, err = quantization.QuantizeStatic(net2, quantization.StaticOpts{Skip: func(p string) bool { return strings.HasPrefix(p, "held0") }}, calBatches(1)...)
	if err != nil || !slices.Equal(paths, []string{"conv0", "dense0"}) {
		t.Errorf("Skip: %v %v", paths, err)
	}
}

// TestStaticDeferred: a network whose input sizes are not inferred yet
// (deferred initialisation) infers them during calibration.
func TestStaticDeferred(t *testing.T) {
	net := nn.NewSequential(nn.NewConv2D(4, 3, nn.Conv2DOpts{Act: "relu"}), nn.NewDense(3, nn.DenseOpts{}))
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	paths, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, calBatches(1)...)
	if err != nil || len(paths) != 2 {
		t.Fatalf("QuantizeStatic: %v %v", paths, err)
	}
	if c := net.Children()[0].(*quantization.Conv2D); c.InChannels() != 3 || c.Channels() != 4 {
		t.Errorf("inferred %d → %d channels", c.InChannels(), c.Channels())
	}
	if y := net.Forward(randInput(1, 2, 3, 8, 8)); !slices.Equal(y.Shape(), []int{2, 3}) {
		t.Errorf("output shape %v", y.Shape())
	}
}

// TestCalibrationErrors: what Prepare, Convert and QuantizeStatic refuse,
// and that a failed run leaves the float network as it was.
func TestCalibrationErrors(t *testing.T) {
	if _, err := quantization.Prepare(nil, quantization.StaticOpts{}); err == nil {
		t.Error("nil network: no error")
	}
	if _, err := quantization.Prepare(nn.NewConv2D(2, 1, nn.Conv2DOpts{}), quantization.StaticOpts{}); err == nil {
		t.Error("a single layer: no error")
	}
	if _, err := quantization.Prepare(nn.NewSequential(nn.NewActivation("relu")), quantization.StaticOpts{}); err == nil {
		t.Error("nothing to quantize: no error")
	}
	net := smallCNN(t, 4)
	if _, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}); err == nil {
		t.Error("no batches: no error")
	}
	x := randInput(5, 2, 3, 8, 8)
	want := net.Forward(x).Float32s()
	// A batch of the wrong shape fails in the float network's Forward.
	_, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, randInput(6, 2, 5, 8, 8))
	if err == nil || !strings.Contains(err.Error(), "calibration") {
		t.Errorf("bad batch: %v", err)
	}
	if _, ok := net.Children()[0].(*nn.Conv2D); !ok {
		t.Fatalf("after a failed QuantizeStatic the first layer is %T", net.Children()[0])
	}
	if got := net.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Error("a failed QuantizeStatic changed the network's outputs")
	}
	// A layer no batch reached: Convert names it, Cancel restores.
	cal, err := quantization.Prepare(net, quantization.StaticOpts{})
	if err != nil {
		t.Fatal(err)
	}
	net.Children()[0].(gluon.Block).Forward(x)
	if _, err := cal.Convert(); err == nil || !strings.Contains(err.Error(), "dense0, held0.conv0, held0.conv1") {
		t.Errorf("unseen layers: %v", err)
	}
	// A NaN in a batch is named too.
	nan := x.Float32s()
	nan[7] = float32(math.NaN())
	net.Forward(nd.FromSlice(dev, nan, x.Shape()...))
	if _, err := cal.Convert(); err == nil || !strings.Contains(err.Error(), "conv0, dense0") {
		t.Errorf("NaN input: %v", err)
	}
	cal.Cancel()
	if got := net.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Error("Cancel did not restore the float network")
	}
	if _, err := cal.Convert(); err == nil {
		t.Error("Convert after Cancel: no error")
	}
}

// TestStaticHybridConcurrentSave: a hybridized quantized network runs
// eagerly with the eager results; goroutines calling it at once get the
// serial results; Save and Load carry the int8 state (input quantization
// included) into a network quantized from other weights and data.
func TestStaticHybridConcurrentSave(t *testing.T) {
	net := smallCNN(t, 7)
	if _, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, calBatches(2)...); err != nil {
		t.Fatal(err)
	}
	xs := make([]*nd.NDArray, 6)
	want := make([][]float32, len(xs))
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	for i := range xs {
		xs[i] = randInput(uint64(400+i), 1+i, 3, 8, 8)
		want[i] = net.Forward(xs[i]).Float32s()
		if got := h.Forward(xs[i]).Float32s(); !slices.Equal(got, want[i]) {
			t.Fatalf("hybridized call %d differs", i)
		}
	}
	var wg sync.WaitGroup
	bad := make([]bool, len(xs))
	for i := range xs {
		wg.Go(func() {
			for range 5 {
				if !slices.Equal(net.Forward(xs[i]).Float32s(), want[i]) {
					bad[i] = true
				}
			}
		})
	}
	wg.Wait()
	if slices.Contains(bad, true) {
		t.Error("concurrent calls differ from serial ones")
	}
	path := filepath.Join(t.TempDir(), "q.safetensors")
	if err := quantization.Save(net, path); err != nil {
		t.Fatal(err)
	}
	other := smallCNN(t, 8)
	if _, err := quantization.QuantizeStatic(other, quantization.StaticOpts{}, randInput(9, 1, 3, 8, 8)); err != nil {
		t.Fatal(err)
	}
	if err := quantization.Load(other, path); err != nil {
		t.Fatal(err)
	}
	for i := range xs {
		if !slices.Equal(other.Forward(xs[i]).Float32s(), want[i]) {
			t.Fatalf("loaded network differs on input %d", i)
		}
	}
	dyn := smallCNN(t, 8)
	if _, err := quantization.QuantizeDynamic(dyn, quantization.Opts{}); err != nil {
		t.Fatal(err)
	}
	if err := quantization.Load(dyn, path); err == nil {
		t.Error("a static file into a dynamically quantized network: no error")
	}
}

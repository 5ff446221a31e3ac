package quantization_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// Regression tests from the review of static quantization: hybridized
// layers called through fields, parameters listed during calibration.

// hybridField calls a layer hybridized on its own through a field (as a
// ResNet block calls its convolutions), the wrapper being its registered
// child.
type hybridField struct {
	gluon.BlockMeta
	c gluon.Block
}

func (f *hybridField) Forward(x *nd.NDArray) *nd.NDArray { return nd.Relu(f.c.Forward(x)) }

func hybridFieldNet(t *testing.T, hybrid bool) *nn.Sequential {
	conv := nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3})
	var c gluon.Block = conv
	if hybrid {
		c = gluon.Hybridize(conv, gluon.HybridOpts{})
	}
	fh := &hybridField{BlockMeta: gluon.NewBlockMeta("fh"), c: c}
	fh.AddChild(c)
	net := nn.NewSequential(fh, nn.NewDense(3, nn.DenseOpts{InUnits: 4 * 8 * 8}))
	initNet(t, net, 3)
	return net
}

// TestStaticReviewHybridizedFieldLayer: a hybridized convolution its
// parent calls through a field calibrates (the wrapper runs the observer
// eagerly) and then runs int8, bit-equal to the network without
// Hybridize.
func TestStaticReviewHybridizedFieldLayer(t *testing.T) {
	net, ref := hybridFieldNet(t, true), hybridFieldNet(t, false)
	x := randInput(1, 2, 3, 8, 8)
	float := net.Forward(x).Float32s()
	cal := calBatches(2)
	want, err := quantization.QuantizeStatic(ref, quantization.StaticOpts{}, cal...)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, cal...)
	if err != nil {
		t.Fatalf("QuantizeStatic of a network calling a hybridized convolution through a field: %v (unhybridized: paths %v)", err, want)
	}
	got := net.Forward(x).Float32s()
	if !slices.Equal(paths, want) || !slices.Equal(got, ref.Forward(x).Float32s()) || slices.Equal(got, float) {
		t.Errorf("paths %v (want %v); outputs equal the unhybridized int8 network's: %v, the float network's: %v",
			paths, want, slices.Equal(got, ref.Forward(x).Float32s()), slices.Equal(got, float))
	}
}

// TestStaticReviewParamsDuringCalibration: a prepared network lists the
// same parameters as before (observers forward their layer's Meta), so a
// checkpoint taken during calibration holds the weights.
func TestStaticReviewParamsDuringCalibration(t *testing.T) {
	net := smallCNN(t, 21)
	before := gluon.CollectParams(net).Names()
	cal, err := quantization.Prepare(net, quantization.StaticOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer cal.Cancel()
	during := gluon.CollectParams(net).Names()
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := gluon.SaveParameters(net, path); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, during) {
		t.Errorf("parameters before Prepare %v, during calibration %v (SaveParameters writes only those)", before, during)
	}
}

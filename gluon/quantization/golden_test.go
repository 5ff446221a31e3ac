package quantization_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_goldens.py: PyTorch 1.13's
// quantize_dynamic of a 30→64→48→10 MLP (ReLUs between), per tensor and
// per channel, its int8 weights and scales, the activations' parameters
// and quantized values for a few inputs, and the quantized layers'
// outputs.

type golden struct {
	Torch  string `json:"torch"`
	Engine string `json:"engine"`
	Layers []struct {
		Name      string    `json:"name"`
		In        int       `json:"in"`
		Out       int       `json:"out"`
		Weight    []float32 `json:"weight"`
		Bias      []float32 `json:"bias"`
		QWeight   []int8    `json:"qweight"`
		Scale     float32   `json:"scale"`
		QWeightPC []int8    `json:"qweight_pc"`
		ScalesPC  []float32 `json:"scales_pc"`
	} `json:"layers"`
	Inputs map[string]struct {
		Shape   []int     `json:"shape"`
		X       []float32 `json:"x"`
		QParams []float64 `json:"qparams"`
		XQ      []uint8   `json:"xq"`
		H1      []float32 `json:"h1"`
		H2      []float32 `json:"h2"`
		Y       []float32 `json:"y"`
		H1PC    []float32 `json:"h1_pc"`
		YPC     []float32 `json:"y_pc"`
		YFloat  []float32 `json:"y_float"`
	} `json:"inputs"`
	QParams []struct {
		Lo, Hi      float32
		ReduceRange bool `json:"reduce_range"`
		Scale       float32
		Zero        int32
	} `json:"qparams"`
}

func loadGolden(t testing.TB) *golden {
	t.Helper()
	raw, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// goldenMLP returns the float MLP with the goldens' weights: three Dense
// layers, ReLU after the first two.
func goldenMLP(t testing.TB, g *golden) *nn.Sequential {
	t.Helper()
	dev := ctx.CPU(0)
	net := nn.NewSequential()
	for i, l := range g.Layers {
		act := "relu"
		if i == len(g.Layers)-1 {
			act = ""
		}
		net.Add(nn.NewDense(l.Out, nn.DenseOpts{InUnits: l.In, Act: act}))
	}
	if err := gluon.Initialize(net, initializer.Zero(), dev); err != nil {
		t.Fatal(err)
	}
	for i, l := range g.Layers {
		d := net.Children()[i].(*nn.Dense)
		d.Weight.SetData(nd.FromSlice(dev, l.Weight, l.Out, l.In))
		d.Bias.SetData(nd.FromSlice(dev, l.Bias, l.Out))
	}
	return net
}

// ulpDiff returns |got − want| in units of 2⁻²³·max(|want|, |b|): the
// float rounding error of an output whose sum and bias are that large.
func ulpDiff(got, want, b float32) float64 {
	return math.Abs(float64(got)-float64(want)) / (0x1p-23 * max(math.Abs(float64(want)), math.Abs(float64(b)), 0x1p-126))
}

// TestGoldenWeights: the int8 weights and their scales are PyTorch's bit
// for bit, per tensor and per channel.
func TestGoldenWeights(t *testing.T) {
	g := loadGolden(t)
	net := goldenMLP(t, g)
	for _, perChannel := range []bool{false, true} {
		for i, l := range g.Layers {
			q, err := quantization.NewDense(net.Children()[i].(*nn.Dense), quantization.Opts{PerChannel: perChannel})
			if err != nil {
				t.Fatal(err)
			}
			w, s := q.Weight()
			wantW, wantS := l.QWeight, []float32{l.Scale}
			if perChannel {
				wantW, wantS = l.QWeightPC, l.ScalesPC
			}
			if !slices.Equal(w, wantW) {
				t.Errorf("%s per-channel %v: int8 weights differ from PyTorch's", l.Name, perChannel)
			}
			if !slices.Equal(s, wantS) {
				t.Errorf("%s per-channel %v: scales %v, PyTorch %v", l.Name, perChannel, s[:min(3, len(s))], wantS[:min(3, len(wantS))])
			}
		}
	}
}

// TestGoldenQParams: the activations' scale and zero point are PyTorch's
// (torch._choose_qparams_per_tensor) for the goldens' ranges and inputs,
// and the quantized inputs its torch.quantize_per_tensor's bytes.
func TestGoldenQParams(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.QParams {
		got, err := quantization.ChooseQParams(c.Lo, c.Hi, 0, 255, c.ReduceRange)
		if err != nil || got.Scale != c.Scale || got.Zero != c.Zero {
			t.Errorf("[%v, %v] reduce %v: %+v %v, PyTorch scale %v zero %d", c.Lo, c.Hi, c.ReduceRange, got, err, c.Scale, c.Zero)
		}
	}
	for name, in := range g.Inputs {
		lo, hi, _ := nd.MinMaxF32(in.X)
		qp, err := quantization.ChooseQParams(lo, hi, 0, 255, true)
		if err != nil || qp.Scale != float32(in.QParams[0]) || qp.Zero != int32(in.QParams[1]) {
			t.Errorf("%s: %+v %v, PyTorch %v", name, qp, err, in.QParams)
			continue
		}
		xq := make([]uint8, len(in.X))
		nd.QuantizeU8(xq, in.X, 1/qp.Scale, qp.Zero)
		if !slices.Equal(xq, in.XQ) {
			t.Errorf("%s: quantized activations differ from PyTorch's", name)
		}
	}
}

// TestGoldenOutputs: each quantized layer, given PyTorch's input to it,
// against PyTorch's output; and the whole quantized MLP against PyTorch's.
//
// The tolerances: the int8 weights, the activations' scale, zero point and
// bytes are PyTorch's bit for bit (TestGoldenWeights, TestGoldenQParams),
// so the int32 sums are the same, and a layer's outputs differ only in
// how the sum is dequantized in float32. Here that is
// float32(float32(sum)·fl(sx·sw)) + b, two roundings; oneDNN (the engine
// of Debian's torch) computes fl(1/(1/sx·1/sw))·(sum + b·(1/sx·1/sw)),
// about four; each rounding errs by at most half an ulp of a value at
// most max(|y|, |b|)·2, so the results may differ by ~6 ulps of
// max(|y|, |b|) (measured: 1.95 per tensor, 2.33 per channel; the bound
// checked is layerULPs). Through the whole MLP those differences reach
// the next layer's input; they would move its quantization by a step
// only where a value sits within an ulp of a rounding boundary, which
// none of the goldens' inputs does: the network's outputs agree to
// 3.3e-7 of the largest (netTol).
func TestGoldenOutputs(t *testing.T) {
	const layerULPs, netTol = 8, 1e-5
	g := loadGolden(t)
	t.Logf("goldens from torch %s, engine %s; int8 kernel here %s", g.Torch, g.Engine, nd.Int8Kernel())
	dev := ctx.CPU(0)
	for _, perChannel := range []bool{false, true} {
		net := goldenMLP(t, g)
		paths, err := quantization.QuantizeDynamic(net, quantization.Opts{PerChannel: perChannel})
		if err != nil || len(paths) != 3 {
			t.Fatalf("QuantizeDynamic: %v %v", paths, err)
		}
		layer := func(i int) *quantization.Dense { return net.Children()[i].(*quantization.Dense) }
		var worstLayer, worstNet, worstFloat float64
		for _, in := range g.Inputs {
			rows := in.Shape[0]
			run := func(b gluon.Block, x []float32, k int) []float32 {
				return b.Forward(nd.FromSlice(dev, x, rows, k)).Float32s()
			}
			relu := func(v []float32) []float32 {
				out := slices.Clone(v)
				for i := range out {
					out[i] = max(out[i], 0)
				}
				return out
			}
			type step struct {
				i        int
				in, want []float32
			}
			steps := []step{{0, in.X, in.H1}, {1, relu(in.H1), in.H2}}
			if perChannel {
				steps = []step{{0, in.X, in.H1PC}}
			}
			for _, s := range steps {
				l := g.Layers[s.i]
				got := run(layer(s.i), s.in, l.In)
				for j := range got {
					want := s.want[j]
					if s.i < 2 { // the layers' ReLU: compare before it where PyTorch's is positive
						want = max(want, 0)
					}
					d := ulpDiff(got[j], want, l.Bias[j%l.Out])
					worstLayer = max(worstLayer, d)
				}
			}
			y := run(net, in.X, g.Layers[0].In)
			want := in.Y
			if perChannel {
				want = in.YPC
			}
			var scale float64
			for _, v := range want {
				scale = max(scale, math.Abs(float64(v)))
			}
			for j := range y {
				worstNet = max(worstNet, math.Abs(float64(y[j]-want[j]))/max(scale, 1e-30))
			}
			if scale > 1e-3 { // not the zeros and tiny inputs: there the outputs are the bias
				worstFloat = max(worstFloat, maxRel(y, in.YFloat))
			}
		}
		t.Logf("per-channel %v: worst layer difference %.2f ulp of max(|y|,|b|); worst network difference %.3g of max|y|; int8 vs float32 network %.3g of max|y|",
			perChannel, worstLayer, worstNet, worstFloat)
		if worstLayer > layerULPs || worstNet > netTol {
			t.Errorf("per-channel %v: differences from PyTorch %.2f ulps (layer; at most %d), %.3g (network; at most %g)", perChannel, worstLayer, layerULPs, worstNet, netTol)
		}
	}
}

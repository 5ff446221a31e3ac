package quantization_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// The goldens come from testdata/make_static_goldens.py: PyTorch 1.13's
// eager static quantization (prepare, two calibration batches, convert;
// MinMaxObserver with reduce_range for activations, per-channel symmetric
// weights) of a small CNN whose every quantized layer sits between its
// own QuantStub and DeQuantStub.

type staticGolden struct {
	Torch  string `json:"torch"`
	Engine string `json:"engine"`
	Layers []struct {
		Name      string    `json:"name"`
		ReLU      string    `json:"relu"` // "fused", "float" (after, not fused) or ""
		Weight    []float32 `json:"weight"`
		Shape     []int     `json:"shape"`
		Bias      []float32 `json:"bias"`
		Lo, Hi    float32
		Scale     float32   `json:"scale"`
		Zero      int32     `json:"zero"`
		Full      []float64 `json:"full"` // scale, zero without reduce_range
		QWeight   []int8    `json:"qweight"`
		WScales   []float32 `json:"wscales"`
		QWeightPT []int8    `json:"qweight_pt"`
		WScalePT  float32   `json:"wscale_pt"`
		Stride    []int     `json:"stride"`
		Pad       []int     `json:"pad"`
		Dilation  []int     `json:"dilation"`
		Groups    int       `json:"groups"`
	} `json:"layers"`
	Calib []struct {
		Shape []int     `json:"shape"`
		X     []float32 `json:"x"`
	} `json:"calib"`
	Outputs map[string]struct {
		Layers map[string]struct {
			Shape    []int     `json:"shape"`
			X        []float32 `json:"x"`
			XQ       []uint8   `json:"xq"`
			Acc      []int64   `json:"acc"`
			YQ       []uint8   `json:"yq"`
			OutScale float32   `json:"out_scale"`
			OutZero  int32     `json:"out_zero"`
		} `json:"layers"`
		Y      []float32 `json:"y"`
		YFloat []float32 `json:"y_float"`
	} `json:"outputs"`
	QParams []struct {
		Lo, Hi      float32
		ReduceRange bool `json:"reduce_range"`
		Scale       float32
		Zero        int32
	} `json:"qparams"`
	Histograms []struct {
		Name   string
		X      []float32
		Lo, Hi float32
		Scale  float32
		Zero   int32
	} `json:"histograms"`
}

func loadStaticGolden(t testing.TB) *staticGolden {
	t.Helper()
	raw, err := os.ReadFile("testdata/static_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g staticGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// staticNet returns the goldens' float CNN: its layers named as PyTorch's
// (conv1 … conv6, fc), a ReLU block after those whose ReLU is not fused.
func staticNet(t testing.TB, g *staticGolden) (*nn.Sequential, map[string]gluon.Block) {
	t.Helper()
	net := nn.NewSequential()
	layers := map[string]gluon.Block{}
	for _, l := range g.Layers {
		act := ""
		if l.ReLU == "fused" {
			act = "relu"
		}
		var b gluon.Block
		if l.Groups == 0 { // the Linear
			b = nn.NewDense(l.Shape[0], nn.DenseOpts{InUnits: l.Shape[1], Act: act})
		} else {
			b = nn.NewConv2D(l.Shape[0], 0, nn.Conv2DOpts{Kernel: [2]int{l.Shape[2], l.Shape[3]},
				Stride: [2]int(l.Stride), Pad: [2]int(l.Pad), Dilate: [2]int(l.Dilation), Groups: l.Groups,
				InChannels: l.Shape[1] * l.Groups, Act: act, NoBias: l.Bias == nil})
		}
		b.Meta().SetName(l.Name)
		net.Add(b)
		layers[l.Name] = b
		if l.ReLU == "float" {
			r := nn.NewActivation("relu")
			r.SetName("relu_" + l.Name)
			net.Add(r)
		}
	}
	if err := gluon.Initialize(net, initializer.Zero(), dev); err != nil {
		t.Fatal(err)
	}
	for _, l := range g.Layers {
		switch b := layers[l.Name].(type) {
		case *nn.Conv2D:
			b.Weight.SetData(nd.FromSlice(dev, l.Weight, l.Shape...))
			if b.Bias != nil {
				b.Bias.SetData(nd.FromSlice(dev, l.Bias, l.Shape[0]))
			}
		case *nn.Dense:
			b.Weight.SetData(nd.FromSlice(dev, l.Weight, l.Shape...))
			b.Bias.SetData(nd.FromSlice(dev, l.Bias, l.Shape[0]))
		}
	}
	return net, layers
}

// quantizeLayer returns layer b quantized for inputs in.
func quantizeLayer(t testing.TB, b gluon.Block, in quantization.QParams, o quantization.StaticOpts) gluon.Block {
	t.Helper()
	var q gluon.Block
	var err error
	switch b := b.(type) {
	case *nn.Conv2D:
		q, err = quantization.NewConv2D(b, in, o)
	case *nn.Dense:
		q, err = quantization.NewDenseStatic(b, in, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// weightOf returns a quantized layer's int8 weights and scales.
func weightOf(b gluon.Block) ([]int8, []float32) {
	switch b := b.(type) {
	case *quantization.Conv2D:
		return b.Weight()
	case *quantization.Dense:
		return b.Weight()
	}
	return nil, nil
}

// TestStaticGoldenQParams: MinMaxQParams gives MinMaxObserver's scale and
// zero point bit for bit, for edge ranges and each layer's calibrated
// range, with and without reduce_range.
func TestStaticGoldenQParams(t *testing.T) {
	g := loadStaticGolden(t)
	for _, c := range g.QParams {
		got, err := quantization.MinMaxQParams(c.Lo, c.Hi, c.ReduceRange)
		if err != nil || got.Scale != c.Scale || got.Zero != c.Zero {
			t.Errorf("[%v, %v] reduce %v: %+v %v, PyTorch scale %v zero %d", c.Lo, c.Hi, c.ReduceRange, got, err, c.Scale, c.Zero)
		}
	}
	for _, l := range g.Layers {
		for _, c := range []struct {
			reduce bool
			scale  float32
			zero   int32
		}{{true, l.Scale, l.Zero}, {false, float32(l.Full[0]), int32(l.Full[1])}} {
			got, err := quantization.MinMaxQParams(l.Lo, l.Hi, c.reduce)
			if err != nil || got.Scale != c.scale || got.Zero != c.zero {
				t.Errorf("%s reduce %v: %+v %v, PyTorch scale %v zero %d", l.Name, c.reduce, got, err, c.scale, c.zero)
			}
		}
	}
}

// TestStaticGoldenWeights: the int8 weights and their scales are
// PyTorch's bit for bit, per channel (the default) and per tensor.
func TestStaticGoldenWeights(t *testing.T) {
	g := loadStaticGolden(t)
	_, layers := staticNet(t, g)
	for _, l := range g.Layers {
		in := quantization.QParams{Scale: l.Scale, Zero: l.Zero}
		for _, perTensor := range []bool{false, true} {
			w, s := weightOf(quantizeLayer(t, layers[l.Name], in, quantization.StaticOpts{PerTensor: perTensor}))
			wantW, wantS := l.QWeight, l.WScales
			if perTensor {
				wantW, wantS = l.QWeightPT, []float32{l.WScalePT}
			}
			if !slices.Equal(w, wantW) || !slices.Equal(s, wantS) {
				t.Errorf("%s per-tensor %v: int8 weights or scales differ from PyTorch's", l.Name, perTensor)
			}
		}
	}
}

// TestStaticGoldenCalibration: calibrating the Go network on the same two
// batches sees the same ranges as PyTorch's observers — exactly for the
// first layer, whose input is the data; within float32 rounding after
// it, where the inputs are float convolutions computed differently — and
// so chooses the same input quantization.
func TestStaticGoldenCalibration(t *testing.T) {
	g := loadStaticGolden(t)
	net, _ := staticNet(t, g)
	cal, err := quantization.Prepare(net, quantization.StaticOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Calib {
		net.Forward(nd.FromSlice(dev, c.X, c.Shape...))
	}
	ranges := cal.Ranges()
	if len(ranges) != len(g.Layers) {
		t.Fatalf("%d observed layers, want %d", len(ranges), len(g.Layers))
	}
	var worst float64
	for i, r := range ranges {
		l := g.Layers[i]
		if r.Path != l.Name || r.Calls != len(g.Calib) {
			t.Fatalf("range %d: %+v, want layer %s seen %d times", i, r, l.Name, len(g.Calib))
		}
		d := max(math.Abs(float64(r.Lo-l.Lo)), math.Abs(float64(r.Hi-l.Hi))) / float64(l.Hi-min(l.Lo, 0))
		worst = max(worst, d)
		if (i == 0 && d != 0) || d > 1e-6 {
			t.Errorf("%s: range [%v, %v], PyTorch's [%v, %v]", l.Name, r.Lo, r.Hi, l.Lo, l.Hi)
		}
	}
	t.Logf("calibrated ranges within %.2g of PyTorch's (relative to their width)", worst)
	paths, err := cal.Convert()
	if err != nil || len(paths) != len(g.Layers) {
		t.Fatalf("Convert: %v, %v", paths, err)
	}
	exact := 0
	for i, l := range g.Layers {
		var in quantization.QParams
		switch q := net.Children()[slices.IndexFunc(net.Children(), func(c gluon.Component) bool { return c.Meta().Name() == l.Name })].(type) {
		case *quantization.Conv2D:
			in = q.Input()
		case *quantization.Dense:
			in, _ = q.Input()
		default:
			t.Fatalf("%s is a %T after Convert", l.Name, q)
		}
		want, _ := quantization.MinMaxQParams(ranges[i].Lo, ranges[i].Hi, true)
		if in != want || math.Abs(float64(in.Scale-l.Scale)) > 1e-6*float64(l.Scale) || in.Zero != l.Zero {
			t.Errorf("%s: input quantization %+v, PyTorch's scale %v zero %d", l.Name, in, l.Scale, l.Zero)
		}
		if in.Scale == l.Scale {
			exact++
		}
	}
	t.Logf("%d of %d input scales bit-equal to PyTorch's, all zero points equal", exact, len(g.Layers))
}

// TestStaticGoldenLayers: each quantized layer, built with PyTorch's
// input quantization and given PyTorch's input to it. Its outputs are
// float32(float32(Σ)·fl(sx·sw[c])) + b[c] (ReLU where fused) of
// PyTorch's exact int32 sums, bit for bit: the quantized input bytes, the
// int8 weights and so the sums are PyTorch's. PyTorch's layer then
// requantizes its output to bytes (its output observer's scale and zero
// point, oneDNN's float arithmetic); ours requantized the same way agree
// but for values on a rounding boundary, at most one step apart.
func TestStaticGoldenLayers(t *testing.T) {
	g := loadStaticGolden(t)
	t.Logf("goldens from torch %s, engine %s; int8 kernel here %s", g.Torch, g.Engine, nd.Int8Kernel())
	_, layers := staticNet(t, g)
	var values, off int
	for key, out := range g.Outputs {
		for _, l := range g.Layers {
			rec := out.Layers[l.Name]
			in := quantization.QParams{Scale: l.Scale, Zero: l.Zero}
			q := quantizeLayer(t, layers[l.Name], in, quantization.StaticOpts{})
			xq := make([]uint8, len(rec.X))
			nd.QuantizeU8(xq, rec.X, 1/in.Scale, in.Zero)
			if !slices.Equal(xq, rec.XQ) {
				t.Errorf("%s %s: quantized inputs differ from PyTorch's", key, l.Name)
			}
			y := q.Forward(nd.FromSlice(dev, rec.X, rec.Shape...)).Float32s()
			if len(y) != len(rec.Acc) {
				t.Fatalf("%s %s: %d outputs, PyTorch %d", key, l.Name, len(y), len(rec.Acc))
			}
			_, scales := weightOf(q)
			chans := l.Shape[0]
			hw := len(y) / (rec.Shape[0] * chans)
			for i, v := range y {
				c := (i / hw) % chans
				var b float32
				if l.Bias != nil {
					b = l.Bias[c]
				}
				want := float32(float32(rec.Acc[i])*(in.Scale*scales[c])) + b
				if l.ReLU == "fused" {
					want = max(want, 0)
				}
				if math.Float32bits(v) != math.Float32bits(want) {
					t.Fatalf("%s %s: output %d = %v, want %v (PyTorch's int32 sum %d)", key, l.Name, i, v, want, rec.Acc[i])
				}
				r := math.RoundToEven(float64(float32(v*(1/rec.OutScale)))) + float64(rec.OutZero)
				r = min(max(r, 0), 255)
				d := math.Abs(r - float64(rec.YQ[i]))
				if d > 1 {
					t.Errorf("%s %s: output %d requantized %v, PyTorch's %d", key, l.Name, i, r, rec.YQ[i])
				}
				values++
				if d != 0 {
					off++
				}
			}
		}
	}
	t.Logf("requantized outputs: %d of %d one step off PyTorch's (%.2g%%)", off, values, 100*float64(off)/float64(values))
	if off*100 > values {
		t.Errorf("%d of %d requantized outputs differ from PyTorch's", off, values)
	}
}

// TestStaticGoldenNetwork: the Go network calibrated on the goldens'
// batches and quantized (QuantizeStatic) against PyTorch's quantized
// network and the float one. PyTorch requantizes every layer's output to
// bytes (with its output observers' parameters) before the next
// QuantStub's DeQuantStub-and-quantize; ours pass float32 on. With that
// requantization emulated between our layers (PyTorch's output scale and
// zero point, dequantized as (q − z)·s in float32) the outputs are
// PyTorch's bit for bit; without it they are closer to the float network
// than PyTorch's are (at most 1% of max|y| farther).
func TestStaticGoldenNetwork(t *testing.T) {
	g := loadStaticGolden(t)
	net, _ := staticNet(t, g)
	var cal []*nd.NDArray
	for _, c := range g.Calib {
		cal = append(cal, nd.FromSlice(dev, c.X, c.Shape...))
	}
	paths, err := quantization.QuantizeStatic(net, quantization.StaticOpts{}, cal...)
	if err != nil || len(paths) != len(g.Layers) {
		t.Fatalf("QuantizeStatic: %v %v", paths, err)
	}
	byName := map[string]gluon.Block{}
	for _, c := range net.Children() {
		byName[c.Meta().Name()] = c.(gluon.Block)
	}
	for key, out := range g.Outputs {
		first := out.Layers[g.Layers[0].Name]
		x := nd.FromSlice(dev, first.X, first.Shape...)
		y := net.Forward(x).Float32s()
		// The emulation of PyTorch's byte outputs.
		for _, l := range g.Layers {
			rec := out.Layers[l.Name]
			ya := byName[l.Name].Forward(x)
			v := ya.Float32s()
			for i, f := range v {
				q := min(max(math.RoundToEven(float64(f*(1/rec.OutScale)))+float64(rec.OutZero), 0), 255)
				v[i] = float32(q-float64(rec.OutZero)) * rec.OutScale
				if l.ReLU == "float" {
					v[i] = max(v[i], 0)
				}
			}
			x = nd.FromSlice(dev, v, ya.Shape()...)
		}
		emu := x.Float32s()
		if !slices.Equal(emu, out.Y) {
			t.Errorf("%s: with PyTorch's requantization the outputs differ from PyTorch's by %.3g of max|y|", key, maxRel(emu, out.Y))
		}
		dt, df, tf := maxRel(y, out.Y), maxRel(y, out.YFloat), maxRel(out.Y, out.YFloat)
		t.Logf("%s: int8 network vs float32 %.3g of max|y| (PyTorch's int8 vs float32 %.3g), vs PyTorch's int8 %.3g", key, df, tf, dt)
		if df > tf+0.01 {
			t.Errorf("%s: %.3g from the float network, PyTorch's int8 network %.3g", key, df, tf)
		}
	}
}

// TestStaticGoldenHistogram: calibrating with a histogram (one batch)
// chooses the input quantization of PyTorch's HistogramObserver, whose
// range search clips the bins it drops, on data sets whose ranges have
// integer ends (there torch 1.13's histogram covers the range too).
func TestStaticGoldenHistogram(t *testing.T) {
	g := loadStaticGolden(t)
	for _, h := range g.Histograms {
		net := nn.NewSequential(nn.NewConv2D(1, 1, nn.Conv2DOpts{InChannels: 1}))
		initNet(t, net, 1)
		if _, err := quantization.QuantizeStatic(net, quantization.StaticOpts{Histogram: true}, nd.FromSlice(dev, h.X, 1, 1, 1, len(h.X))); err != nil {
			t.Fatal(err)
		}
		got := net.Children()[0].(*quantization.Conv2D).Input()
		want, _ := quantization.MinMaxQParams(h.Lo, h.Hi, true)
		if got.Scale != h.Scale || got.Zero != h.Zero || want != got {
			t.Errorf("%s: %+v, PyTorch's scale %v zero %d (searched range [%v, %v])", h.Name, got, h.Scale, h.Zero, h.Lo, h.Hi)
		}
	}
}

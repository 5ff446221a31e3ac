package nn_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// layerGolden is one case of testdata/layers_more_goldens.json (made by
// make_goldens_layers_more.py with PyTorch 1.13, float64).
type layerGolden struct {
	Name   string `json:"name"`
	Layer  string `json:"layer"`
	Config struct {
		Act     string  `json:"act"`
		Type    string  `json:"type"`
		Size    int     `json:"size"`
		Stride  int     `json:"stride"`
		Pad     int     `json:"pad"`
		Ceil    bool    `json:"ceil"`
		Exclude bool    `json:"exclude"`
		Global  bool    `json:"global"`
		Mode    string  `json:"mode"`
		Widths  [4]int  `json:"widths"`
		Value   float64 `json:"value"`
		Factor  int     `json:"factor"`
	} `json:"config"`
	Input, Head, Output, Grad struct {
		Shape []int     `json:"shape"`
		Data  []float64 `json:"data"`
	}
}

// block builds the case's layer.
func (g layerGolden) block(t *testing.T) gluon.Block {
	c := g.Config
	switch g.Layer {
	case "activation":
		return nn.NewActivation(c.Act)
	case "pool1d":
		o := nn.Pool1DOpts{Stride: c.Stride, Pad: c.Pad, CeilMode: c.Ceil, ExcludePad: c.Exclude}
		switch {
		case c.Global && c.Type == "max":
			return nn.NewGlobalMaxPool1D()
		case c.Global:
			return nn.NewGlobalAvgPool1D()
		case c.Type == "max":
			return nn.NewMaxPool1D(c.Size, o)
		default:
			return nn.NewAvgPool1D(c.Size, o)
		}
	case "pad2d":
		switch c.Mode {
		case "reflect":
			return nn.NewReflectionPad2D(c.Widths)
		case "edge":
			return nn.NewReplicationPad2D(c.Widths)
		default:
			return nn.NewConstantPad2D(c.Widths, c.Value)
		}
	case "pixelshuffle":
		return nn.NewPixelShuffle2D(c.Factor)
	}
	t.Fatalf("unknown layer %q", g.Layer)
	return nil
}

// TestLayersMoreGoldens compares the 1-D pooling, padding, pixel shuffle
// and activation layers with PyTorch's modules: outputs and input
// gradients in float64, outputs in float32.
func TestLayersMoreGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/layers_more_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []layerGolden `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 26 {
		t.Fatalf("%d cases, want the generator's 26", len(f.Cases))
	}
	for _, g := range f.Cases {
		t.Run(g.Name, func(t *testing.T) {
			x := nd.FromSlice(cpu0, g.Input.Data, g.Input.Shape...)
			x.AttachGrad(nd.GradWrite)
			blk := g.block(t)
			var y *nd.NDArray
			autograd.Record(func() { y = blk.Forward(x) })
			if !slices.Equal(y.Shape(), g.Output.Shape) {
				t.Fatalf("shape %v, PyTorch %v", y.Shape(), g.Output.Shape)
			}
			closeSlice(t, "output", y.Float64s(), g.Output.Data, 1e-12)
			nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{nd.FromSlice(cpu0, g.Head.Data, g.Head.Shape...)}, false)
			gradTol := 1e-12
			if g.Name == "act-hardsigmoid" {
				// torch 1.13's CPU hardsigmoid_backward multiplies by
				// 1.0f/6.0f, a float32 constant (3e-8 relative off).
				gradTol = 1e-7
			}
			closeSlice(t, "grad", x.Grad().Float64s(), g.Grad.Data, gradTol)
			y32 := forward(blk, x.AsType(nd.Float32))
			closeSlice(t, "float32 output", y32.Float64s(), g.Output.Data, 1e-5)
		})
	}
}

// TestLayersMoreGradCheck checks the new layers' gradients numerically in
// float64, away from the kinks.
func TestLayersMoreGradCheck(t *testing.T) {
	for _, c := range []struct {
		name  string
		block gluon.Block
		shape []int
	}{
		{"selu", nn.NewSELU(), []int{3, 4}},
		{"mish", nn.NewMish(), []int{3, 4}},
		{"softsign", nn.NewSoftsign(), []int{3, 4}},
		{"hardswish", nn.NewHardSwish(), []int{3, 4}},
		{"hardsigmoid", nn.NewHardSigmoid(), []int{3, 4}},
		{"avgpool1d", nn.NewAvgPool1D(3, nn.Pool1DOpts{Stride: 2, Pad: 1, CeilMode: true, ExcludePad: true}), []int{2, 2, 8}},
		{"reflectionpad", nn.NewReflectionPad2D([4]int{1, 2, 2, 1}), []int{1, 2, 3, 4}},
		{"pixelshuffle", nn.NewPixelShuffle2D(2), []int{1, 8, 2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := ndtest.AwayFrom(cpu0, 9, -4, 4, 0.05, []float64{-3, 0, 3}, c.shape...)
			f := func(in []*nd.NDArray) *nd.NDArray { return c.block.Forward(in[0]) }
			ndtest.CheckGrad(t, f, []*nd.NDArray{x}, ndtest.GradTol{})
		})
	}
}

// TestLayersMoreMisuse: bad settings and inputs are errors naming the layer.
func TestLayersMoreMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"pool size":        func() { nn.NewMaxPool1D(0, nn.Pool1DOpts{}) },
		"pool stride":      func() { nn.NewAvgPool1D(2, nn.Pool1DOpts{Stride: -1}) },
		"pool input rank":  func() { forward(nn.NewMaxPool1D(2, nn.Pool1DOpts{}), nd.Zeros(cpu0, nd.Float32, 2, 3)) },
		"pad width":        func() { nn.NewReflectionPad2D([4]int{1, -1, 0, 0}) },
		"pad input rank":   func() { forward(nn.NewReflectionPad2D([4]int{1, 1, 1, 1}), nd.Zeros(cpu0, nd.Float32, 2, 3, 4)) },
		"reflect too wide": func() { forward(nn.NewReflectionPad2D([4]int{4, 0, 0, 0}), nd.Zeros(cpu0, nd.Float32, 1, 1, 3, 4)) },
		"shuffle factor":   func() { nn.NewPixelShuffle2D(0) },
		"shuffle channels": func() { forward(nn.NewPixelShuffle2D(2), nd.Zeros(cpu0, nd.Float32, 1, 6, 2, 2)) },
		"lambda nil":       func() { nn.NewLambda(nil) },
	} {
		err := nd.Catch(f)
		var e *nd.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

// TestIdentityAndLambda: Identity passes its input, Lambda applies its
// function, inside a Sequential and hybridized.
func TestIdentityAndLambda(t *testing.T) {
	x := ndtest.Rand(cpu0, 3, -1, 1, 2, 3, 4)
	net := nn.NewSequential(nn.NewIdentity(), nn.NewLambda(func(x *nd.NDArray) *nd.NDArray {
		return nd.Reshape(nd.Square(x), x.Shape()[0], -1)
	}))
	want := nd.Reshape(nd.Square(x), 2, 12)
	allClose(t, "eager", forward(net, x), want, 0, 0)
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	for range 2 {
		allClose(t, "hybridized", forward(h, x), want, 0, 0)
	}
	if k := nn.NewLambda(nd.Relu).Meta().Kind(); !strings.Contains(k, "lambda") {
		t.Errorf("kind %q", k)
	}
}

// TestEmbeddingPadding: the padding row starts at zero, gets no gradient
// (the other rows get theirs), and the output is unchanged, eager and
// hybridized.
func TestEmbeddingPadding(t *testing.T) {
	e := nn.NewEmbedding(5, 3).WithPadding(0)
	if err := gluon.Initialize(e, initializer.Xavier{}, cpu0); err != nil {
		t.Fatal(err)
	}
	w := e.Weight.Data(cpu0).Float64s()
	if !slices.Equal(w[:3], []float64{0, 0, 0}) || slices.Equal(w[3:6], []float64{0, 0, 0}) {
		t.Fatalf("weight rows %v", w)
	}
	e.Weight.SetData(nd.Reshape(nd.Arange(cpu0, nd.Float32, 1, 16, 1), 5, 3)) // a padding row that is not zero
	ids := nd.FromSlice(cpu0, []int64{0, 2, 0, 2, 4, 0}, 2, 3)
	for _, blk := range []gluon.Block{e, gluon.Hybridize(e, gluon.HybridOpts{})} {
		e.Weight.ZeroGrad()
		var y, l *nd.NDArray
		autograd.Record(func() { y = blk.Forward(ids); l = nd.Sum(y) })
		if got := y.Float64s()[:3]; !slices.Equal(got, []float64{1, 2, 3}) {
			t.Fatalf("padding output %v, want the row's values", got)
		}
		autograd.Backward(l)
		g := e.Weight.Grad(cpu0).Float64s()
		want := []float64{0, 0, 0, 0, 0, 0, 2, 2, 2, 0, 0, 0, 1, 1, 1}
		if !slices.Equal(g, want) {
			t.Fatalf("gradient %v, want %v", g, want)
		}
	}
	if err := nd.Catch(func() { nn.NewEmbedding(5, 3).WithPadding(5) }); err == nil {
		t.Error("a padding index out of range was accepted")
	}
}

// TestHardActivationsAtEdges: PyTorch's gradients at ±3 and ±Inf (a
// review found 1/6 at ±3 and NaN at ±Inf).
func TestHardActivationsAtEdges(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		blk  gluon.Block
		x    []float64
		want []float64
	}{
		{nn.NewHardSigmoid(), []float64{-3, 3, -inf, inf, 0}, []float64{0, 0, 0, 0, 1.0 / 6}},
		{nn.NewHardSwish(), []float64{-3, 3, -inf, inf, 0}, []float64{-0.5, 1.5, 0, 1, 0.5}},
	} {
		x := nd.FromSlice(cpu0, c.x, len(c.x))
		x.AttachGrad(nd.GradWrite)
		var l *nd.NDArray
		autograd.Record(func() { l = nd.Sum(c.blk.Forward(x)) })
		autograd.Backward(l)
		if got := x.Grad().Float64s(); !slices.Equal(got, c.want) {
			t.Errorf("%s: gradient %v, PyTorch %v", c.blk.Meta().Kind(), got, c.want)
		}
	}
	for name, f := range map[string]func(){
		"pool1d nil":     func() { nn.NewMaxPool1D(2, nn.Pool1DOpts{}).Forward(nil) },
		"pad nil":        func() { nn.NewReflectionPad2D([4]int{1, 1, 1, 1}).Forward(nil) },
		"shuffle nil":    func() { nn.NewPixelShuffle2D(2).Forward(nil) },
		"shuffle zero":   func() { (&nn.PixelShuffle2D{}).Forward(nd.Zeros(cpu0, nd.Float32, 1, 4, 1, 1)) },
		"lambda zero":    func() { (&nn.Lambda{}).Forward(nd.Zeros(cpu0, nd.Float32, 1)) },
		"activation nil": func() { nn.NewSELU().Forward(nil) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

package nn_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// extraTensor is one array of testdata/layers_extra_goldens.json.
type extraTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
	Int   bool      `json:"int"`
}

// array makes the tensor on cpu(0): Int64 for integer data, else dt.
func (e *extraTensor) array(dt nd.DType) *nd.NDArray {
	if e.Int {
		v := make([]int64, len(e.Data))
		for i, f := range e.Data {
			v[i] = int64(f)
		}
		return nd.FromSlice(cpu0, v, e.Shape...)
	}
	return nd.FromSlice(cpu0, e.Data, e.Shape...).AsType(dt)
}

// extraGolden is one case of testdata/layers_extra_goldens.json (made by
// make_goldens_layers_extra.py with PyTorch 1.13; see its docstring).
type extraGolden struct {
	Name   string `json:"name"`
	Layer  string `json:"layer"`
	Config struct {
		Shape   []int   `json:"shape"`
		Affine  bool    `json:"affine"`
		Eps     float64 `json:"eps"`
		Float32 bool    `json:"float32"`
		Axis    int     `json:"axis"`
		Lower   float64 `json:"lower"`
		Upper   float64 `json:"upper"`
		Sizes   []int   `json:"sizes"`
		Groups  int     `json:"groups"`
		P       any     `json:"p"`
		KeepDim bool    `json:"keepdim"`
		Mode    string  `json:"mode"`
		Offsets bool    `json:"offsets"`
		PSW     bool    `json:"psw"`
		Padding int     `json:"padding"`
		Last    bool    `json:"last"`
		Rate    float64 `json:"rate"`
		Feature bool    `json:"feature"`
	} `json:"config"`
	Inputs     []extraTensor           `json:"inputs"`
	Params     map[string]*extraTensor `json:"params"`
	Head       extraTensor             `json:"head"`
	Output     extraTensor             `json:"output"`
	Grads      []*extraTensor          `json:"grads"`
	ParamGrads map[string]*extraTensor `json:"param_grads"`
	Constants  struct {
		Scale, Shift, Dropped float64
	} `json:"constants"`
}

// component builds the case's layer.
func (g extraGolden) component(t *testing.T) gluon.Component {
	c := g.Config
	switch g.Layer {
	case "rmsnorm":
		return nn.NewRMSNorm(c.Shape, nn.RMSNormOpts{Epsilon: c.Eps, NoScale: !c.Affine})
	case "glu":
		return nn.NewGLU(c.Axis)
	case "softmax":
		return nn.NewSoftmax(c.Axis)
	case "logsoftmax":
		return nn.NewLogSoftmax(c.Axis)
	case "softmin":
		return nn.NewSoftmin(c.Axis)
	case "softmax2d":
		return nn.NewSoftmax2D()
	case "rrelu":
		return nn.NewRReLU(c.Lower, c.Upper)
	case "unflatten":
		return nn.NewUnflatten(c.Axis, c.Sizes...)
	case "channelshuffle":
		return nn.NewChannelShuffle(c.Groups)
	case "pairwise":
		p := math.Inf(1)
		if f, ok := c.P.(float64); ok {
			p = f
		}
		return nn.NewPairwiseDistance(p, c.Eps, c.KeepDim)
	case "cosine":
		return nn.NewCosineSimilarity(c.Axis, c.Eps)
	case "embeddingbag":
		w := g.Params["weight"]
		e := nn.NewEmbeddingBag(w.Shape[0], w.Shape[1], c.Mode)
		if c.Padding >= 0 {
			e.WithPadding(c.Padding)
		}
		e.IncludeLastOffset = c.Last
		return e
	}
	t.Fatalf("unknown layer %q", g.Layer)
	return nil
}

// inputs returns the layer's inputs in ForwardMulti's order.
func (g extraGolden) inputs(dt nd.DType) []*nd.NDArray {
	var in []*nd.NDArray
	for i := range g.Inputs {
		in = append(in, g.Inputs[i].array(dt))
	}
	if g.Layer == "embeddingbag" {
		ids, rest := in[0], in[1:]
		var off, psw *nd.NDArray
		if g.Config.Offsets {
			off, rest = rest[0], rest[1:]
		}
		if g.Config.PSW {
			psw = rest[0]
		}
		return []*nd.NDArray{ids, off, psw}
	}
	return in
}

func loadExtraGoldens(t *testing.T) []extraGolden {
	b, err := os.ReadFile("testdata/layers_extra_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []extraGolden `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 38 {
		t.Fatalf("%d cases, want the generator's 38", len(f.Cases))
	}
	return f.Cases
}

// TestLayersExtraGoldens compares the layers with PyTorch: outputs and
// the gradients of every floating input and parameter in float64 (the
// RMSNorm case made in float32 in float32), outputs in float32.
func TestLayersExtraGoldens(t *testing.T) {
	for _, g := range loadExtraGoldens(t) {
		if g.Layer == "alphadropout" {
			continue // TestAlphaDropoutGoldens
		}
		t.Run(g.Name, func(t *testing.T) {
			dt, tol := nd.Float64, 1e-12
			if g.Config.Float32 {
				dt, tol = nd.Float32, 2e-6
			}
			blk := g.component(t)
			params := gluon.CollectParams(blk)
			for _, p := range params.List() {
				p.SetDType(dt)
			}
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{cpu0}, false); err != nil {
				t.Fatal(err)
			}
			learn := map[string]*nd.NDArray{}
			for _, p := range params.List() {
				want := g.Params[localName(p.Name())]
				if want == nil {
					t.Fatalf("no golden for parameter %s", p.Name())
				}
				p.SetData(want.array(dt))
				learn[localName(p.Name())] = p.Data(cpu0)
				learn[localName(p.Name())].AttachGrad(nd.GradWrite)
			}
			in := g.inputs(dt)
			for _, x := range in {
				if x != nil && x.DType().IsFloat() {
					x.AttachGrad(nd.GradWrite)
				}
			}
			var y *nd.NDArray
			autograd.RecordMode(false, func() { y = gluon.Call(blk, in...)[0] }) // predict mode: RReLU's mean slope
			if !slices.Equal(y.Shape(), g.Output.Shape) {
				t.Fatalf("shape %v, PyTorch %v", y.Shape(), g.Output.Shape)
			}
			closeRel(t, "output", y.Float64s(), g.Output.Data, tol)
			nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{g.Head.array(dt)}, false)
			k := 0
			for _, x := range in {
				if x == nil {
					continue
				}
				if want := g.Grads[k]; want != nil {
					closeRel(t, "input grad", x.Grad().Float64s(), want.Data, tol)
				}
				k++
			}
			for name, want := range g.ParamGrads {
				a := learn[name]
				if a == nil {
					t.Fatalf("no parameter %s", name)
				}
				closeRel(t, name+" grad", a.Grad().Float64s(), want.Data, tol)
			}
			if dt == nd.Float64 {
				if err := gluon.Cast(blk, nd.Float32); err != nil {
					t.Fatal(err)
				}
				var y32 *nd.NDArray
				in32 := g.inputs(nd.Float32)
				autograd.Pause(func() { y32 = gluon.Call(blk, in32...)[0] })
				closeRel(t, "float32 output", y32.Float64s(), g.Output.Data, 2e-5)
			}
		})
	}
}

// localName is a parameter's name without its block's prefix.
func localName(full string) string {
	for i := len(full) - 1; i >= 0; i-- {
		if full[i] == '.' {
			return full[i+1:]
		}
	}
	return full
}

// closeRel compares element by element within tol·max(1, |want|).
func closeRel(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			t.Fatalf("%s: element %d is %.10g, PyTorch %.10g", what, i, got[i], want[i])
		}
	}
}

// TestAlphaDropoutGoldens: in training mode every element of alpha
// dropout's output is PyTorch's scale·x + shift (kept) or its dropped
// value, channels drop whole with Feature, the share dropped is near the
// rate, and the kept elements' gradient is the scale.
func TestAlphaDropoutGoldens(t *testing.T) {
	for _, g := range loadExtraGoldens(t) {
		if g.Layer != "alphadropout" {
			continue
		}
		t.Run(g.Name, func(t *testing.T) {
			k := g.Constants
			shape := []int{64, 64}
			d := nn.NewAlphaDropout(g.Config.Rate)
			if g.Config.Feature {
				shape = []int{16, 32, 2, 2}
				d = nn.NewFeatureAlphaDropout(g.Config.Rate)
			}
			nd.Seed(3)
			x := nd.RandomNormal(cpu0, nd.Float64, 0, 1, shape...)
			x.AttachGrad(nd.GradWrite)
			var y, l *nd.NDArray
			autograd.Record(func() { y = d.Forward(x); l = nd.Sum(y) })
			autograd.Backward(l)
			xs, ys, gs := x.Float64s(), y.Float64s(), x.Grad().Float64s()
			dropped := 0
			per := len(xs) / (shape[0] * shape[1])
			for i := range xs {
				kept := math.Abs(ys[i]-(k.Scale*xs[i]+k.Shift)) < 1e-12
				drop := math.Abs(ys[i]-k.Dropped) < 1e-12
				if kept == drop {
					t.Fatalf("element %d: %v from %v, neither kept (%v) nor dropped (%v)", i, ys[i], xs[i], k.Scale*xs[i]+k.Shift, k.Dropped)
				}
				wantGrad := k.Scale
				if drop {
					dropped++
					wantGrad = 0
				}
				if math.Abs(gs[i]-wantGrad) > 1e-12 {
					t.Fatalf("element %d: gradient %v, want %v", i, gs[i], wantGrad)
				}
				if g.Config.Feature && i%per != 0 {
					first := math.Abs(ys[i-i%per]-k.Dropped) < 1e-12
					if first != drop {
						t.Fatalf("element %d: channel dropped only in part", i)
					}
				}
			}
			if share := float64(dropped) / float64(len(xs)); math.Abs(share-g.Config.Rate) > 0.05 {
				t.Errorf("dropped %.3f of the elements, rate %g", share, g.Config.Rate)
			}
		})
	}
}

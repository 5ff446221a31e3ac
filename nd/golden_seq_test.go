package nd_test

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The goldens for the activations and normalisations of sequence models
// and for Conv1D and Conv2DTranspose come from testdata/golden/make_goldens_seq.py (PyTorch 1.13, float64).
// Every case holds the inputs, a random head gradient h of the output's
// shape, the output y and, after y.backward(h), the gradient of every
// input (x, and alpha, gamma, beta where the case has them). This test
// replays each case with nd and autograd.BackwardHeads, without Python.

// seqParams are the op arguments; each op reads the ones it takes.
type seqParams struct {
	Slope  float64 `json:"slope"`
	Alpha  float64 `json:"alpha"`
	Tanh   bool    `json:"tanh"`
	Axis   int     `json:"axis"`
	Eps    float64 `json:"eps"`
	Groups int     `json:"groups"`
	Stride []int   `json:"stride"`
	Pad    []int   `json:"pad"`
	OutPad []int   `json:"outpad"`
	Dilate []int   `json:"dilate"`
}

// pair returns v as a [2]int (zeros when absent).
func pair(v []int) [2]int {
	var p [2]int
	copy(p[:], v)
	return p
}

type seqCase struct {
	Name        string                  `json:"name"`
	Op          string                  `json:"op"`
	Description string                  `json:"description"`
	Params      seqParams               `json:"params"`
	Tensors     map[string]goldenTensor `json:"tensors"`
	Head        goldenTensor            `json:"head"`
	Outputs     map[string]goldenTensor `json:"outputs"`
	Grads       map[string]goldenTensor `json:"grads"`
}

// seqOp computes a case's output from its inputs; a nil entry of in
// (gamma or beta absent from the case) is passed on as nil.
type seqOp func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray

var seqGoldenOps = map[string]seqOp{
	"leaky_relu": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.LeakyReLU(in["x"], p.Slope)
	},
	"prelu": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.PReLU(in["x"], in["alpha"], p.Axis)
	},
	"elu": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.ELU(in["x"], p.Alpha)
	},
	"gelu": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.GELU(in["x"], p.Tanh)
	},
	"silu": func(_ seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.SiLU(in["x"])
	},
	"layer_norm": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.LayerNorm(in["x"], in["gamma"], in["beta"], p.Axis, p.Eps)
	},
	"group_norm": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.GroupNorm(in["x"], in["gamma"], in["beta"], p.Groups, p.Eps)
	},
	"instance_norm": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.InstanceNorm(in["x"], in["gamma"], in["beta"], p.Eps)
	},
	"conv1d": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.Conv1D(in["x"], in["w"], in["b"], nd.Conv1DOpts{Stride: p.Stride[0], Pad: p.Pad[0], Dilate: p.Dilate[0], Groups: p.Groups})
	},
	"conv_transpose2d": func(p seqParams, in map[string]*nd.NDArray) *nd.NDArray {
		return nd.Conv2DTranspose(in["x"], in["w"], in["b"], nd.ConvTransposeOpts{Stride: pair(p.Stride), Pad: pair(p.Pad),
			OutputPad: pair(p.OutPad), Dilate: pair(p.Dilate), Groups: p.Groups})
	},
}

// seqGoldenSkips names the cases nd does not match, with why.
var seqGoldenSkips = map[string]string{}

func loadSeqGoldens(t *testing.T) []seqCase {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/goldens_seq.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Torch string    `json:"torch"`
		Cases []seqCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.Torch == "" || len(f.Cases) == 0 {
		t.Fatalf("goldens_seq.json: torch version %q, %d cases", f.Torch, len(f.Cases))
	}
	return f.Cases
}

func TestGoldensSeq(t *testing.T) {
	cases := loadSeqGoldens(t)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Fatalf("case %q appears twice", c.Name)
		}
		seen[c.Name] = true
	}
	// Every op has a case, and every skip names one.
	for op := range seqGoldenOps {
		if !slices.ContainsFunc(cases, func(c seqCase) bool { return c.Op == op }) {
			t.Errorf("no golden case for op %q", op)
		}
	}
	for name := range seqGoldenSkips {
		if !seen[name] {
			t.Errorf("skip for unknown case %q", name)
		}
	}

	worst := 0.0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if why, ok := seqGoldenSkips[c.Name]; ok {
				t.Skip(why)
			}
			op, ok := seqGoldenOps[c.Op]
			if !ok {
				t.Fatalf("unknown op %q", c.Op)
			}
			worst = max(worst, runSeqGolden(t, c, op))
		})
	}
	t.Logf("%d cases, largest difference from PyTorch %.3g (relative to 1+|PyTorch|)", len(cases), worst)
}

// runSeqGolden replays one case on ctx.CPU(0) in float64: y = op(inputs)
// recorded, y backpropagated with the case's head gradient, then y and
// every gradient compared with PyTorch (shapes exactly, values within
// goldenTol absolute plus relative). It returns the largest difference
// seen, |got − want|/(1 + |want|).
func runSeqGolden(t *testing.T, c seqCase, op seqOp) float64 {
	dev := ctx.CPU(0)
	in := map[string]*nd.NDArray{}
	for name, tt := range c.Tensors {
		in[name] = nd.FromSlice(dev, tt.Data, tt.Shape...)
	}
	if len(c.Grads) == 0 {
		t.Fatalf("case %q has no gradients", c.Name)
	}
	for name := range c.Grads {
		a, ok := in[name]
		if !ok {
			t.Fatalf("case %q: gradient of %q, which is not an input", c.Name, name)
		}
		a.AttachGrad(nd.GradWrite)
	}
	want, ok := c.Outputs["y"]
	if !ok || len(c.Outputs) != 1 {
		t.Fatalf("case %q: want one output y", c.Name)
	}
	if !slices.Equal(c.Head.Shape, want.Shape) {
		t.Fatalf("case %q: head gradient of shape %v for output %v", c.Name, c.Head.Shape, want.Shape)
	}
	hg := nd.FromSlice(dev, c.Head.Data, c.Head.Shape...)

	var y *nd.NDArray
	autograd.Record(func() {
		y = op(c.Params, in)
	})
	if y.DType() != nd.Float64 {
		t.Errorf("%s: y has dtype %v, want float64", c.Name, y.DType())
	}
	if !slices.Equal(y.Shape(), want.Shape) {
		t.Fatalf("%s: y has shape %v, PyTorch %v", c.Name, y.Shape(), want.Shape)
	}
	autograd.BackwardHeads([]*nd.NDArray{y}, autograd.BackwardOpts{HeadGrads: []*nd.NDArray{hg}})

	worst := seqCompare(t, c.Name+": y", y.Float64s(), want)
	for _, name := range slices.Sorted(maps.Keys(c.Grads)) {
		g := in[name].Grad()
		w := c.Grads[name]
		if !slices.Equal(g.Shape(), w.Shape) {
			t.Errorf("%s: grad %s has shape %v, PyTorch %v", c.Name, name, g.Shape(), w.Shape)
			continue
		}
		worst = max(worst, seqCompare(t, c.Name+": grad "+name, g.Float64s(), w))
	}
	return worst
}

// seqCompare checks got against want with closeTo (which names the first
// element off by more than goldenTol), fails on a NaN (which closeTo's
// comparison lets through) and returns the largest difference
// |got − want|/(1 + |want|).
func seqCompare(t *testing.T, what string, got []float64, want goldenTensor) float64 {
	t.Helper()
	closeTo(t, what, got, want)
	worst := 0.0
	for i := range min(len(got), len(want.Data)) {
		d := math.Abs(got[i]-want.Data[i]) / (1 + math.Abs(want.Data[i]))
		if math.IsNaN(d) {
			t.Errorf("%s[%d] = %v, PyTorch %.15g", what, i, got[i], want.Data[i])
			return math.Inf(1)
		}
		worst = max(worst, d)
	}
	return worst
}

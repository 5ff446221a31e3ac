package prune_test

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
	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/nd"
)

var cpu0, cpu1 = ctx.CPU(0), ctx.CPU(1)

// arr is an array of testdata/prune_goldens.json: its shape and row-major
// values.
type arr struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// nd returns the array as float64 on cpu(0).
func (a arr) nd() *nd.NDArray { return nd.FromSliceShaped(cpu0, slices.Clone(a.Data), a.Shape) }

// amountSpec is an amount as the generator writes it: {"fraction": f} or
// {"count": n}.
type amountSpec struct {
	Fraction *float64 `json:"fraction"`
	Count    *int     `json:"count"`
}

func (a amountSpec) amount() prune.Amount {
	if a.Count != nil {
		return prune.Count(*a.Count)
	}
	return prune.Fraction(*a.Fraction)
}

// holder is a block with one parameter, "weight", of any shape (the
// generator's Holder module).
type holder struct {
	gluon.BlockMeta
	W *gluon.Parameter
}

// newHolder returns a holder whose weight holds a (float64, on devs or
// cpu(0)).
func newHolder(t testing.TB, a arr, devs ...ctx.Context) *holder {
	t.Helper()
	h := &holder{BlockMeta: gluon.NewBlockMeta("holder")}
	h.W = h.AddParam(gluon.NewParameter("weight", a.Shape...))
	h.W.SetDType(nd.Float64)
	if len(devs) == 0 {
		devs = []ctx.Context{cpu0}
	}
	if err := gluon.Initialize(h, initializer.Zero(), devs...); err != nil {
		t.Fatal(err)
	}
	h.W.SetData(a.nd())
	return h
}

// goldens is testdata/prune_goldens.json (make_goldens_prune.py, torch
// 1.13).
type goldens struct {
	Torch string `json:"torch"`
	Cases []struct {
		Name   string  `json:"name"`
		Weight arr     `json:"weight"`
		Rounds []round `json:"rounds"`
	} `json:"cases"`
	Global []struct {
		Name      string      `json:"name"`
		Amount    amountSpec  `json:"amount"`
		First     *amountSpec `json:"first"`
		Weights   []arr       `json:"weights"`
		FirstMask *arr        `json:"first_mask"`
		Masks     []arr       `json:"masks"`
	} `json:"global"`
	Grad struct {
		Init   map[string]arr `json:"init"`
		Input  arr            `json:"input"`
		Target arr            `json:"target"`
		Output arr            `json:"output"`
		Loss   float64        `json:"loss"`
		Masks  map[string]arr `json:"masks"`
		Grads  map[string]arr `json:"grads"`
	} `json:"grad"`
	StateDict struct {
		Keys   []string `json:"keys"`
		Input  arr      `json:"input"`
		Output arr      `json:"output"`
	} `json:"state_dict"`
}

// round is one pruning call of a case.
type round struct {
	Method string     `json:"method"`
	Amount amountSpec `json:"amount"`
	N      string     `json:"n"`
	Dim    int        `json:"dim"`
	Scores *arr       `json:"scores"`
	Custom *arr       `json:"custom"`
	Want   arr        `json:"want"`
}

// norm parses the generator's n ("2", "inf", "-inf").
func (r round) norm(t testing.TB) float64 {
	switch r.N {
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	var n float64
	if err := json.Unmarshal([]byte(r.N), &n); err != nil {
		t.Fatalf("n %q: %v", r.N, err)
	}
	return n
}

func loadGoldens(t testing.TB) *goldens {
	t.Helper()
	b, err := os.ReadFile("testdata/prune_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// equalSlice fails unless got and want are equal element by element.
func equalSlice(t testing.TB, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d is %v, want %v\n got %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

// closeSlice fails unless |got − want| ≤ tol·max(1, |want|) everywhere,
// and returns the largest such relative difference.
func closeSlice(t testing.TB, what string, got, want []float64, tol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var worst float64
	for i := range got {
		d := math.Abs(got[i]-want[i]) / math.Max(1, math.Abs(want[i]))
		if !(d <= tol) {
			t.Fatalf("%s: element %d is %.17g, want %.17g", what, i, got[i], want[i])
		}
		worst = math.Max(worst, d)
	}
	return worst
}

// zeros counts the zero entries of v.
func zeros(v []float64) int {
	n := 0
	for _, x := range v {
		if x == 0 {
			n++
		}
	}
	return n
}

// gradNet is the generator's network: conv0 (Conv2d(2, 3, 3,
// padding=1)), tanh, flatten, dense0 (Linear(48, 5)), in dt on devs.
func gradNet(t testing.TB, dt nd.DType, devs ...ctx.Context) (*nn.Sequential, *nn.Conv2D, *nn.Dense) {
	t.Helper()
	conv := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 2})
	dense := nn.NewDense(5, nn.DenseOpts{InUnits: 48})
	net := nn.NewSequential(conv, nn.NewActivation("tanh"), nn.NewFlatten(), dense)
	params := gluon.CollectParams(net)
	for _, p := range params.List() {
		p.SetDType(dt)
	}
	if len(devs) == 0 {
		devs = []ctx.Context{cpu0}
	}
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	return net, conv, dense
}

// pruneGradNet prunes gradNet as the generator's prune_net does.
func pruneGradNet(conv *nn.Conv2D, dense *nn.Dense) {
	prune.LnStructured(conv, "weight", prune.Count(1), 2, 0, nil)
	prune.L1Unstructured(conv, "weight", prune.Fraction(0.2), nil)
	prune.L1Unstructured(dense, "weight", prune.Fraction(0.5), nil)
	prune.L1Unstructured(dense, "bias", prune.Count(2), nil)
}

// prunedNet is gradNet in dt on devs with the generator's initial values,
// pruned as the generator prunes it.
func prunedNet(t testing.TB, dt nd.DType, devs ...ctx.Context) (*nn.Sequential, *nn.Conv2D, *nn.Dense) {
	t.Helper()
	g := loadGoldens(t)
	net, conv, dense := gradNet(t, dt, devs...)
	params := gluon.CollectParams(net)
	for name, a := range g.Grad.Init {
		params.Get(name).SetData(a.nd())
	}
	pruneGradNet(conv, dense)
	return net, conv, dense
}

// predict runs b on x in predict mode, unrecorded.
func predict(b gluon.Block, x *nd.NDArray) *nd.NDArray {
	var y *nd.NDArray
	autograd.Pause(func() { y = b.Forward(x) })
	return y
}

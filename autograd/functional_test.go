package autograd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// functionalGoldens are torch.autograd.functional's results
// (testdata/make_functional_goldens.py).
type functionalGoldens struct {
	A, X, W, Xv, VOut, VIn0, VIn1, VX []float64
	VJPOut                            []float64 `json:"vjp_out"`
	VJP0, VJP1, JVP                   []float64
	HVPOut                            float64 `json:"hvp_out"`
	HVP0, HVP1, Jacobian, Hessian     []float64
	HessianV                          []float64 `json:"hessian_v"`
}

func (g *functionalGoldens) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	fields := map[string]any{
		"A": &g.A, "X": &g.X, "w": &g.W, "x": &g.Xv, "v_out": &g.VOut, "v_in0": &g.VIn0, "v_in1": &g.VIn1,
		"v_x": &g.VX, "vjp_out": &g.VJPOut, "vjp0": &g.VJP0, "vjp1": &g.VJP1, "jvp": &g.JVP,
		"hvp_out": &g.HVPOut, "hvp0": &g.HVP0, "hvp1": &g.HVP1, "jacobian": &g.Jacobian,
		"hessian": &g.Hessian, "hessian_v": &g.HessianV,
	}
	for k, p := range fields {
		raw, ok := m[k]
		if !ok {
			return fmt.Errorf("goldens lack %q", k)
		}
		if err := json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// TestFunctionalGoldens: VJP, JVP, HVP, Jacobian and Hessian match
// torch.autograd.functional in float64.
func TestFunctionalGoldens(t *testing.T) {
	raw, err := os.ReadFile("testdata/functional_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g functionalGoldens
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	arr := func(v []float64, shape ...int) *nd.NDArray { return nd.FromSlice(dev, v, shape...) }
	A, x, w, X := arr(g.A, 4, 3), arr(g.Xv, 3), arr(g.W, 3, 5), arr(g.X, 2, 3)
	fVec := func(x *nd.NDArray) *nd.NDArray {
		return nd.Mul(nd.Tanh(nd.MatMul(A, x)), nd.Sum(x))
	}
	fTwo := func(in []*nd.NDArray) *nd.NDArray {
		return nd.Mul(nd.Softmax(nd.MatMul(in[0], in[1]), 1), nd.Sigmoid(nd.SumKeepDims(in[0], 1)))
	}
	ata := nd.MatMul(nd.Transpose(A), A)
	fScalar := func(x *nd.NDArray) *nd.NDArray {
		quad := nd.Sum(nd.Mul(x, nd.MatMul(ata, x)))
		return nd.Add(nd.Add(nd.Sum(nd.Mul(nd.Exp(x), nd.Sin(x))), quad), nd.Sum(nd.Log1p(nd.Square(x))))
	}
	fTwoScalar := func(in []*nd.NDArray) *nd.NDArray {
		return nd.Add(nd.Sum(nd.LogSumExp(nd.MatMul(in[0], in[1]), 1)), nd.MulScalar(nd.Sum(nd.PowScalar(in[1], 3)), 0.1))
	}
	vIn := []*nd.NDArray{arr(g.VIn0, 2, 3), arr(g.VIn1, 3, 5)}

	out, vjp := autograd.VJP(fTwo, []*nd.NDArray{X, w}, arr(g.VOut, 2, 5))
	_, jvp := autograd.JVP(fTwo, []*nd.NDArray{X, w}, vIn)
	hOut, hvp := autograd.HVP(fTwoScalar, []*nd.NDArray{X, w}, vIn)
	_, hv := autograd.HVP(func(in []*nd.NDArray) *nd.NDArray { return fScalar(in[0]) }, []*nd.NDArray{x}, []*nd.NDArray{arr(g.VX, 3)})
	for _, c := range []struct {
		name string
		got  *nd.NDArray
		want []float64
	}{
		{"vjp out", out, g.VJPOut}, {"vjp X", vjp[0], g.VJP0}, {"vjp w", vjp[1], g.VJP1},
		{"jvp", jvp, g.JVP}, {"hvp out", hOut, []float64{g.HVPOut}}, {"hvp X", hvp[0], g.HVP0}, {"hvp w", hvp[1], g.HVP1},
		{"jacobian", autograd.Jacobian(fVec, x), g.Jacobian}, {"hessian", autograd.Hessian(fScalar, x), g.Hessian},
		{"hessian·v", hv[0], g.HessianV},
	} {
		got := c.got.Float64s()
		if len(got) != len(c.want) {
			t.Errorf("%s: %d values, want %d", c.name, len(got), len(c.want))
			continue
		}
		worst := 0.0
		for i := range got {
			worst = math.Max(worst, math.Abs(got[i]-c.want[i])/(1+math.Abs(c.want[i])))
		}
		if worst > 1e-12 {
			t.Errorf("%s: differs from torch by %.3g (relative)", c.name, worst)
		}
	}
	if s := autograd.Jacobian(fVec, x).Shape(); fmt.Sprint(s) != "[4 3]" {
		t.Errorf("Jacobian shape %v, want [4 3]", s)
	}
	if x.Grad() != nil || w.Grad() != nil {
		t.Error("the inputs gained gradient buffers")
	}
}

// TestFunctionalEdges: functions that ignore an input or are linear give
// zeros, not errors; bad vectors are *nd.Error panics.
func TestFunctionalEdges(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{1, 2}, 2)
	y := nd.FromSlice(dev, []float64{3}, 1)
	_, hvp := autograd.HVP(func(in []*nd.NDArray) *nd.NDArray { return nd.Sum(nd.MulScalar(in[0], 3)) },
		[]*nd.NDArray{x, y}, []*nd.NDArray{nd.OnesLike(x), nd.OnesLike(y)})
	if fmt.Sprint(hvp[0].Float64s(), hvp[1].Float64s()) != "[0 0] [0]" {
		t.Errorf("HVP of a linear function: %v %v", hvp[0], hvp[1])
	}
	if h := autograd.Hessian(func(x *nd.NDArray) *nd.NDArray { return nd.Sum(x) }, x).Float64s(); fmt.Sprint(h) != "[0 0 0 0]" {
		t.Errorf("Hessian of Σx: %v", h)
	}
	if j := autograd.Jacobian(func(*nd.NDArray) *nd.NDArray { return nd.OnesLike(y) }, x).Float64s(); fmt.Sprint(j) != "[0 0]" {
		t.Errorf("Jacobian of a constant: %v", j)
	}
	_, vjp := autograd.VJP(func(in []*nd.NDArray) *nd.NDArray { return nd.Sum(in[0]) }, []*nd.NDArray{x, y}, nil)
	if fmt.Sprint(vjp[0].Float64s(), vjp[1].Float64s()) != "[1 1] [0]" {
		t.Errorf("VJP ignoring y: %v %v", vjp[0], vjp[1])
	}
	for name, f := range map[string]func(){
		"jvp count": func() { autograd.JVP(func(in []*nd.NDArray) *nd.NDArray { return in[0] }, []*nd.NDArray{x}, nil) },
		"hvp shape": func() {
			autograd.HVP(func(in []*nd.NDArray) *nd.NDArray { return nd.Sum(in[0]) }, []*nd.NDArray{x}, []*nd.NDArray{y})
		},
		"hvp not 1": func() {
			autograd.HVP(func(in []*nd.NDArray) *nd.NDArray { return in[0] }, []*nd.NDArray{x}, []*nd.NDArray{x})
		},
		"vjp v shape":  func() { autograd.VJP(func(in []*nd.NDArray) *nd.NDArray { return in[0] }, []*nd.NDArray{x}, y) },
		"no inputs":    func() { autograd.VJP(func(in []*nd.NDArray) *nd.NDArray { return nil }, nil, nil) },
		"nil input":    func() { autograd.Jacobian(func(x *nd.NDArray) *nd.NDArray { return x }, nil) },
		"hessian of 2": func() { autograd.Hessian(func(x *nd.NDArray) *nd.NDArray { return x }, x) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
}

// ExampleHessian: the Hessian of x₀²·x₁ at (1, 2).
func ExampleHessian() {
	x := nd.FromSlice(ctx.CPU(0), []float64{1, 2}, 2)
	h := autograd.Hessian(func(x *nd.NDArray) *nd.NDArray {
		return nd.Sum(nd.Mul(nd.Square(nd.SliceAxis(x, 0, 1, 0)), nd.SliceAxis(x, 1, 2, 0)))
	}, x)
	fmt.Println(h.Shape(), h.Float64s())
	// Output: [2 2] [4 2 2 0]
}

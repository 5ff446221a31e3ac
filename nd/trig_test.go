package nd_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// special is a float64 that JSON writes as "inf", "-inf" or "nan".
type special float64

func (v *special) UnmarshalJSON(b []byte) error {
	if s, err := strconv.Unquote(string(b)); err == nil {
		f, err := strconv.ParseFloat(s, 64)
		*v = special(f)
		return err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*v = special(f)
	return err
}

func specials(v []special) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// TestTrigGoldens compares the trigonometric, hyperbolic, base-2/10 and
// erfinv functions, Atan2 and Hypot with torch
// (testdata/golden/make_goldens_trig.py): values and gradients in float64,
// inside each domain and at its edges, where both are infinities and NaNs.
func TestTrigGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_trig.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Op      string
			A, B, Y []special
			GA, GB  []special
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	unary := map[string]func(*nd.NDArray) *nd.NDArray{
		"Tan": nd.Tan, "Asin": nd.Asin, "Acos": nd.Acos, "Atan": nd.Atan, "Sinh": nd.Sinh, "Cosh": nd.Cosh,
		"Asinh": nd.Asinh, "Acosh": nd.Acosh, "Atanh": nd.Atanh, "Log2": nd.Log2, "Log10": nd.Log10,
		"Exp2": nd.Exp2, "Erfinv": nd.Erfinv, "Lgamma": nd.Lgamma, "Digamma": nd.Digamma, "Trigamma": nd.Trigamma,
	}
	binary := map[string]func(a, b *nd.NDArray) *nd.NDArray{"Atan2": nd.Atan2, "Hypot": nd.Hypot}
	if len(g.Cases) != len(unary)+len(binary) {
		t.Fatalf("%d cases, want %d", len(g.Cases), len(unary)+len(binary))
	}
	dev := ctx.CPU(0)
	for _, c := range g.Cases {
		t.Run(c.Op, func(t *testing.T) {
			a := nd.FromSlice(dev, specials(c.A), len(c.A))
			a.AttachGrad(nd.GradWrite)
			var bArr, y *nd.NDArray
			autograd.Record(func() {
				if f, ok := unary[c.Op]; ok {
					y = f(a)
					if c.Op == "Trigamma" { // not recorded
						return
					}
				} else {
					bArr = nd.FromSlice(dev, specials(c.B), len(c.B))
					bArr.AttachGrad(nd.GradWrite)
					y = binary[c.Op](a, bArr)
				}
				autograd.Backward(nd.Sum(y))
			})
			tol := 1e-14
			if c.Op == "Erfinv" {
				// torch's erfinv(0.999999) is 2e-12 off: 3.458910737283175
				// against mpmath's 3.4589107372754988 (Go's is within an ulp);
				tol = 1e-10 // the gradient, e^(y²), multiplies it by 2y² ≈ 24
			}
			check := func(what string, got []float64, want []special) {
				for i, w := range specials(want) {
					ok := got[i] == w || math.IsNaN(got[i]) && math.IsNaN(w) ||
						!math.IsInf(w, 0) && math.Abs(got[i]-w) <= tol*math.Max(1, math.Abs(w))
					if !ok {
						t.Errorf("%s at %v: %v, torch %v", what, c.A[i], got[i], w)
					}
				}
			}
			check("value", y.Float64s(), c.Y)
			if c.Op != "Trigamma" { // not differentiable here
				check("gradient", a.Grad().Float64s(), c.GA)
			}
			if bArr != nil {
				check("second gradient", bArr.Grad().Float64s(), c.GB)
			}
		})
	}
}

// TestLerpHalf: bfloat16 arrays interpolate in float32 and round once, as
// PyTorch's lerp: its values here (rounding each step gave 0 for the
// first).
func TestLerpHalf(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []float32{-3.3, 1e4}, 2).AsType(nd.BFloat16)
	b := nd.FromSlice(dev, []float32{7.7, 5e4}, 2).AsType(nd.BFloat16)
	if got, want := nd.Lerp(a, b, 0.3).Float64s(), []float64{-0.00156402587890625, 22016}; !slices.Equal(got, want) {
		t.Errorf("%v, torch %v", got, want)
	}
}

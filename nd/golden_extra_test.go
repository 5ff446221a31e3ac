package nd_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestExtraGoldens compares the ops of products.go, blocks.go,
// calculus.go, cov.go, histc.go, pdist.go, gcd.go and affinegrid.go with
// torch (testdata/golden/make_goldens_extra.py): shapes, dtypes, values and
// the gradients of the differentiable ones, of Σ y·head for a fixed ramp
// head; and that the op fails, naming itself, where torch raises.
func TestExtraGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_extra.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Op      string
			Args    map[string]any
			Inputs  []matrixTensor
			Outputs []matrixTensor
			Grads   []matrixTensor
			Error   string // torch's message, for a call torch rejects
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	dtypes := map[string]nd.DType{"float64": nd.Float64, "float32": nd.Float32, "int64": nd.Int64,
		"int32": nd.Int32, "uint8": nd.Uint8, "bool": nd.Bool}
	for i, c := range g.Cases {
		t.Run(fmt.Sprint(i, c.Op), func(t *testing.T) {
			num := func(k string) float64 { return c.Args[k].(float64) }
			flag := func(k string) bool { v, _ := c.Args[k].(bool); return v }
			in := make([]*nd.NDArray, len(c.Inputs))
			for j, x := range c.Inputs {
				in[j] = nd.FromSlice(dev, specials(x.Data), x.Shape...).AsType(dtypes[x.DType])
				if in[j].DType() == nd.Float64 && len(c.Grads) > 0 {
					in[j].AttachGrad(nd.GradWrite)
				}
			}
			if c.Error != "" {
				err := nd.Catch(func() { extraOp(t, c.Op, c.Args, num, flag, in) })
				var e *nd.Error
				if !errors.As(err, &e) || e.Op != c.Op {
					t.Fatalf("%v; torch: %s", err, c.Error)
				}
				return
			}
			var outs []*nd.NDArray
			autograd.Record(func() {
				outs = []*nd.NDArray{extraOp(t, c.Op, c.Args, num, flag, in)}
				if len(c.Grads) == 0 {
					return
				}
				y := outs[0]
				n := y.Size()
				head := nd.FromSlice(dev, rampOf(n), n)
				autograd.Backward(nd.Sum(nd.Mul(y, nd.Reshape(head, y.Shape()...))))
			})
			if len(outs) != len(c.Outputs) {
				t.Fatalf("%d outputs, torch %d", len(outs), len(c.Outputs))
			}
			// Sums, products and powers may round in another order than
			// torch's: a few units in the last place.
			const tol = 1e-14
			for j, want := range c.Outputs {
				y := outs[j]
				if !slices.Equal(y.Shape(), want.Shape) || y.DType() != dtypes[want.DType] {
					t.Fatalf("output %d: %v %v, torch %v %s", j, y.Shape(), y.DType(), want.Shape, want.DType)
				}
				extraClose(t, fmt.Sprint("output ", j), y.Float64s(), specials(want.Data), tol)
			}
			k := 0
			for _, x := range in {
				if x.DType() != nd.Float64 || len(c.Grads) == 0 {
					continue
				}
				extraClose(t, fmt.Sprint("gradient ", k), x.Grad().Float64s(), specials(c.Grads[k].Data), tol)
				k++
			}
			if k != len(c.Grads) {
				t.Fatalf("%d gradients checked, torch has %d", k, len(c.Grads))
			}
		})
	}
}

// extraOp runs the op of one golden case.
func extraOp(t *testing.T, op string, args map[string]any, num func(string) float64, flag func(string) bool, in []*nd.NDArray) *nd.NDArray {
	switch op {
	case "Kron":
		return nd.Kron(in[0], in[1])
	case "Cross":
		return nd.Cross(in[0], in[1], int(num("dim")))
	case "Tensordot":
		return nd.Tensordot(in[0], in[1], intsOrEmpty(args["dimsA"]), intsOrEmpty(args["dimsB"]))
	case "BlockDiag":
		return nd.BlockDiag(in...)
	case "CartesianProd":
		return nd.CartesianProd(in...)
	case "Vander":
		return nd.Vander(in[0], int(num("n")), flag("increasing"))
	case "Diff":
		var pre, app *nd.NDArray
		k := 1
		if flag("prepend") {
			pre, k = in[k], k+1
		}
		if flag("append") {
			app = in[k]
		}
		return nd.Diff(in[0], int(num("n")), int(num("dim")), pre, app)
	case "Rot90":
		d := ints(args["dims"])
		return nd.Rot90(in[0], int(num("k")), [2]int{d[0], d[1]})
	case "Trapezoid":
		return nd.Trapezoid(in[0], num("dx"), int(num("dim")))
	case "CumulativeTrapezoid":
		return nd.CumulativeTrapezoid(in[0], num("dx"), int(num("dim")))
	case "TrapezoidX":
		return nd.TrapezoidX(in[0], in[1], int(num("dim")))
	case "CumulativeTrapezoidX":
		return nd.CumulativeTrapezoidX(in[0], in[1], int(num("dim")))
	case "Cov":
		var fw, aw *nd.NDArray
		k := 1
		if flag("fweights") {
			fw, k = in[k], k+1
		}
		if flag("aweights") {
			aw = in[k]
		}
		return nd.Cov(in[0], int(num("correction")), fw, aw)
	case "Corrcoef":
		return nd.Corrcoef(in[0])
	case "Histc":
		return nd.Histc(in[0], int(num("bins")), num("min"), num("max"))
	case "Pdist":
		p := math.Inf(1)
		if v, ok := args["p"].(float64); ok {
			p = v
		}
		return nd.Pdist(in[0], p)
	case "Gcd":
		return nd.Gcd(in[0], in[1])
	case "Lcm":
		return nd.Lcm(in[0], in[1])
	case "AffineGrid":
		return nd.AffineGrid(in[0], ints(args["size"]), flag("align_corners"))
	}
	t.Fatalf("unknown op %q", op)
	return nil
}

// intsOrEmpty is ints, with an empty JSON list giving an empty slice.
func intsOrEmpty(v any) []int {
	if out := ints(v); out != nil {
		return out
	}
	return []int{}
}

// extraClose compares got with torch's want to tol relative to
// max(1, |want|); NaNs match NaNs and infinities match exactly.
func extraClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, torch %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			if !(math.IsNaN(w) && math.IsNaN(g)) {
				t.Fatalf("%s %d: %v, torch %v", what, i, g, w)
			}
		case math.IsInf(w, 0) || math.IsInf(g, 0):
			if g != w {
				t.Fatalf("%s %d: %v, torch %v", what, i, g, w)
			}
		case math.Abs(g-w) > tol*math.Max(1, math.Abs(w)):
			t.Fatalf("%s %d: %v, torch %v", what, i, g, w)
		}
	}
}

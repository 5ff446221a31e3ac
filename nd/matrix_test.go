package nd_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

type matrixTensor struct {
	Shape []int
	Data  []special
	DType string
}

// TestMatrixGoldens compares Eye, Linspace, Tril, Triu, Diagonal,
// DiagEmbed, Outer, Roll, Meshgrid, Searchsorted, Bucketize, Nonzero,
// Bincount, Unique, the reductions of reduce_more.go and the scans of
// scan.go with torch (testdata/golden/make_goldens_matrix.py):
// shapes, dtypes, values and the gradients of the differentiable ones.
func TestMatrixGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_matrix.json")
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
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	dtypes := map[string]nd.DType{"float64": nd.Float64, "int64": nd.Int64, "int32": nd.Int32, "bool": nd.Bool}
	for i, c := range g.Cases {
		t.Run(fmt.Sprint(i, c.Op), func(t *testing.T) {
			num := func(k string) float64 { return c.Args[k].(float64) }
			in := make([]*nd.NDArray, len(c.Inputs))
			for j, x := range c.Inputs {
				in[j] = nd.FromSlice(dev, specials(x.Data), x.Shape...).AsType(dtypes[x.DType])
				if in[j].DType() == nd.Float64 {
					in[j].AttachGrad(nd.GradWrite)
				}
			}
			var outs []*nd.NDArray
			autograd.Record(func() {
				switch c.Op {
				case "Eye":
					outs = []*nd.NDArray{nd.Eye(dev, nd.Float64, int(num("n")), int(num("m")), int(num("k")))}
				case "Linspace":
					outs = []*nd.NDArray{nd.Linspace(dev, nd.Float64, num("start"), num("stop"), int(num("num")))}
				case "Tril":
					outs = []*nd.NDArray{nd.Tril(in[0], int(num("k")))}
				case "Triu":
					outs = []*nd.NDArray{nd.Triu(in[0], int(num("k")))}
				case "Diagonal":
					outs = []*nd.NDArray{nd.Diagonal(in[0], int(num("offset")))}
				case "DiagEmbed":
					outs = []*nd.NDArray{nd.DiagEmbed(in[0], int(num("offset")))}
				case "Outer":
					outs = []*nd.NDArray{nd.Outer(in[0], in[1])}
				case "Roll":
					outs = []*nd.NDArray{nd.Roll(in[0], int(num("shift")), int(num("axis")))}
				case "Meshgrid":
					outs = nd.Meshgrid(c.Args["indexing"].(string), in...)
				case "Searchsorted":
					outs = []*nd.NDArray{nd.Searchsorted(in[0], in[1], c.Args["right"].(bool))}
				case "Bucketize":
					outs = []*nd.NDArray{nd.Bucketize(in[0], in[1], c.Args["right"].(bool))}
				case "Nonzero":
					outs = []*nd.NDArray{nd.Nonzero(in[0])}
				case "Bincount":
					var w *nd.NDArray
					if len(in) > 1 {
						w = in[1]
					}
					outs = []*nd.NDArray{nd.Bincount(in[0], w, int(num("min_length")))}
				case "Unique":
					v, inv, cnt := nd.Unique(in[0])
					outs = []*nd.NDArray{v, inv, cnt}
				case "Prod":
					outs = []*nd.NDArray{nd.Prod(in[0], ints(c.Args["axes"])...)}
				case "AnyTrue":
					outs = []*nd.NDArray{nd.AnyTrue(in[0], ints(c.Args["axes"])...)}
				case "AllTrue":
					outs = []*nd.NDArray{nd.AllTrue(in[0], ints(c.Args["axes"])...)}
				case "CountNonzero":
					outs = []*nd.NDArray{nd.CountNonzero(in[0], ints(c.Args["axes"])...)}
				case "Median":
					v, ix := nd.Median(in[0], int(num("axis")))
					outs = []*nd.NDArray{v, ix}
				case "Quantile":
					outs = []*nd.NDArray{nd.Quantile(in[0], num("q"), int(num("axis")))}
				case "Normalize":
					outs = []*nd.NDArray{nd.Normalize(in[0], int(num("p")), int(num("axis")), num("eps"))}
				case "CosineSimilarity":
					outs = []*nd.NDArray{nd.CosineSimilarity(in[0], in[1], int(num("axis")), num("eps"))}
				case "Cdist":
					p := math.Inf(1)
					if v, ok := c.Args["p"].(float64); ok {
						p = v
					}
					outs = []*nd.NDArray{nd.Cdist(in[0], in[1], p)}
				case "Cumprod":
					outs = []*nd.NDArray{nd.Cumprod(in[0], int(num("axis")))}
				case "Cummax":
					v, ix := nd.Cummax(in[0], int(num("axis")))
					outs = []*nd.NDArray{v, ix}
				case "Cummin":
					v, ix := nd.Cummin(in[0], int(num("axis")))
					outs = []*nd.NDArray{v, ix}
				case "Logcumsumexp":
					outs = []*nd.NDArray{nd.Logcumsumexp(in[0], int(num("axis")))}
				case "Unfold", "Fold":
					pair := func(k string) [2]int { v := ints(c.Args[k]); return [2]int{v[0], v[1]} }
					o := nd.UnfoldOpts{Kernel: pair("kernel"), Stride: pair("stride"), Pad: pair("pad"), Dilate: pair("dilate")}
					if c.Op == "Unfold" {
						outs = []*nd.NDArray{nd.Unfold(in[0], o)}
					} else {
						out := pair("out")
						outs = []*nd.NDArray{nd.Fold(in[0], out[0], out[1], o)}
					}
				case "AdaptiveMaxPool2D":
					out := ints(c.Args["out"])
					outs = []*nd.NDArray{nd.AdaptiveMaxPool2D(in[0], out[0], out[1])}
				case "Lerp":
					outs = []*nd.NDArray{nd.Lerp(in[0], in[1], num("w"))}
				case "Logit":
					outs = []*nd.NDArray{nd.Logit(in[0], num("eps"))}
				case "Xlogy":
					outs = []*nd.NDArray{nd.Xlogy(in[0], in[1])}
				case "NanToNum":
					nan, pos, neg := nd.NanToNumDefaults(nd.Float64)
					if _, ok := c.Args["defaults"]; !ok {
						nan, pos, neg = num("nan"), num("posinf"), num("neginf")
					}
					outs = []*nd.NDArray{nd.NanToNum(in[0], nan, pos, neg)}
				default:
					t.Fatalf("unknown op %q", c.Op)
				}
				if len(c.Grads) == 0 {
					return
				}
				var loss *nd.NDArray
				for _, y := range outs {
					if !y.DType().IsFloat() {
						continue
					}
					n := y.Size()
					head := nd.FromSlice(dev, rampOf(n), n)
					l := nd.Sum(nd.Mul(y, nd.Reshape(head, y.Shape()...)))
					if loss == nil {
						loss = l
					} else {
						loss = nd.Add(loss, l)
					}
				}
				autograd.Backward(loss)
			})
			if len(outs) != len(c.Outputs) {
				t.Fatalf("%d outputs, torch %d", len(outs), len(c.Outputs))
			}
			for j, want := range c.Outputs {
				y := outs[j]
				if !slices.Equal(y.Shape(), want.Shape) || y.DType() != dtypes[want.DType] {
					t.Fatalf("output %d: %v %v, torch %v %s", j, y.Shape(), y.DType(), want.Shape, want.DType)
				}
				matrixClose(t, fmt.Sprint("output ", j), y.Float64s(), specials(want.Data))
			}
			k := 0
			for _, x := range in {
				if x.DType() != nd.Float64 || len(c.Grads) == 0 {
					continue
				}
				tol := 1e-14
				if c.Op == "Logcumsumexp" {
					tol = 1e-12 // torch's backward and e^(x−out) differ by 4e-14
				}
				matrixCloseTol(t, fmt.Sprint("gradient ", k), x.Grad().Float64s(), specials(c.Grads[k].Data), tol)
				k++
			}
		})
	}
}

// ints converts a JSON list of numbers.
func ints(v any) []int {
	var out []int
	for _, x := range v.([]any) {
		out = append(out, int(x.(float64)))
	}
	return out
}

// rampOf is torch.linspace(-1, 1, n) (ones for n < 2): the head the
// generator weights each output with.
func rampOf(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
		if n > 1 {
			v[i] = nd.Linspace(ctx.CPU(0), nd.Float64, -1, 1, n).Float64s()[i]
		}
	}
	return v
}

func matrixClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	matrixCloseTol(t, what, got, want, 1e-14)
}

func matrixCloseTol(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, torch %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s %d: %v, torch %v", what, i, got[i], want[i])
		}
	}
}

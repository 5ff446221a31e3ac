package nd_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestEinsumGoldens compares Einsum with torch.einsum
// (testdata/golden/make_goldens_einsum.py): values and every operand's
// gradient, in float64.
func TestEinsumGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_einsum.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Eq     string
			Shapes [][]int
			Ops    [][]float64
			YShape []int `json:"y_shape"`
			Y      []float64
			Grads  [][]float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	for _, c := range g.Cases {
		t.Run(c.Eq, func(t *testing.T) {
			ops := make([]*nd.NDArray, len(c.Ops))
			for i := range ops {
				ops[i] = nd.FromSlice(dev, c.Ops[i], c.Shapes[i]...)
				ops[i].AttachGrad(nd.GradWrite)
			}
			var y *nd.NDArray
			autograd.Record(func() {
				y = nd.Einsum(c.Eq, ops...)
				n := max(len(c.Y), 1)
				head := nd.Reshape(nd.FromSlice(dev, linspace(-1, 1, n), n), y.Shape()...)
				autograd.Backward(nd.Sum(nd.Mul(y, head)))
			})
			if !slices.Equal(y.Shape(), c.YShape) {
				t.Fatalf("shape %v, torch %v", y.Shape(), c.YShape)
			}
			check := func(what string, got, want []float64) {
				for i := range want {
					if math.Abs(got[i]-want[i]) > 1e-12 {
						t.Fatalf("%s %d: %v, torch %v", what, i, got[i], want[i])
					}
				}
			}
			check("value", y.Float64s(), c.Y)
			for i, op := range ops {
				check("gradient of operand "+string(rune('0'+i)), op.Grad().Float64s(), c.Grads[i])
			}
		})
	}
}

// TestEinsumGrad checks the gradients numerically on a diagonal, a
// broadcast and a three-operand contraction.
func TestEinsumGrad(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		eq     string
		shapes [][]int
	}{
		{"iij,jk->ik", [][]int{{3, 3, 2}, {2, 4}}},
		{"...ij,...jk->...ik", [][]int{{2, 1, 2, 3}, {4, 3, 2}}},
		{"abc,cd,bd->ad", [][]int{{2, 3, 4}, {4, 5}, {3, 5}}},
	} {
		var in []*nd.NDArray
		for _, s := range c.shapes {
			in = append(in, nd.RandomUniform(dev, nd.Float64, -1, 1, s...))
		}
		ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return nd.Einsum(c.eq, in...) }, in, ndtest.GradTol{})
	}
}

// TestEinsumErrors: malformed equations and mismatched operands are
// errors that say what is wrong.
func TestEinsumErrors(t *testing.T) {
	dev := ctx.CPU(0)
	a, b := nd.Ones(dev, nd.Float32, 2, 3), nd.Ones(dev, nd.Float32, 4, 5)
	for _, c := range []struct {
		name, eq, want string
		ops            []*nd.NDArray
	}{
		{"operand count", "ij,jk->ik", "names 2 operands, 1 given", []*nd.NDArray{a}},
		{"letters vs axes", "ijk->i", "3 letters", []*nd.NDArray{a}},
		{"sizes", "ij,jk->ik", "sizes 3 and 4", []*nd.NDArray{a, b}},
		{"unknown output letter", "ij->k", "no operand has", []*nd.NDArray{a}},
		{"output letter twice", "ij->ii", "twice", []*nd.NDArray{a}},
		{"not a letter", "i1->i", "not a subscript letter", []*nd.NDArray{a}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(func() { nd.Einsum(c.eq, c.ops...) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

// TestEinsumIntegersAndEmpty: integer operands give exact integer
// products, and a size-0 axis meeting a size-1 one broadcasts to 0 in
// either order, as in torch.
func TestEinsumIntegersAndEmpty(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []int64{1, 2, 3, 4, 5, 6}, 2, 3)
	b := nd.FromSlice(dev, []int64{1, 0, 0, 1, 1, 1}, 3, 2)
	y := nd.Einsum("ij,jk->ik", a, b)
	if y.DType() != nd.Int64 || !slices.Equal(y.Int64s(), []int64{4, 5, 10, 11}) {
		t.Errorf("int64 product: %v %v", y.DType(), y.Int64s())
	}
	for _, c := range []struct {
		eq     string
		sa, sb []int
		want   []int
	}{
		{"ab,ab->ab", []int{2, 0}, []int{2, 1}, []int{2, 0}},
		{"ab,ab->ab", []int{2, 1}, []int{2, 0}, []int{2, 0}},
		{"ij,jk->ik", []int{2, 0}, []int{1, 3}, []int{2, 3}},
	} {
		var got *nd.NDArray
		if err := nd.Catch(func() { got = nd.Einsum(c.eq, nd.Zeros(dev, nd.Float32, c.sa...), nd.Zeros(dev, nd.Float32, c.sb...)) }); err != nil {
			t.Errorf("%s %v %v: %v", c.eq, c.sa, c.sb, err)
			continue
		}
		if !slices.Equal(got.Shape(), c.want) {
			t.Errorf("%s %v %v: shape %v, want %v", c.eq, c.sa, c.sb, got.Shape(), c.want)
		}
	}
	err := nd.Catch(func() { nd.Einsum("i,i->", nd.Ones(dev, nd.Float32, 3), nd.Ones(dev, nd.Float64, 3)) })
	if err == nil || !strings.Contains(err.Error(), "nd.Einsum") {
		t.Errorf("mixed dtypes: %v", err)
	}
}

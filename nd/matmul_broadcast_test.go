package nd_test

import (
	"encoding/json"
	"errors"
	"fmt"
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

// TestMatMulBroadcastGoldens compares MatMul on 1-D operands and broadcast
// batches with torch.matmul (testdata/golden/make_goldens_matmul.py):
// values and both gradients, in float64.
func TestMatMulBroadcastGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/goldens_matmul.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			AShape []int `json:"a_shape"`
			A      []float64
			BShape []int `json:"b_shape"`
			B      []float64
			YShape []int `json:"y_shape"`
			Y      []float64
			GA, GB []float64
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	for _, c := range g.Cases {
		t.Run(fmt.Sprintf("%v·%v", c.AShape, c.BShape), func(t *testing.T) {
			a, bb := nd.FromSlice(dev, c.A, c.AShape...), nd.FromSlice(dev, c.B, c.BShape...)
			a.AttachGrad(nd.GradWrite)
			bb.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = nd.MatMul(a, bb)
				head := nd.FromSlice(dev, linspace(-1, 1, len(c.Y)), max(1, len(c.Y)))
				autograd.Backward(nd.Sum(nd.Mul(nd.Reshape(y, len(c.Y)), head)))
			})
			if !slices.Equal(y.Shape(), c.YShape) {
				t.Fatalf("shape %v, torch %v", y.Shape(), c.YShape)
			}
			for _, v := range []struct {
				what      string
				got, want []float64
			}{{"value", y.Float64s(), c.Y}, {"grad a", a.Grad().Float64s(), c.GA}, {"grad b", bb.Grad().Float64s(), c.GB}} {
				for i := range v.want {
					if math.Abs(v.got[i]-v.want[i]) > 1e-12 {
						t.Fatalf("%s %d: %v, torch %v", v.what, i, v.got[i], v.want[i])
					}
				}
			}
		})
	}
}

// TestMatMulBroadcastGrad checks the broadcast forms' gradients
// numerically.
func TestMatMulBroadcastGrad(t *testing.T) {
	dev := ctx.CPU(0)
	for _, s := range [][2][]int{{{3}, {2, 3, 4}}, {{1, 2, 3}, {4, 3, 2}}, {{2, 1, 2, 3}, {3, 3, 2}}} {
		a := nd.RandomUniform(dev, nd.Float64, -1, 1, s[0]...)
		b := nd.RandomUniform(dev, nd.Float64, -1, 1, s[1]...)
		ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return nd.MatMul(in[0], in[1]) }, []*nd.NDArray{a, b}, ndtest.GradTol{})
	}
}

func TestMatMulShapeErrors(t *testing.T) {
	dev := ctx.CPU(0)
	for _, s := range [][2][]int{{{2, 3}, {4, 5}}, {{3}, {4}}, {{2, 2, 3}, {3, 3, 4}}, {{}, {3}}} {
		err := nd.Catch(func() { nd.MatMul(nd.Zeros(dev, nd.Float32, s[0]...), nd.Zeros(dev, nd.Float32, s[1]...)) })
		if !errors.Is(err, &nd.Error{Kind: nd.ErrShape}) {
			t.Errorf("%v·%v: %v, want a shape error", s[0], s[1], err)
		}
	}
}

// TestShapeErrorsNameTheOp: MatMul's and Stack's errors name them, not
// the ops they are built on.
func TestShapeErrorsNameTheOp(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Zeros(dev, nd.Float32, 2, 3)
	for _, c := range []struct {
		op string
		f  func()
	}{
		{"nd.MatMul", func() { nd.MatMul(x, x) }},
		{"nd.Stack", func() { nd.Stack([]*nd.NDArray{x, x}, 3) }},
		{"nd.Stack", func() { nd.Stack([]*nd.NDArray{x, x}, -4) }},
	} {
		err := nd.Catch(c.f)
		if err == nil || !strings.HasPrefix(err.Error(), c.op+":") {
			t.Errorf("got %v, want an error from %s", err, c.op)
		}
	}
	if got := nd.Stack([]*nd.NDArray{x, x}, -3).Shape(); !slices.Equal(got, []int{2, 2, 3}) {
		t.Errorf("Stack at -3: %v", got)
	}
}

package nd_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// catchAny runs f and returns what it panicked with as an error: the
// *nd.Error itself, or a description of any other panic (a Go runtime
// error means a missing check).
func catchAny(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*nd.Error); ok {
				err = e
				return
			}
			err = fmt.Errorf("non-nd panic: %v", r)
		}
	}()
	f()
	return nil
}

// sameFloats reports whether got and want hold the same values, NaN
// matching NaN.
func sameFloats(got, want []float64) bool {
	return slices.EqualFunc(got, want, func(a, b float64) bool {
		return a == b || math.IsNaN(a) && math.IsNaN(b)
	})
}

// TestZeroSizeForward checks the shape ops and reductions on arrays with a
// zero-size axis against PyTorch: shapes and (NaN or −∞ for reductions
// over no elements) values, and no Go runtime panic.
func TestZeroSizeForward(t *testing.T) {
	dev := ctx.CPU(0)
	z := func(shape ...int) *nd.NDArray { return nd.Zeros(dev, nd.Float32, shape...) }
	r23 := func() *nd.NDArray { return nd.FromSlice(dev, []float32{1, 2, 3, 4, 5, 6}, 2, 3) }
	one := func(a *nd.NDArray) []*nd.NDArray { return []*nd.NDArray{a} }
	nan, ninf := math.NaN(), math.Inf(-1)
	cases := []struct {
		name   string
		f      func() []*nd.NDArray
		shapes [][]int
		vals   [][]float64 // nil: only the shapes are checked
	}{
		{"Concat/axis1", func() []*nd.NDArray { return one(nd.Concat([]*nd.NDArray{z(0, 2), z(0, 2)}, 1)) }, [][]int{{0, 4}}, nil},
		{"Concat/axis-neg1", func() []*nd.NDArray { return one(nd.Concat([]*nd.NDArray{z(0, 2), z(0, 3)}, -1)) }, [][]int{{0, 5}}, nil},
		{"Concat/3-D-axis2", func() []*nd.NDArray { return one(nd.Concat([]*nd.NDArray{z(2, 0, 1), z(2, 0, 2)}, 2)) }, [][]int{{2, 0, 3}}, nil},
		{"Concat/empty-first", func() []*nd.NDArray { return one(nd.Concat([]*nd.NDArray{z(2, 0), r23()}, 1)) },
			[][]int{{2, 3}}, [][]float64{{1, 2, 3, 4, 5, 6}}},
		{"Concat/empty-last", func() []*nd.NDArray { return one(nd.Concat([]*nd.NDArray{r23(), z(2, 0)}, 1)) },
			[][]int{{2, 3}}, [][]float64{{1, 2, 3, 4, 5, 6}}},
		{"Stack/axis1", func() []*nd.NDArray { return one(nd.Stack([]*nd.NDArray{z(0, 2), z(0, 2)}, 1)) }, [][]int{{0, 2, 2}}, nil},
		{"Stack/axis2", func() []*nd.NDArray { return one(nd.Stack([]*nd.NDArray{z(0, 2), z(0, 2)}, 2)) }, [][]int{{0, 2, 2}}, nil},
		{"SliceAxis/empty-input", func() []*nd.NDArray { return one(nd.SliceAxis(z(0, 4), 2, 4, 1)) }, [][]int{{0, 2}}, nil},
		{"SliceAxis/empty-range-at-end", func() []*nd.NDArray { return one(nd.SliceAxis(r23(), 3, 3, 1)) }, [][]int{{2, 0}}, nil},
		{"Split/axis1", func() []*nd.NDArray { return nd.Split(z(0, 4), 2, 1) }, [][]int{{0, 2}, {0, 2}}, nil},
		{"Split/3-D-axis2", func() []*nd.NDArray { return nd.Split(z(2, 0, 3), 3, 2) }, [][]int{{2, 0, 1}, {2, 0, 1}, {2, 0, 1}}, nil},
		{"Pick/empty-index", func() []*nd.NDArray {
			return one(nd.Pick(z(0, 3), nd.FromSlice(dev, []int64{}, 0), 1))
		}, [][]int{{0}}, nil},
		{"Flatten/zero-batch", func() []*nd.NDArray { return one(nd.Flatten(z(0, 3, 4, 4))) }, [][]int{{0, 48}}, nil},
		{"Flatten/zero-inner", func() []*nd.NDArray { return one(nd.Flatten(z(2, 0, 4))) }, [][]int{{2, 0}}, nil},
		{"Reshape/infer-with-zero-batch", func() []*nd.NDArray { return one(nd.Reshape(z(0, 3, 4), -1, 12)) }, [][]int{{0, 12}}, nil},
		{"Var/axis0", func() []*nd.NDArray { return one(nd.Var(z(3, 0), 0, 0)) }, [][]int{{0}}, nil},
		{"Var/ddof1", func() []*nd.NDArray { return one(nd.Var(z(3, 0), 1, 0)) }, [][]int{{0}}, nil},
		{"VarKeepDims/axis0", func() []*nd.NDArray { return one(nd.VarKeepDims(z(3, 0), 0, 0)) }, [][]int{{1, 0}}, nil},
		{"Var/empty-result", func() []*nd.NDArray { return one(nd.Var(z(0, 0), 0, 1)) }, [][]int{{0}}, nil},
		{"Std/axis0", func() []*nd.NDArray { return one(nd.Std(z(3, 0), 0, 0)) }, [][]int{{0}}, nil},
		{"StdKeepDims/axis0", func() []*nd.NDArray { return one(nd.StdKeepDims(z(3, 0), 1, 0)) }, [][]int{{1, 0}}, nil},
		{"Mean/all", func() []*nd.NDArray { return one(nd.Mean(z(0))) }, [][]int{{}}, [][]float64{{nan}}},
		{"Mean/axis1", func() []*nd.NDArray { return one(nd.Mean(z(3, 0), 1)) }, [][]int{{3}}, [][]float64{{nan, nan, nan}}},
		{"Mean/axis0", func() []*nd.NDArray { return one(nd.Mean(z(0, 2), 0)) }, [][]int{{2}}, [][]float64{{nan, nan}}},
		{"Mean/empty-result", func() []*nd.NDArray { return one(nd.Mean(z(3, 0), 0)) }, [][]int{{0}}, nil},
		{"MeanKeepDims/axis1", func() []*nd.NDArray { return one(nd.MeanKeepDims(z(3, 0), 1)) }, [][]int{{3, 1}}, [][]float64{{nan, nan, nan}}},
		{"Mean/float16", func() []*nd.NDArray { return one(nd.Mean(nd.Zeros(dev, nd.Float16, 2, 0), 1)) }, [][]int{{2}}, [][]float64{{nan, nan}}},
		{"LogSumExp/axis1", func() []*nd.NDArray { return one(nd.LogSumExp(z(3, 0), 1)) }, [][]int{{3}}, [][]float64{{ninf, ninf, ninf}}},
		{"LogSumExp/all", func() []*nd.NDArray { return one(nd.LogSumExp(z(3, 0))) }, [][]int{{}}, [][]float64{{ninf}}},
		{"LogSumExpKeepDims/axis1", func() []*nd.NDArray { return one(nd.LogSumExpKeepDims(z(3, 0), 1)) }, [][]int{{3, 1}}, [][]float64{{ninf, ninf, ninf}}},
		{"LogSumExp/empty-result", func() []*nd.NDArray { return one(nd.LogSumExp(z(0, 3), 1)) }, [][]int{{0}}, nil},
		{"LogSumExp/float64", func() []*nd.NDArray { return one(nd.LogSumExp(nd.Zeros(dev, nd.Float64, 2, 0), -1)) }, [][]int{{2}}, [][]float64{{ninf, ninf}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var outs []*nd.NDArray
			if err := catchAny(func() { outs = c.f() }); err != nil {
				t.Fatal(err)
			}
			if len(outs) != len(c.shapes) {
				t.Fatalf("%d outputs, want %d", len(outs), len(c.shapes))
			}
			for i, o := range outs {
				if !slices.Equal(o.Shape(), c.shapes[i]) {
					t.Errorf("output %d: shape %v, want %v", i, o.Shape(), c.shapes[i])
					continue
				}
				if c.vals != nil {
					if got := o.Float64s(); !sameFloats(got, c.vals[i]) {
						t.Errorf("output %d: values %v, want %v", i, got, c.vals[i])
					}
				}
			}
		})
	}
}

// TestZeroSizeGrad runs the numerical gradient check (float64) of the
// same ops with inputs that have a zero-size axis: the backward pass must
// not panic and must give every input a gradient of its shape.
func TestZeroSizeGrad(t *testing.T) {
	dev := ctx.CPU(0)
	in := func(shapes ...[]int) []*nd.NDArray {
		var out []*nd.NDArray
		for i, s := range shapes {
			out = append(out, ndtest.Rand(dev, uint64(70+i), -1, 1, s...))
		}
		return out
	}
	sum := func(outs []*nd.NDArray) *nd.NDArray {
		y := outs[0]
		for _, o := range outs[1:] {
			y = nd.Add(y, o)
		}
		return y
	}
	cases := []struct {
		name   string
		shapes [][]int
		f      func(in []*nd.NDArray) *nd.NDArray
	}{
		{"Concat/axis1", [][]int{{0, 2}, {0, 2}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Concat(in, 1) }},
		{"Concat/empty-first", [][]int{{2, 0}, {2, 3}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Concat(in, 1) }},
		{"Concat/empty-last", [][]int{{2, 3}, {2, 0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Concat(in, 1) }},
		{"Concat/empty-middle-axis2", [][]int{{2, 2, 1}, {2, 2, 0}, {2, 2, 2}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Concat(in, 2) }},
		{"Stack/axis1", [][]int{{0, 2}, {0, 2}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Stack(in, 1) }},
		{"SliceAxis/empty-input", [][]int{{0, 4}}, func(in []*nd.NDArray) *nd.NDArray { return nd.SliceAxis(in[0], 2, 4, 1) }},
		{"SliceAxis/empty-range-at-end", [][]int{{2, 3}}, func(in []*nd.NDArray) *nd.NDArray { return nd.SliceAxis(in[0], 3, 3, 1) }},
		{"Split/axis1", [][]int{{0, 4}}, func(in []*nd.NDArray) *nd.NDArray { return sum(nd.Split(in[0], 2, 1)) }},
		{"Flatten/zero-batch", [][]int{{0, 3, 2, 2}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Flatten(in[0]) }},
		{"Pick/empty-index", [][]int{{0, 3}}, func(in []*nd.NDArray) *nd.NDArray {
			return nd.Pick(in[0], nd.FromSlice(dev, []int64{}, 0), 1)
		}},
		{"Var/axis0", [][]int{{3, 0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Var(in[0], 0, 0) }},
		{"Std/axis0", [][]int{{3, 0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Std(in[0], 1, 0) }},
		{"Mean/all", [][]int{{0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Mean(in[0]) }},
		{"Mean/axis1", [][]int{{3, 0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.Mean(in[0], 1) }},
		{"LogSumExp/axis1", [][]int{{3, 0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.LogSumExp(in[0], 1) }},
		{"LogSumExpKeepDims/all", [][]int{{3, 0}}, func(in []*nd.NDArray) *nd.NDArray { return nd.LogSumExpKeepDims(in[0]) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inputs := in(c.shapes...)
			if err := catchAny(func() { ndtest.CheckGrad(t, c.f, inputs, ndtest.GradTol{}) }); err != nil {
				t.Fatal(err)
			}
			for i, x := range inputs {
				if g := x.Grad(); g == nil || !slices.Equal(g.Shape(), x.Shape()) {
					t.Errorf("input %d %v: gradient %v", i, x.Shape(), g)
				}
			}
		})
	}
}

// TestZeroSizeErrors: ops that cannot give a result on an empty axis fail
// with an *nd.Error naming the op, not a Go runtime panic.
func TestZeroSizeErrors(t *testing.T) {
	dev := ctx.CPU(0)
	idx := nd.FromSlice(dev, []int64{0, 0}, 2)
	cases := []struct {
		name string
		want []string
		call func()
	}{
		{"Pick", []string{"nd.Pick:", "empty axis 1", "[2 0]"}, func() { nd.Pick(nd.Zeros(dev, nd.Float32, 2, 0), idx, 1) }},
		{"Pick/float64", []string{"nd.Pick:", "empty axis"}, func() { nd.Pick(nd.Zeros(dev, nd.Float64, 0, 2), idx, 0) }},
		{"SoftmaxCrossEntropy", []string{"nd.SoftmaxCrossEntropy:", "empty axis"}, func() {
			nd.SoftmaxCrossEntropy(nd.Zeros(dev, nd.Float32, 2, 0), idx, 1)
		}},
		{"Var/no-elements-per-result", []string{"nd.Var:", "0 elements"}, func() { nd.Var(nd.Zeros(dev, nd.Float32, 3, 0), 0, 1) }},
		{"Reshape/ambiguous-infer", []string{"nd.Reshape:", "[0 3 4 4]", "[0 -1]", "could be any size"}, func() { nd.Reshape(nd.Zeros(dev, nd.Float32, 0, 3, 4, 4), 0, -1) }},
		{"Reshape/infer-beside-zero", []string{"nd.Reshape:", "cannot reshape [2 3] into [0 -1]"}, func() { nd.Reshape(nd.Zeros(dev, nd.Float32, 2, 3), 0, -1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := catchAny(c.call)
			var e *nd.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *nd.Error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Error(), w) {
					t.Errorf("error %q does not contain %q", e.Error(), w)
				}
			}
		})
	}
}

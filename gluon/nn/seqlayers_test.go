package nn_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestSeqLayersMultiContext runs each new layer on cpu(0) and cpu(1) from
// the same parameters: the outputs and the parameter gradients agree bit
// for bit, and every replica lives on its context.
func TestSeqLayersMultiContext(t *testing.T) {
	devs := []ctx.Context{cpu0, cpu1}
	for _, tc := range []struct {
		name  string
		block func() gluon.Block
		in    []int
	}{
		{"LeakyReLU", func() gluon.Block { return nn.NewLeakyReLU(0.2) }, []int{3, 4}},
		{"PReLU", func() gluon.Block { return nn.NewPReLU(3) }, []int{2, 3, 4}},
		{"ELU", func() gluon.Block { return nn.NewELU(0.7) }, []int{3, 4}},
		{"GELU", func() gluon.Block { return nn.NewGELU(false) }, []int{3, 4}},
		{"SiLU", func() gluon.Block { return nn.NewSiLU() }, []int{3, 4}},
		{"LayerNorm", func() gluon.Block { return nn.NewLayerNorm(-1, nn.NormOpts{}) }, []int{2, 3, 5}},
		{"GroupNorm", func() gluon.Block { return nn.NewGroupNorm(2, nn.NormOpts{}) }, []int{2, 4, 3}},
		{"InstanceNorm", func() gluon.Block { return nn.NewInstanceNorm(nn.NormOpts{}) }, []int{2, 3, 2, 2}},
		{"Conv1D", func() gluon.Block { return nn.NewConv1D(4, 3, nn.Conv1DOpts{Pad: 1}) }, []int{2, 3, 6}},
		{"Conv2DTranspose", func() gluon.Block {
			return nn.NewConv2DTranspose(2, 3, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}})
		}, []int{2, 3, 3, 3}},
		{"Dense-LayerNorm-GELU", func() gluon.Block {
			return nn.NewSequential(nn.NewDense(6, nn.DenseOpts{}), nn.NewLayerNorm(-1, nn.NormOpts{}), nn.NewGELU(true))
		}, []int{4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.block()
			params := initNet(t, b, initializer.Xavier{}, nd.Float32, devs...)
			x0 := randX(cpu0, 31, tc.in...)
			x1 := x0.CopyTo(cpu1)
			x0.AttachGrad(nd.GradWrite)
			x1.AttachGrad(nd.GradWrite)
			var y [2]*nd.NDArray
			autograd.Record(func() {
				for i, x := range []*nd.NDArray{x0, x1} {
					y[i] = b.Forward(x)
					autograd.Backward(nd.Sum(nd.Square(y[i])))
				}
			})
			if y[0].Context() != cpu0 || y[1].Context() != cpu1 {
				t.Fatalf("outputs on %v and %v", y[0].Context(), y[1].Context())
			}
			allClose(t, "cpu(1) output vs cpu(0)", y[1], y[0], 0, 0)
			allClose(t, "cpu(1) input gradient vs cpu(0)", x1.Grad(), x0.Grad(), 0, 0)
			for _, p := range params.List() {
				g := p.ListGrad()
				if len(g) != 2 || g[0].Context() != cpu0 || g[1].Context() != cpu1 {
					t.Fatalf("%s: gradients %v", p.Name(), g)
				}
				if !slices.Equal(g[0].Float32s(), g[1].Float32s()) {
					t.Errorf("%s: gradients differ between contexts", p.Name())
				}
			}
		})
	}
}

// TestEmbedding checks the lookup, the scatter-add gradient with repeated
// indices, every index dtype, and the errors.
func TestEmbedding(t *testing.T) {
	e := nn.NewEmbedding(5, 3)
	initNet(t, e, initializer.Xavier{}, nd.Float32, cpu0)
	w := e.Weight.Data(cpu0).Float32s()
	for _, dt := range []nd.DType{nd.Int64, nd.Int32, nd.Uint8} {
		idx := nd.FromSlice(cpu0, []int64{4, 0, 4, 2}, 2, 2).AsType(dt)
		var y *nd.NDArray
		autograd.Record(func() {
			y = e.Forward(idx)
			autograd.Backward(nd.Sum(y))
		})
		if !slices.Equal(y.Shape(), []int{2, 2, 3}) {
			t.Fatalf("%v: shape %v", dt, y.Shape())
		}
		got := y.Float32s()
		for i, r := range []int{4, 0, 4, 2} {
			if !slices.Equal(got[3*i:3*i+3], w[3*r:3*r+3]) {
				t.Errorf("%v: row %d is %v, want weight row %d %v", dt, i, got[3*i:3*i+3], r, w[3*r:3*r+3])
			}
		}
		want := []float32{1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 2, 2, 2} // row 4 used twice
		if g := e.Weight.Grad(cpu0).Float32s(); !slices.Equal(g, want) {
			t.Errorf("%v: weight gradient %v, want %v", dt, g, want)
		}
	}
	for _, tc := range []struct {
		name string
		x    *nd.NDArray
		want string
	}{
		{"float indices", nd.Ones(cpu0, nd.Float32, 2), "indices must be an integer array"},
		{"index too large", nd.FromSlice(cpu0, []int64{1, 5}), "index 5 outside [0, 5)"},
		{"negative index", nd.FromSlice(cpu0, []int64{-1, 2}), "index -1 outside [0, 5)"},
	} {
		err := nd.Catch(func() { e.Forward(tc.x) })
		var ne *nd.Error
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

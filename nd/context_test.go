package nd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// mixCase calls one op with its inputs spread over two contexts.
type mixCase struct {
	op   string // the op name the error must contain
	call func(a, b *nd.NDArray)
}

// Inputs: a on the first context, b on the second; each case builds what
// its op needs from them (same shapes where the op needs equal shapes).
var mixCases = []mixCase{
	{"Add", func(a, b *nd.NDArray) { nd.Add(a, b) }},
	{"Sub", func(a, b *nd.NDArray) { nd.Sub(a, b) }},
	{"Mul", func(a, b *nd.NDArray) { nd.Mul(a, b) }},
	{"Div", func(a, b *nd.NDArray) { nd.Div(a, b) }},
	{"Pow", func(a, b *nd.NDArray) { nd.Pow(a, b) }},
	{"Maximum", func(a, b *nd.NDArray) { nd.Maximum(a, b) }},
	{"Minimum", func(a, b *nd.NDArray) { nd.Minimum(a, b) }},
	{"Equal", func(a, b *nd.NDArray) { nd.Equal(a, b) }},
	{"NotEqual", func(a, b *nd.NDArray) { nd.NotEqual(a, b) }},
	{"Greater", func(a, b *nd.NDArray) { nd.Greater(a, b) }},
	{"GreaterEqual", func(a, b *nd.NDArray) { nd.GreaterEqual(a, b) }},
	{"Less", func(a, b *nd.NDArray) { nd.Less(a, b) }},
	{"LessEqual", func(a, b *nd.NDArray) { nd.LessEqual(a, b) }},
	{"Dot", func(a, b *nd.NDArray) { nd.MatMul(a, b) }},
	{"Dot", func(a, b *nd.NDArray) { nd.Dot(a, b, true, false) }},
	{"FullyConnected", func(a, b *nd.NDArray) { nd.FullyConnected(a, b, nil) }},
	{"FullyConnected", func(a, b *nd.NDArray) {
		nd.FullyConnected(a, a, nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4))
	}},
	{"Concat", func(a, b *nd.NDArray) { nd.Concat([]*nd.NDArray{a, b}, 0) }},
	{"Stack", func(a, b *nd.NDArray) { nd.Stack([]*nd.NDArray{a, b}, 0) }},
	{"Pick", func(a, b *nd.NDArray) { nd.Pick(a, nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4), 1) }},
	{"Conv2D", func(a, b *nd.NDArray) {
		nd.Conv2D(nd.Reshape(a, 1, 1, 4, 4), nd.Reshape(b, 1, 1, 4, 4), nil, nd.ConvOpts{})
	}},
	{"Conv2D", func(a, b *nd.NDArray) {
		x := nd.Reshape(a, 1, 1, 4, 4)
		nd.Conv2D(x, x, nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4), nd.ConvOpts{})
	}},
	{"Conv1D", func(a, b *nd.NDArray) {
		nd.Conv1D(nd.Reshape(a, 1, 1, 16), nd.Reshape(b, 1, 1, 16), nil, nd.Conv1DOpts{})
	}},
	{"Conv1D", func(a, b *nd.NDArray) {
		x := nd.Reshape(a, 1, 1, 16)
		nd.Conv1D(x, nd.Reshape(nd.SliceAxis(a, 0, 1, 1), 1, 1, 4), nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4), nd.Conv1DOpts{})
	}},
	{"Conv2DTranspose", func(a, b *nd.NDArray) {
		nd.Conv2DTranspose(nd.Reshape(a, 1, 1, 4, 4), nd.Reshape(b, 1, 1, 4, 4), nil, nd.ConvTransposeOpts{})
	}},
	{"BatchNorm", func(a, b *nd.NDArray) {
		c := nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4)
		nd.BatchNorm(a, nil, nil, c, c, nd.BatchNormOpts{})
	}},
	{"BatchNorm", func(a, b *nd.NDArray) {
		ca := nd.Reshape(nd.SliceAxis(a, 0, 1, 1), 4)
		cb := nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4)
		nd.BatchNorm(a, cb, nil, ca, ca, nd.BatchNormOpts{})
	}},
	{"Take", func(a, b *nd.NDArray) { nd.Take(a, b.AsType(nd.Int64), 0, nd.TakeClip) }},
	{"Gather", func(a, b *nd.NDArray) { nd.Gather(a, b.AsType(nd.Int64), 1) }},
	{"ScatterAdd", func(a, b *nd.NDArray) { nd.ScatterAdd(a, a.AsType(nd.Int64), b, 1) }},
	{"IndexAdd", func(a, b *nd.NDArray) { nd.IndexAdd(a, nd.Reshape(b.AsType(nd.Int64), 16), a, 0) }},
	{"Where", func(a, b *nd.NDArray) { nd.Where(nd.Greater(b, b), a, a) }},
	{"Where", func(a, b *nd.NDArray) { nd.Where(nd.Greater(a, a), a, b) }},
	{"MaskedFill", func(a, b *nd.NDArray) { nd.MaskedFill(a, nd.Greater(b, b), 0) }},
	{"LogicalAnd", func(a, b *nd.NDArray) { nd.LogicalAnd(a, b) }},
	{"PReLU", func(a, b *nd.NDArray) { nd.PReLU(a, nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4), 0) }},
	{"LayerNorm", func(a, b *nd.NDArray) { nd.LayerNorm(a, nd.Reshape(nd.SliceAxis(b, 0, 1, 0), 4), nil, -1, 1e-5) }},
	{"GroupNorm", func(a, b *nd.NDArray) { nd.GroupNorm(a, nil, nd.Reshape(nd.SliceAxis(b, 0, 1, 1), 4), 2, 1e-5) }},
	{"AddTo", func(a, b *nd.NDArray) { nd.AddTo(a, b) }},
	{"Backward", func(a, b *nd.NDArray) {
		a.AttachGrad(nd.GradWrite)
		autograd.Record(func() {
			y := nd.MulScalar(a, 2)
			nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{b}, false)
		})
	}},
}

// TestContextMismatch checks, for every op family that takes several
// arrays, that inputs on different contexts fail before any work with an
// error naming the op and both contexts. cpu(0) vs cpu(1) counts.
func TestContextMismatch(t *testing.T) {
	pairs := [][2]ctx.Context{{ctx.CPU(0), ctx.CPU(1)}, {ctx.CPU(2), ctx.CPU(0)}}
	for _, pair := range pairs {
		for _, c := range mixCases {
			t.Run(c.op+"/"+pair[0].String()+"-"+pair[1].String(), func(t *testing.T) {
				a := nd.RandomUniform(pair[0], nd.Float32, 0.5, 1, 4, 4)
				b := nd.RandomUniform(pair[1], nd.Float32, 0.5, 1, 4, 4)
				err := nd.Catch(func() { c.call(a, b) })
				var e *nd.Error
				if !errors.As(err, &e) || e.Kind != nd.ErrContext {
					t.Fatalf("got %v, want a context-mismatch *nd.Error", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "nd."+c.op+":") || !strings.Contains(msg, pair[0].String()) || !strings.Contains(msg, pair[1].String()) {
					t.Errorf("error %q should name nd.%s, %v and %v", msg, c.op, pair[0], pair[1])
				}
				if !errors.Is(err, &nd.Error{Kind: nd.ErrContext}) {
					t.Errorf("errors.Is does not match the kind")
				}
			})
		}
	}
}

// TestContextMismatchAllocatesNothing checks that the error is raised up
// front: no output is allocated on either context.
func TestContextMismatchAllocatesNothing(t *testing.T) {
	a := nd.Ones(ctx.CPU(5), nd.Float32, 8, 8)
	b := nd.Ones(ctx.CPU(6), nd.Float32, 8, 8)
	ops := map[string]func(){
		"Add":    func() { nd.Add(a, b) },
		"MatMul": func() { nd.MatMul(a, b) },
		"Concat": func() { nd.Concat([]*nd.NDArray{a, b}, 1) },
		"Conv2D": func() { nd.Conv2D(nd.Reshape(a, 1, 1, 8, 8), nd.Reshape(b, 1, 1, 8, 8), nil, nd.ConvOpts{}) },
	}
	for name, f := range ops {
		s0, s1 := nd.MemoryStats(ctx.CPU(5)).Allocs, nd.MemoryStats(ctx.CPU(6)).Allocs
		if err := nd.Catch(f); err == nil {
			t.Fatalf("%s: no error", name)
		}
		if d0, d1 := nd.MemoryStats(ctx.CPU(5)).Allocs-s0, nd.MemoryStats(ctx.CPU(6)).Allocs-s1; d0 != 0 || d1 != 0 {
			t.Errorf("%s allocated %d and %d buffers before failing", name, d0, d1)
		}
	}
}

// TestCopyMakesMixingLegal shows the fix the error message suggests.
func TestCopyMakesMixingLegal(t *testing.T) {
	a := nd.Ones(ctx.CPU(0), nd.Float32, 2, 2)
	b := nd.Ones(ctx.CPU(1), nd.Float32, 2, 2)
	s := nd.Add(a, b.AsIn(ctx.CPU(0)))
	if s.Context() != ctx.CPU(0) || s.Float32s()[3] != 2 {
		t.Fatalf("got %v", s)
	}
	if b.AsIn(ctx.CPU(1)) != b {
		t.Error("AsIn to the array's own context must not copy")
	}
}

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// TestBinaryFlat checks Binary's allocation-free path for operands that
// coalesce to one row against the general strided path (binary over
// Coalesce), bit for bit, and that it declines the others.
func TestBinaryFlat(t *testing.T) {
	be := New()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name   string
		shape  []int
		as, bs []int // nil: contiguous
		flat   bool
	}{
		{"contiguous", []int{3, 70}, nil, nil, true},
		{"bias at batch 1", []int{1, 10}, nil, []int{0, 1}, true},
		{"scalar right", []int{4, 5}, nil, []int{0, 0}, true},
		{"scalar left", []int{33}, []int{0}, nil, true},
		{"unit dims", []int{1, 7, 1, 3}, []int{0, 3, 0, 1}, []int{21, 3, 3, 1}, true},
		{"empty", []int{0, 5}, nil, nil, true},
		{"empty broadcast", []int{0, 5}, nil, []int{0, 1}, false},
		{"one element", []int{1, 1}, []int{0, 0}, nil, false}, // the general path's scalar loop
		{"scalar shape", []int{}, nil, nil, false},
		{"two elements", []int{1, 2}, nil, []int{0, 0}, true},
		{"both scalars", []int{6}, []int{0}, []int{0}, false},
		{"row broadcast", []int{3, 10}, nil, []int{0, 1}, false},
		{"transposed", []int{4, 6}, []int{1, 4}, nil, false},
	}
	ops := []backend.BinaryOp{backend.Add, backend.Sub, backend.Mul, backend.Div, backend.Maximum, backend.ReluGrad, backend.Pow}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, c := range cases {
			n := 1
			for _, d := range c.shape {
				n *= d
			}
			mk := func(m int) backend.Arg {
				return newArg(t, be, dt, max(m, 1), func(i int) float64 {
					if v := rng.NormFloat64(); i%7 != 3 {
						return v
					}
					return math.NaN()
				})
			}
			span := func(st []int) int { // elements an operand reads
				if st == nil {
					return n
				}
				m := 1
				for d, s := range st {
					m += (c.shape[d] - 1) * s
				}
				return m
			}
			a, b := mk(span(c.as)), mk(span(c.bs))
			a.Strides, b.Strides = c.as, c.bs
			for _, op := range ops {
				got, want := mk(n), mk(n)
				if ok := binaryFlat(op, c.shape, got, a, b); ok != c.flat {
					t.Fatalf("%v %s: binaryFlat = %v, want %v", dt, c.name, ok, c.flat)
				}
				if !c.flat {
					continue
				}
				as, bs := c.as, c.bs
				if as == nil {
					as = backend.ContiguousStrides(c.shape)
				}
				if bs == nil {
					bs = backend.ContiguousStrides(c.shape)
				}
				sh, st := backend.Coalesce(c.shape, backend.ContiguousStrides(c.shape), as, bs)
				if dt == backend.Float32 {
					binary(op, sh, st, slice[float32](want), slice[float32](a), slice[float32](b))
				} else {
					binary(op, sh, st, slice[float64](want), slice[float64](a), slice[float64](b))
				}
				for i := range n {
					if g, w := argBits(got, i), argBits(want, i); g != w {
						t.Fatalf("%v %s op %v: element %d is %#x, general path %#x", dt, c.name, op, i, g, w)
					}
				}
			}
		}
	}
}

// TestBinaryOneElement checks that Binary on one element keeps the
// general path's scalar loop, whose ReluGrad passes a NaN or negative
// upstream value's sign (b·[a > 0]) where the vector kernels write +0.
func TestBinaryOneElement(t *testing.T) {
	be := New()
	for _, shape := range [][]int{{}, {1}, {1, 1}} {
		for _, c := range []struct{ a, b, want float32 }{
			{-1, -2, float32(math.Copysign(0, -1))},
			{-1, float32(math.NaN()), float32(math.NaN())},
			{2, -3, -3},
		} {
			arg := func(v float32) backend.Arg {
				return newArg(t, be, backend.Float32, 1, func(int) float64 { return float64(v) })
			}
			d := arg(7)
			be.Binary(backend.ReluGrad, shape, d, arg(c.a), arg(c.b))
			if got := slice[float32](d)[0]; math.Float32bits(got) != math.Float32bits(c.want) && !(got != got && c.want != c.want) {
				t.Errorf("shape %v ReluGrad(%v, %v) = %v, want %v", shape, c.a, c.b, got, c.want)
			}
		}
	}
}

// argBits returns the bits of element i of a float32 or float64 operand.
func argBits(a backend.Arg, i int) uint64 {
	if a.Buf.DType() == backend.Float32 {
		return uint64(math.Float32bits(slice[float32](a)[i]))
	}
	return math.Float64bits(slice[float64](a)[i])
}

// newArg allocates n values of dt on cpu(0), value i being f(i) (rounded
// to float32 for Float32).
func newArg(t *testing.T, be *Backend, dt backend.DType, n int, f func(i int) float64) backend.Arg {
	t.Helper()
	buf, err := be.Alloc(ctx.CPU(0), dt, max(n, 1))
	if err != nil {
		t.Fatal(err)
	}
	a := backend.Arg{Buf: buf}
	for i := range n {
		if dt == backend.Float32 {
			slice[float32](a)[i] = float32(f(i))
		} else {
			slice[float64](a)[i] = f(i)
		}
	}
	return a
}

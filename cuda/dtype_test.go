//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// The tests of this file and dtype_ops_test.go run every kernel of every
// dtype on gpu(0) and on the CPU backend (the reference semantics) with
// the same operands, calling the backends directly, and compare the
// results bit for bit (any NaN equals any NaN; a few transcendental float
// functions get a tolerance, as C's and Go's math libraries differ in the
// last bit).

// twin is one operand allocated on both backends.
type twin struct {
	dt   backend.DType
	n    int
	c, g backend.Buffer
}

// rig holds the two backends under comparison.
type rig struct {
	t          *testing.T
	cdev, gdev ctx.Context
	cpu, gpu   backend.Backend
	bufs       []twin
}

func newRig(t *testing.T) *rig {
	t.Helper()
	needGPUs(t, 1)
	_ = nd.Float32 // nd registers the CPU backend
	r := &rig{t: t, cdev: ctx.CPU(0), gdev: ctx.GPU(0)}
	r.cpu, r.gpu = backend.For(r.cdev), backend.For(r.gdev)
	if r.cpu == nil || r.gpu == nil {
		t.Fatal("backends not registered")
	}
	t.Cleanup(func() {
		for _, b := range r.bufs {
			r.cpu.Free(r.cdev, b.c)
			r.gpu.Free(r.gdev, b.g)
		}
	})
	return r
}

// alloc returns an operand of n elements of dt, filled with the same
// bytes on both backends (so that kernels which read their destination,
// or fail to write it, are compared too).
func (r *rig) alloc(dt backend.DType, n int) twin {
	r.t.Helper()
	c, err := r.cpu.Alloc(r.cdev, dt, n)
	if err != nil {
		r.t.Fatal(err)
	}
	g, err := r.gpu.Alloc(r.gdev, dt, n)
	if err != nil {
		r.t.Fatal(err)
	}
	tw := twin{dt: dt, n: n, c: c, g: g}
	r.bufs = append(r.bufs, tw)
	junk := make([]uint8, n)
	for i := range junk {
		junk[i] = uint8(i*37 + 11)
	}
	r.write(tw, 0, junk)
	return tw
}

// from returns an operand of dt holding host (converted as Write converts).
func (r *rig) from(dt backend.DType, host any) twin {
	_, n, _ := backend.HostDType(host)
	tw := r.alloc(dt, n)
	r.write(tw, 0, host)
	return tw
}

func (r *rig) write(tw twin, off int, host any) {
	r.cpu.Write(tw.c, off, host)
	r.gpu.Write(tw.g, off, host)
}

// args returns tw as kernel operands on the CPU and the GPU.
func (tw twin) args(off int, strides []int) (backend.Arg, backend.Arg) {
	return backend.Arg{Buf: tw.c, Off: off, Strides: strides}, backend.Arg{Buf: tw.g, Off: off, Strides: strides}
}

// raw reads both copies of tw in its storage type.
func (r *rig) raw(tw twin) (c, g any) {
	c, g = storageSlice(tw.dt, tw.n), storageSlice(tw.dt, tw.n)
	r.cpu.Read(tw.c, 0, c)
	r.gpu.Sync(r.gdev)
	r.gpu.Read(tw.g, 0, g)
	return c, g
}

// same fails the test unless both copies of tw hold the same bits.
func (r *rig) same(name string, tw twin) {
	r.t.Helper()
	c, g := r.raw(tw)
	if i, ok := sameValues(c, g, 0); !ok {
		r.t.Errorf("%s: [%d] = %v on %v, %v on %v (%v)", name, i, elemAt(g, i), r.gdev, elemAt(c, i), r.cdev, tw.dt)
	}
}

// close is same with a relative tolerance for floats.
func (r *rig) close(name string, tw twin, tol float64) {
	r.t.Helper()
	c, g := r.raw(tw)
	if i, ok := sameValues(c, g, tol); !ok {
		r.t.Errorf("%s: [%d] = %v on %v, %v on %v (%v, tolerance %g)", name, i, elemAt(g, i), r.gdev, elemAt(c, i), r.cdev, tw.dt, tol)
	}
}

// sameValues compares two host slices of one type: bitwise, any NaN
// matching any NaN, floats within tol relative when tol > 0. It returns the
// first differing index.
func sameValues(want, got any, tol float64) (int, bool) {
	switch w := want.(type) {
	case []float32:
		return sameFloats(w, got.([]float32), tol)
	case []float64:
		return sameFloats(w, got.([]float64), tol)
	case []int32:
		return sameInts(w, got.([]int32))
	case []int64:
		return sameInts(w, got.([]int64))
	case []uint8:
		return sameInts(w, got.([]uint8))
	case []bool:
		return sameInts(w, got.([]bool))
	}
	panic(fmt.Sprintf("sameValues: %T", want))
}

func sameFloats[T float32 | float64](w, g []T, tol float64) (int, bool) {
	for i := range w {
		a, b := float64(w[i]), float64(g[i])
		switch {
		case a != a || b != b:
			if a == a || b == b {
				return i, false
			}
		case tol > 0:
			if a != b && math.Abs(a-b) > tol*math.Abs(a) {
				return i, false
			}
		case math.Float64bits(a) != math.Float64bits(b):
			return i, false
		}
	}
	return 0, true
}

func sameInts[T comparable](w, g []T) (int, bool) {
	for i := range w {
		if w[i] != g[i] {
			return i, false
		}
	}
	return 0, true
}

func elemAt(s any, i int) any {
	switch v := s.(type) {
	case []float32:
		return v[i]
	case []float64:
		return v[i]
	case []int32:
		return v[i]
	case []int64:
		return v[i]
	case []uint8:
		return v[i]
	case []bool:
		return v[i]
	}
	return nil
}

// specialFloats are float values that stress conversions: signed zeros,
// fractions, integer-type boundaries on both sides, huge values,
// infinities, NaN and a subnormal.
var specialFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.49, -0.49, 2.5, -2.5, 3.7, -3.7,
	127.9, 128, 200.5, 255, 255.5, 256, 300, -1, -128, -129, -200, 65537.75,
	2147483647, 2147483648, 2147483647.5, -2147483648, -2147483648.9, -2147483649, 3e9, -3e9,
	1 << 53, 1<<53 + 2, 9.2e18, 9223372036854775807, -9223372036854775808, 9.3e18, -9.3e18, 1e30, -1e30,
	math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 16777217}

// hostValues returns test values as a host slice of dt's Go type: the
// special values converted for floats, the integer types' own boundaries
// for integers.
func hostValues(dt backend.DType) any {
	switch dt {
	case backend.Float32:
		v := make([]float32, len(specialFloats))
		for i, f := range specialFloats {
			v[i] = float32(f)
		}
		return v
	case backend.Float64:
		return append([]float64(nil), specialFloats...)
	case backend.Int32:
		return []int32{0, 1, -1, 2, -2, 7, -7, 127, 128, 255, 256, -128, -129, 1000, -1000, 65537,
			16777217, -16777217, 123456789, math.MaxInt32, math.MinInt32, math.MaxInt32 - 1, math.MinInt32 + 1}
	case backend.Int64:
		return []int64{0, 1, -1, 2, -2, 7, -7, 127, 128, 255, 256, -128, -129, 1000, -1000, 65537,
			16777217, 1<<53 + 1, -(1<<53 + 1), 1 << 40, math.MaxInt32 + 1, math.MinInt32 - 1,
			math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1<<62 + 12345}
	case backend.Uint8:
		return []uint8{0, 1, 2, 3, 7, 100, 127, 128, 129, 200, 254, 255}
	}
	return []bool{false, true, true, false, false, true}
}

// randomValues returns n values of dt's Go type drawn from hostValues (and
// for integers also small numbers, so that ties and zeros are common).
func randomValues(dt backend.DType, n int, seed uint64) any {
	rng := rand.New(rand.NewPCG(seed, 1))
	pick := func(m int) int { return rng.IntN(m) }
	switch src := hostValues(dt).(type) {
	case []float32:
		return randomFrom(src, n, pick, func(i int) float32 { return float32(i - 3) })
	case []float64:
		return randomFrom(src, n, pick, func(i int) float64 { return float64(i - 3) })
	case []int32:
		return randomFrom(src, n, pick, func(i int) int32 { return int32(i - 3) })
	case []int64:
		return randomFrom(src, n, pick, func(i int) int64 { return int64(i - 3) })
	case []uint8:
		return randomFrom(src, n, pick, func(i int) uint8 { return uint8(i) })
	case []bool:
		return randomFrom(src, n, pick, func(i int) bool { return i%2 == 1 })
	}
	return nil
}

func randomFrom[T any](src []T, n int, pick func(int) int, small func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		if pick(2) == 0 {
			out[i] = small(pick(7))
		} else {
			out[i] = src[pick(len(src))]
		}
	}
	return out
}

// TestDTypeWriteRead writes every host type into a buffer of every dtype
// and reads it back as every host type: the conversions on both sides must
// match the CPU backend's.
func TestDTypeWriteRead(t *testing.T) {
	r := newRig(t)
	for _, bdt := range backend.DTypes {
		for _, hdt := range backend.DTypes {
			host := hostValues(hdt)
			_, n, _ := backend.HostDType(host)
			tw := r.alloc(bdt, n+3)
			r.write(tw, 2, host) // at an offset
			r.same(fmt.Sprintf("Write %v into %v", hdt, bdt), tw)
			for _, rdt := range backend.DTypes {
				c, g := storageHost(rdt, n+1), storageHost(rdt, n+1)
				r.cpu.Read(tw.c, 2, c)
				r.gpu.Read(tw.g, 2, g)
				if i, ok := sameValues(c, g, 0); !ok {
					t.Errorf("Write %v into %v, Read as %v: [%d] = %v on gpu, %v on cpu", hdt, bdt, rdt, i, elemAt(g, i), elemAt(c, i))
				}
			}
		}
	}
}

// storageHost returns a host slice of n elements of dt's Go type ([]bool
// for Bool).
func storageHost(dt backend.DType, n int) any {
	if dt == backend.Bool {
		return make([]bool, n)
	}
	return storageSlice(dt, n)
}

// TestDTypeFill fills every dtype with values that need conversion.
func TestDTypeFill(t *testing.T) {
	r := newRig(t)
	for _, dt := range backend.DTypes {
		for _, v := range specialFloats {
			tw := r.alloc(dt, 37)
			c, g := tw.args(3, nil)
			r.cpu.Fill(c, 30, v)
			r.gpu.Fill(g, 30, v)
			r.same(fmt.Sprintf("Fill %v with %v", dt, v), tw)
		}
	}
}

// TestDTypeCast casts between every pair of dtypes, the source holding
// NaN, infinities, out-of-range and negative values.
func TestDTypeCast(t *testing.T) {
	r := newRig(t)
	for _, sdt := range backend.DTypes {
		src := r.from(sdt, hostValues(sdt))
		for _, ddt := range backend.DTypes {
			n := src.n - 1
			dst := r.alloc(ddt, n+2)
			dc, dg := dst.args(2, nil)
			sc, sg := src.args(1, nil)
			r.cpu.Cast(dc, sc, n)
			r.gpu.Cast(dg, sg, n)
			r.same(fmt.Sprintf("Cast %v -> %v", sdt, ddt), dst)
		}
	}
}

// TestDTypeCopyStrided copies transposed, broadcast, reversed and sliced
// views of every dtype, into contiguous and strided destinations.
func TestDTypeCopyStrided(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		name       string
		shape      []int
		srcOff     int
		srcStrides []int
		dstOff     int
		dstStrides []int
		dstLen     int
	}{
		{"transpose", []int{6, 5, 4}, 0, []int{1, 6, 30}, 0, nil, 120},
		{"broadcast", []int{4, 5, 6}, 3, []int{0, 6, 1}, 0, nil, 120},
		{"reversed", []int{5, 6}, 29, []int{-6, -1}, 0, nil, 30},
		{"slice-steps", []int{3, 4}, 7, []int{20, 2}, 1, nil, 13},
		{"into-strided", []int{4, 5}, 0, nil, 0, []int{1, 4}, 20},
		{"contiguous", []int{7, 9}, 11, nil, 5, nil, 70},
		{"ten-dims", []int{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 0, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, 0, nil, 1024},
	}
	for _, dt := range backend.DTypes {
		src := r.from(dt, randomValues(dt, 1024, uint64(dt)))
		for _, c := range cases {
			dst := r.alloc(dt, c.dstLen)
			dc, dg := dst.args(c.dstOff, c.dstStrides)
			sc, sg := src.args(c.srcOff, c.srcStrides)
			r.cpu.Copy(c.shape, dc, sc)
			r.gpu.Copy(c.shape, dg, sg)
			r.same(fmt.Sprintf("Copy %v %s", dt, c.name), dst)
		}
	}
}

// TestDTypeNDOps runs a few whole nd ops on the CPU and on gpu(0): dtype
// conversions, comparisons into Bool, logical ops, integer arithmetic,
// ArgMax into Int64, integer sums, indexing with Int64 indices and a
// Where (whose kernels the CUDA backend borrows from the CPU).
func TestDTypeNDOps(t *testing.T) {
	needGPUs(t, 1)
	s := nd.NewScope()
	defer s.Close()
	vals := []float64{3, -1, 2.5, math.NaN(), 7, 7, -4, 0, 300, -2e9, 1, 2}
	run := func(dev ctx.Context) map[string]any {
		x := nd.FromSlice(dev, vals, 3, 4)
		xi := x.AsType(nd.Int32)
		yi := nd.FromSlice(dev, []int32{2, 0, -3, 5}, 4)
		idx := nd.FromSlice(dev, []int64{3, 0, 9}, 3)
		mask := nd.Greater(x, nd.FromSlice(dev, []float64{0, 1, 2, 3}, 4))
		out := map[string]any{
			"AsType(Int32)":     xi.Int32s(),
			"AsType(Uint8)":     x.AsType(nd.Uint8).Uint8s(),
			"AsType(Bool)":      x.AsType(nd.Bool).Bools(),
			"Greater":           mask.Bools(),
			"Equal(int)":        nd.Equal(xi, nd.FromSlice(dev, []int32{3, -1, 0, 0}, 4)).Bools(),
			"LogicalAnd":        nd.LogicalAnd(mask, x.AsType(nd.Bool)).Bools(),
			"LogicalNot":        nd.LogicalNot(mask).Bools(),
			"Div(int)":          nd.Div(xi, yi).Int32s(),
			"Sub(int)":          nd.Sub(xi, yi).Int32s(),
			"ArgMax":            nd.ArgMax(x, 1).Int64s(),
			"ArgMin(int)":       nd.ArgMin(xi, 0).Int64s(),
			"Sum(int)":          nd.Sum(xi, 1).Int64s(),
			"Max(int)":          nd.Max(xi).Int64s(),
			"Pick(int64)":       nd.Pick(x, idx, 1).Float64s(),
			"OneHot(int64)":     nd.OneHot(idx, 4, 1, 0).Float32s(),
			"Where":             nd.Where(mask, x, nd.ZerosLike(x).AsType(nd.Float64)).Float64s(),
			"Transpose(uint8)":  nd.Transpose(x.AsType(nd.Uint8), 1, 0).Uint8s(),
			"Neg(int)":          nd.Neg(xi).Int32s(),
			"AddScalar(uint8)":  nd.AddScalar(x.AsType(nd.Uint8), 100).Uint8s(),
			"ClipScalar(int64)": nd.Clip(x.AsType(nd.Int64), -3, 5).Int64s(),
		}
		return out
	}
	want, got := run(ctx.CPU(0)), run(ctx.GPU(0))
	for name, w := range want {
		if i, ok := sameValues(w, got[name], 0); !ok {
			t.Errorf("%s: [%d] = %v on gpu(0), %v on cpu(0)", name, i, elemAt(got[name], i), elemAt(w, i))
		}
	}
}

// TestDTypeBetweenContexts assigns arrays of every dtype on gpu(0) to
// arrays of every dtype on gpu(1) (or the CPU with one GPU), through the
// backend's cross-context Copy and Cast, and compares with AsType on the
// CPU.
func TestDTypeBetweenContexts(t *testing.T) {
	needGPUs(t, 1)
	other := ctx.CPU(0)
	if ctx.NumGPUs() >= 2 {
		other = ctx.GPU(1)
	}
	s := nd.NewScope()
	defer s.Close()
	for _, sdt := range backend.DTypes {
		vals := randomValues(sdt, 1000, uint64(sdt)+50)
		x := nd.FromSlice(ctx.GPU(0), vals, 10, 100)
		xt := nd.Transpose(x, 1, 0) // a strided source
		for _, ddt := range backend.DTypes {
			for vi, src := range []*nd.NDArray{x, xt} {
				y := nd.Empty(other, ddt, src.Shape()...)
				nd.Assign(y, src)
				want := src.CopyTo(ctx.CPU(0)).AsType(ddt)
				w, g := storageHost(ddt, 1000), storageHost(ddt, 1000)
				want.ReadInto(w)
				y.ReadInto(g)
				if i, ok := sameValues(w, g, 0); !ok {
					t.Errorf("Assign %v gpu(0) (view %d) -> %v %v: [%d] = %v, want %v", sdt, vi, ddt, other, i, elemAt(g, i), elemAt(w, i))
				}
			}
		}
	}
}

// TestDTypeHostInPlace copies arrays of every dtype between the CPU and
// gpu(0), both ways, into arrays of every dtype, each side a view at an
// offset (a middle row of a larger array): the copy reads or writes the
// CPU array's memory in place (backend.HostMemory), or stages it for bool,
// and must give what AsType gives on the CPU (computed there, with no
// copy between devices), leaving the rows around it alone.
func TestDTypeHostInPlace(t *testing.T) {
	needGPUs(t, 1)
	s := nd.NewScope()
	defer s.Close()
	gpu, cpu := ctx.GPU(0), ctx.CPU(0)
	for _, sdt := range backend.DTypes {
		vals := randomValues(sdt, 300, uint64(sdt)+70)
		for _, ddt := range backend.DTypes {
			for _, dirs := range [][2]ctx.Context{{cpu, gpu}, {gpu, cpu}} {
				src := nd.SliceAxis(nd.FromSlice(dirs[0], vals, 3, 100), 1, 2, 0)
				whole := nd.Zeros(dirs[1], ddt, 3, 100)
				nd.Assign(nd.SliceAxis(whole, 1, 2, 0), src)
				row := nd.SliceAxis(nd.FromSlice(cpu, vals, 3, 100), 1, 2, 0).AsType(ddt)
				want := nd.Concat([]*nd.NDArray{nd.Zeros(cpu, ddt, 1, 100), row, nd.Zeros(cpu, ddt, 1, 100)}, 0)
				w, g := storageHost(ddt, 300), storageHost(ddt, 300)
				want.ReadInto(w)
				whole.ReadInto(g)
				if i, ok := sameValues(w, g, 0); !ok {
					t.Errorf("%v %v -> %v %v: [%d] = %v, want %v", sdt, dirs[0], ddt, dirs[1], i, elemAt(g, i), elemAt(w, i))
				}
			}
		}
	}
}

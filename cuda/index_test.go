//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// indexHost are index values: in range, negative, past the end, repeated,
// fractions (truncated), huge (saturated) and NaN (0), converted to each
// index dtype as Write converts.
var indexHost = []float64{0, 1, 4, -1, 5, 7, -6, 2.7, -2.7, 100, -100, 3, 3, 3, 1e30, -1e30,
	math.NaN(), 2, 0, 255, 256, 4}

// indexValues returns n index values cycling through indexHost.
func indexValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = indexHost[(i*7+3)%len(indexHost)]
	}
	return v
}

// indexKernels returns the rig's backends as backend.IndexKernels.
func indexKernels(r *rig) (cpu, gpu backend.IndexKernels) {
	r.t.Helper()
	cpu, ok := r.cpu.(backend.IndexKernels)
	gpu, ok2 := r.gpu.(backend.IndexKernels)
	if !ok || !ok2 {
		r.t.Fatal("a backend does not implement backend.IndexKernels")
	}
	return cpu, gpu
}

// gatherLayouts are index views of [Outer, M, Inner]: their strides (nil:
// contiguous) and how many elements they span.
var gatherLayouts = []struct {
	name string
	st   func(o, m, i int) []int
	n    func(o, m, i int) int
}{
	{"full", func(o, m, i int) []int { return nil }, func(o, m, i int) int { return o * m * i }},
	{"take", func(o, m, i int) []int { return []int{0, 1, 0} }, func(o, m, i int) int { return m }},
	{"rows", func(o, m, i int) []int { return []int{0, i, 1} }, func(o, m, i int) int { return m * i }},
	{"outer", func(o, m, i int) []int { return []int{m, 1, 0} }, func(o, m, i int) int { return o * m }},
}

// scatterModes are ScatterAdd's paths (scatterSorted): the choice, the
// column kernel, the sorted one.
var scatterModes = []int{0, 1, 2}

// TestIndexGatherScatter runs Gather and ScatterAdd for every data dtype,
// every index dtype, clipping and wrapping, and contiguous and broadcast
// index views, against the CPU backend bit for bit. ScatterAdd's repeated
// indices add in the CPU's order.
func TestIndexGatherScatter(t *testing.T) {
	r := newRig(t)
	kc, kg := indexKernels(r)
	const O, N, M, I = 3, 5, 7, 4
	for _, dt := range backend.DTypes {
		x := r.from(dt, randomValues(dt, O*N*I, 11))
		src := r.from(dt, randomValues(dt, O*M*I, 12))
		for _, idt := range backend.DTypes {
			for _, l := range gatherLayouts {
				idx := r.from(idt, indexValues(l.n(O, M, I)))
				for _, wrap := range []bool{false, true} {
					p := backend.GatherParams{Outer: O, N: N, M: M, Inner: I, Wrap: wrap}
					name := fmt.Sprintf("%v from %v, %s index, wrap %v", dt, idt, l.name, wrap)
					ic, ig := idx.args(0, l.st(O, M, I))
					dst := r.alloc(dt, O*M*I)
					dc, dg := dst.args(0, nil)
					xc, xg := x.args(0, nil)
					kc.Gather(p, dc, xc, ic)
					kg.Gather(p, dg, xg, ig)
					r.same("Gather "+name, dst)

					for _, mode := range scatterModes {
						acc := r.from(dt, randomValues(dt, O*N*I, 13))
						ac, ag := acc.args(0, nil)
						sc, sg := src.args(0, nil)
						kc.ScatterAdd(p, ac, sc, ic)
						scatterSorted = mode
						kg.ScatterAdd(p, ag, sg, ig)
						scatterSorted = 0
						r.same(fmt.Sprintf("ScatterAdd %s, path %d", name, mode), acc)
					}
				}
			}
		}
	}
	// Operands at offsets, and an empty gather (nothing written).
	x := r.from(backend.Float32, randomValues(backend.Float32, 40, 14))
	idx := r.from(backend.Int64, indexValues(12))
	dst := r.alloc(backend.Float32, 20)
	p := backend.GatherParams{Outer: 2, N: 5, M: 3, Inner: 3}
	dc, dg := dst.args(2, nil)
	xc, xg := x.args(5, nil)
	ic, ig := idx.args(1, []int{0, 1, 0})
	kc.Gather(p, dc, xc, ic)
	kg.Gather(p, dg, xg, ig)
	kc.ScatterAdd(p, xc, dc, ic)
	kg.ScatterAdd(p, xg, dg, ig)
	p.M = 0
	kc.Gather(p, dc, xc, ic)
	kg.Gather(p, dg, xg, ig)
	r.same("Gather at offsets", dst)
	r.same("ScatterAdd at offsets", x)
}

// TestIndexScatterOrder adds a thousand float32 values of mixed
// magnitudes into a few positions, through each of ScatterAdd's paths and
// index views: any other order than the CPU's (j ascending per column)
// rounds differently.
func TestIndexScatterOrder(t *testing.T) {
	r := newRig(t)
	kc, kg := indexKernels(r)
	const O, N, M, I = 2, 3, 1000, 2
	rng := rand.New(rand.NewPCG(5, 6))
	vals := make([]float32, O*M*I)
	idx := make([]int32, M)
	for i := range vals {
		vals[i] = float32(math.Ldexp(rng.Float64()-0.5, rng.IntN(40)))
	}
	for j := range idx {
		idx[j] = int32(rng.IntN(N))
	}
	full := make([]int32, O*M*I)
	for k := range full {
		full[k] = int32(rng.IntN(N))
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, l := range []struct {
			st  []int
			idx []int32
		}{{[]int{0, 1, 0}, idx}, {nil, full}, {[]int{M, 1, 0}, full[:O*M]}, {[]int{0, I, 1}, full[:M*I]}} {
			for _, mode := range scatterModes {
				src := r.from(dt, vals)
				ix := r.from(backend.Int32, l.idx)
				dst := r.from(dt, vals[:O*N*I])
				p := backend.GatherParams{Outer: O, N: N, M: M, Inner: I}
				dc, dg := dst.args(0, nil)
				sc, sg := src.args(0, nil)
				ic, ig := ix.args(0, l.st)
				kc.ScatterAdd(p, dc, sc, ic)
				scatterSorted = mode
				kg.ScatterAdd(p, dg, sg, ig)
				scatterSorted = 0
				r.same(fmt.Sprintf("ScatterAdd order %v, strides %v, path %d", dt, l.st, mode), dst)
			}
		}
	}
}

// whereLayouts are iteration spaces with the strides of cond, a and b (nil:
// contiguous).
var whereLayouts = []struct {
	name       string
	shape      []int
	cs, as, bs []int
}{
	{"flat", []int{257}, nil, nil, nil},
	{"broadcast", []int{3, 4, 5}, []int{5, 0, 1}, []int{0, 5, 1}, nil},
	{"scalar", []int{6, 7}, nil, []int{0, 0}, []int{1, 6}},
	{"nine-dims", []int{2, 2, 2, 2, 2, 2, 2, 2, 3}, []int{1, 2, 4, 8, 16, 32, 64, 128, 256}, nil,
		[]int{0, 0, 0, 0, 0, 0, 0, 0, 1}},
	{"zero-dims", []int{}, nil, nil, nil},
}

// TestIndexWhere runs Where for every dtype over contiguous, broadcast,
// transposed and many-dimensional layouts, and operands at offsets.
func TestIndexWhere(t *testing.T) {
	r := newRig(t)
	kc, kg := indexKernels(r)
	for _, dt := range backend.DTypes {
		for li, l := range whereLayouts {
			span := func(st []int) int {
				if st == nil {
					return prod(l.shape)
				}
				return extent(l.shape, st)
			}
			seed := uint64(20 + li)
			cond := r.from(backend.Bool, randomValues(backend.Bool, span(l.cs)+1, seed))
			a := r.from(dt, randomValues(dt, span(l.as)+2, seed+100))
			b := r.from(dt, randomValues(dt, span(l.bs), seed+200))
			dst := r.alloc(dt, prod(l.shape)+3)
			dc, dg := dst.args(3, nil)
			cc, cg := cond.args(1, l.cs)
			ac, ag := a.args(2, l.as)
			bc, bg := b.args(0, l.bs)
			kc.Where(l.shape, dc, cc, ac, bc)
			kg.Where(l.shape, dg, cg, ag, bg)
			r.same(fmt.Sprintf("Where %s %v", l.name, dt), dst)
		}
	}
}

// TestIndexCumsum runs Cumsum along each axis of a [3, 9, 5] array and
// over lines taking each of its kernels (a thread per line, with and
// without its chunks of 32; a block per line) for every dtype (integers
// wrap around), and along long float axes where any other order of the
// additions rounds differently.
func TestIndexCumsum(t *testing.T) {
	r := newRig(t)
	kc, kg := indexKernels(r)
	cases := [][3]int{{1, 3, 45}, {3, 9, 5}, {27, 5, 1}, {2, 100, 1}, {1, 70, 33}, {3, 300, 2}}
	for _, dt := range backend.DTypes {
		for ci, c := range cases {
			size := c[0] * c[1] * c[2]
			src := r.from(dt, randomValues(dt, size, uint64(30+ci)))
			dst := r.alloc(dt, size)
			dc, dg := dst.args(0, nil)
			sc, sg := src.args(0, nil)
			kc.Cumsum(c[0], c[1], c[2], dc, sc)
			kg.Cumsum(c[0], c[1], c[2], dg, sg)
			r.same(fmt.Sprintf("Cumsum %v %v", c, dt), dst)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	vals := make([]float64, 2*1003*40)
	for i := range vals {
		vals[i] = math.Ldexp(rng.Float64()-0.5, rng.IntN(30))
	}
	for _, dt := range []backend.DType{backend.Float32, backend.Float64} {
		for _, c := range [][3]int{{2, 1003, 3}, {1, 1003, 40}, {1, 5000, 1}} {
			size := c[0] * c[1] * c[2]
			src := r.from(dt, vals[:size])
			dst := r.alloc(dt, size)
			dc, dg := dst.args(0, nil)
			sc, sg := src.args(0, nil)
			kc.Cumsum(c[0], c[1], c[2], dc, sc)
			kg.Cumsum(c[0], c[1], c[2], dg, sg)
			r.same(fmt.Sprintf("Cumsum long %v %v", c, dt), dst)
		}
	}
}

// TestIndexSort sorts lines of many lengths (empty, shorter than a run,
// across run and merge boundaries, long) of every dtype, ascending and
// descending, against the CPU backend bit for bit, values and positions:
// the values repeat a lot (stability) and the floats hold NaN, ±Inf and
// ±0.
func TestIndexSort(t *testing.T) {
	r := newRig(t)
	kc, kg := indexKernels(r)
	cases := []struct{ outer, n, inner int }{
		{2, 0, 3}, {2, 1, 3}, {2, 2, 3}, {2, 3, 3}, {2, 7, 3}, {1, 16, 2}, {3, 17, 1}, {2, 33, 2},
		{1, 1000, 2}, {2, 1000, 1},
	}
	for _, dt := range backend.DTypes {
		for ci, c := range cases {
			size := c.outer * c.n * c.inner
			src := r.from(dt, randomValues(dt, size+1, uint64(40+ci)))
			for _, desc := range []bool{false, true} {
				vals := r.alloc(dt, size+1)
				idx := r.alloc(backend.Int64, size+1)
				vc, vg := vals.args(0, nil)
				ic, ig := idx.args(0, nil)
				sc, sg := src.args(1, nil)
				kc.Sort(c.outer, c.n, c.inner, desc, vc, ic, sc)
				kg.Sort(c.outer, c.n, c.inner, desc, vg, ig, sg)
				name := fmt.Sprintf("Sort [%d %d %d] %v desc %v", c.outer, c.n, c.inner, dt, desc)
				r.same(name+" values", vals)
				r.same(name+" positions", idx)
			}
		}
	}
	// One long line of few distinct values (long runs of ties) and one of
	// distinct values, as TopK over a vocabulary sorts.
	ties := make([]float32, 5000)
	distinct := make([]float32, 5000)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range ties {
		ties[i] = float32(rng.IntN(5))
		if rng.IntN(50) == 0 {
			ties[i] = float32(math.NaN())
		}
		distinct[i] = float32(rng.NormFloat64())
	}
	for _, host := range [][]float32{ties, distinct} {
		for _, dt := range []backend.DType{backend.Float32, backend.Int32} {
			src := r.from(dt, host)
			for _, desc := range []bool{false, true} {
				vals := r.alloc(dt, len(host))
				idx := r.alloc(backend.Int64, len(host))
				vc, vg := vals.args(0, nil)
				ic, ig := idx.args(0, nil)
				sc, sg := src.args(0, nil)
				kc.Sort(1, len(host), 1, desc, vc, ic, sc)
				kg.Sort(1, len(host), 1, desc, vg, ig, sg)
				name := fmt.Sprintf("Sort 5000 %v desc %v", dt, desc)
				r.same(name+" values", vals)
				r.same(name+" positions", idx)
			}
		}
	}
}

// indexOps runs the nd ops built on IndexKernels on dev, forward and
// backward, and returns their results and x's gradient.
func indexOps(dev ctx.Context, x, idx, gidx *nd.NDArray) []*nd.NDArray {
	var outs []*nd.NDArray
	x.AttachGrad(nd.GradWrite)
	autograd.Record(func() {
		take := nd.Take(x, idx, 0)
		wrap := nd.Take(x, idx, 1, nd.TakeWrap)
		g := nd.Gather(x, gidx, 1)
		sa := nd.ScatterAdd(x, gidx, g, 1)
		ia := nd.IndexAdd(x, idx, take, 0)
		zero := nd.Full(dev, nd.Float32, 0.5, 1)
		w := nd.Where(nd.Greater(x, zero), x, nd.MulScalar(x, 3))
		mf := nd.MaskedFill(x, nd.Greater(zero, x), -5)
		cs := nd.Cumsum(x, 1)
		sv, si := nd.Sort(x, 1, false)
		dv, di := nd.Sort(x, 0, true)
		as := nd.ArgSort(x, 1, true)
		tv, ti := nd.TopK(x, 2, 1, true)
		outs = []*nd.NDArray{take, wrap, g, sa, ia, w, mf, cs, sv, si, dv, di, as, tv, ti}
		loss := nd.Sum(take)
		for _, o := range []*nd.NDArray{wrap, g, sa, ia, w, mf, cs, sv, dv, tv} {
			loss = nd.Add(loss, nd.Sum(nd.Mul(o, o)))
		}
		autograd.Backward(loss)
	})
	return append(outs, x.Grad())
}

// TestIndexOnDevice runs Take (the embedding lookup and, backward, its
// gradient), Gather, ScatterAdd, IndexAdd, Where, MaskedFill, Cumsum, Sort,
// ArgSort and TopK with their gradients on gpu(0): no copy leaves the GPU
// and the host waits for it nowhere (the host fallback for backends without
// IndexKernels copies every operand to cpu(0) and back), and the results
// equal the CPU's.
func TestIndexOnDevice(t *testing.T) {
	needGPUs(t, 1)
	if _, ok := backend.For(ctx.GPU(0)).(backend.IndexKernels); !ok {
		t.Fatal("the cuda backend does not implement backend.IndexKernels")
	}
	xs := []float32{0.3, -1.2, 0.7, 2.5, 0.7, -0.1, 1.9, -2.2, 0.3, 0.3, 1.1, -0.4}
	is := []int64{2, -1, 5, 0, 2}
	gs := []int64{3, 0, 0, 2, 9, 1, 1, 1, 0, -4, 2, 3}
	run := func(dev ctx.Context) ([]*nd.NDArray, nd.DeviceStats) {
		x := nd.FromSlice(dev, xs, 3, 4)
		idx := nd.FromSlice(dev, is, 5)
		gidx := nd.FromSlice(dev, gs, 3, 4)
		before := nd.Counters(dev)
		outs := indexOps(dev, x, idx, gidx)
		return outs, nd.Counters(dev).Sub(before)
	}
	gpu, stats := run(ctx.GPU(0))
	if stats.CopiesIn != 0 || stats.CopiesOut != 0 || stats.HostSyncs != 0 {
		t.Errorf("the index ops on gpu(0) made %d copies in, %d out and %d host syncs, want none", stats.CopiesIn, stats.CopiesOut, stats.HostSyncs)
	}
	cpu, _ := run(ctx.CPU(0))
	for i := range cpu {
		want, got := cpu[i].AsType(nd.Float64).Float64s(), gpu[i].AsType(nd.Float64).Float64s()
		if j, ok := sameValues(want, got, 0); !ok {
			t.Errorf("result %d: [%d] = %v on gpu(0), %v on cpu(0)", i, j, got[j], want[j])
		}
	}
}

// BenchmarkIndexOps times the indexing ops of a language model on the CPU
// and gpu(0), each synchronised: TopK of 5 over a 50,000-word vocabulary
// for 1 and 32 rows, an embedding lookup of 4,096 tokens of 512 values
// from 50,000 and its gradient (IndexAdd), and Cumsum along 4,096 and
// along 50,000 (top-p sampling's).
func BenchmarkIndexOps(b *testing.B) {
	needGPUs(b, 1)
	const vocab, tokens, dim = 50000, 4096, 512
	for _, dev := range []ctx.Context{ctx.CPU(0), ctx.GPU(0)} {
		logits1 := nd.RandomUniform(dev, nd.Float32, -1, 1, 1, vocab)
		logits32 := nd.RandomUniform(dev, nd.Float32, -1, 1, 32, vocab)
		w := nd.RandomUniform(dev, nd.Float32, -1, 1, vocab, dim)
		g := nd.RandomUniform(dev, nd.Float32, -1, 1, tokens, dim)
		ids := nd.RandomUniform(dev, nd.Float32, 0, vocab, tokens).AsType(nd.Int64)
		seq := nd.RandomUniform(dev, nd.Float32, -1, 1, 64, tokens)
		cases := []struct {
			name string
			fn   func() *nd.NDArray
		}{
			{"topk-1x50000", func() *nd.NDArray { v, _ := nd.TopK(logits1, 5, 1, true); return v }},
			{"topk-32x50000", func() *nd.NDArray { v, _ := nd.TopK(logits32, 5, 1, true); return v }},
			{"embedding-4096x512", func() *nd.NDArray { return nd.Take(w, ids, 0) }},
			{"embedding-grad", func() *nd.NDArray { return nd.IndexAdd(w, ids, g, 0) }},
			{"cumsum-64x4096", func() *nd.NDArray { return nd.Cumsum(seq, 1) }},
			{"cumsum-1x50000", func() *nd.NDArray { return nd.Cumsum(logits1, 1) }},
		}
		for _, c := range cases {
			b.Run(dev.String()+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					c.fn().Release()
					if dev != ctx.CPU(0) {
						if err := Synchronize(dev); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

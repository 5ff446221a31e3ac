//go:build cuda || cudaemu

package cuda

import (
	"fmt"

	"github.com/goluon/goluon/nd/backend"
)

var _ backend.IndexKernels = (*Backend)(nil)

// sortRun mirrors SORT_RUN in kernels/index.cu: the length of the runs
// that sort_runs_* sorts by insertion before the merge passes.
const sortRun = 16

// gatherDims packs struct GatherDims of kernels/index.cu: p and the
// strides of the index operand's [Outer, M, Inner] view (contiguous when
// idx has none).
func gatherDims(a *args, p backend.GatherParams, idx backend.Arg) {
	st := idx.Strides
	if st == nil {
		st = backend.ContiguousStrides([]int{p.Outer, p.M, p.Inner})
	}
	wrap := int64(0)
	if p.Wrap {
		wrap = 1
	}
	a.words(int64(p.Outer), int64(p.N), int64(p.M), int64(p.Inner), wrap,
		int64(st[0]), int64(st[1]), int64(st[2]))
}

// indexLaunch checks GatherParams and packs the operands of gather_* and
// scatter_add_*: dst, the data, the index and its dtype code, the dims.
func indexLaunch(op string, p backend.GatherParams, dst, data, idx backend.Arg) *args {
	if p.N <= 0 {
		panic(fmt.Sprintf("cuda: %s along an empty axis of %d positions", op, p.N))
	}
	if idx.Strides != nil && len(idx.Strides) != 3 {
		panic(fmt.Sprintf("cuda: %s index strides %v, want 3", op, idx.Strides))
	}
	a := new(args)
	a.ptr(dst)
	a.ptr(data)
	a.ptr(idx)
	a.i64(int(buf(idx).dt))
	gatherDims(a, p, idx)
	return a
}

// Gather writes dst[o,j,i] = x[o, k, i], k the index at (o,j,i) clipped to
// [0, N) or wrapped with p.Wrap; one thread per element of dst.
func (b *Backend) Gather(p backend.GatherParams, dst, x, idx backend.Arg) {
	n := p.Outer * p.M * p.Inner
	if n == 0 {
		return
	}
	a := indexLaunch("Gather", p, dst, x, idx)
	devOf(dst).launch("Gather", "gather"+suffix(buf(dst).dt), n, 0, 0, 0, a)
}

// scatterSorted forces ScatterAdd's path in tests: 0 chooses, 1 takes the
// column kernel, 2 the sorted one.
var scatterSorted = 0

// ScatterAdd adds src[o,j,i] into dst[o, k, i] (k as in Gather), every
// destination element receiving its sources in increasing j: no atomics,
// so the sums are the CPU backend's, on every run. With many columns
// (o, i) or few sources each, a thread per column visits j in order.
// Otherwise (an embedding's gradient: a few hundred columns, thousands of
// indices) that would leave the device nearly idle, so the resolved
// indices are sorted stably along j (Sort) and a thread per run of equal
// indices adds the run's sources in j order.
func (b *Backend) ScatterAdd(p backend.GatherParams, dst, src, idx backend.Arg) {
	if p.Outer*p.M*p.Inner == 0 {
		return
	}
	a := indexLaunch("ScatterAdd", p, dst, src, idx)
	d, sfx := devOf(dst), suffix(buf(dst).dt)
	cols := p.Outer * p.Inner
	sorted := p.M >= 64 && cols < d.phys.sms*d.phys.maxTPSM
	if scatterSorted != 0 {
		sorted = scatterSorted == 2
	}
	if !sorted {
		d.launch("ScatterAdd", "scatter_add"+sfx, cols, 0, 0, 0, a)
		return
	}
	// The index view's own extent: an axis it broadcasts over is kept once.
	st := idx.Strides
	so, si := 1, 1
	ko, ki := p.Outer, p.Inner
	if st != nil && st[0] == 0 {
		so, ko = 0, 1
	}
	if st != nil && st[2] == 0 {
		si, ki = 0, 1
	}
	nk := ko * p.M * ki
	keys := b.temp("ScatterAdd", d, backend.Int64, 3*nk)
	ka := backend.Arg{Buf: keys}
	var r args
	r.ptr(ka)
	r.ptr(idx)
	r.i64(int(buf(idx).dt))
	gatherDims(&r, p, idx)
	r.i64(ko)
	r.i64(ki)
	d.launch("ScatterAdd", "index_resolve", nk, 0, 0, 0, &r)
	sk, sp := at(ka, nk), at(ka, 2*nk)
	b.Sort(ko, p.M, ki, false, sk, sp, ka)
	var s args
	s.ptr(dst)
	s.ptr(src)
	s.ptr(sk)
	s.ptr(sp)
	s.i64(p.Outer)
	s.i64(p.N)
	s.i64(p.M)
	s.i64(p.Inner)
	s.i64(so)
	s.i64(si)
	d.launch("ScatterAdd", "scatter_add_sorted"+sfx, p.Outer*p.M*p.Inner, 0, 0, 0, &s)
	b.Free(d.dev, keys)
}

// Where writes dst = a where cond is true and b elsewhere over shape; cond
// (Bool), a and b are strided (0 broadcasts), dst is contiguous. More than
// eight dimensions left after coalescing are walked on the host, as Binary
// walks them.
func (b *Backend) Where(shape []int, dst, cond, x, y backend.Arg) {
	if prod(shape) == 0 {
		return
	}
	cs := backend.ContiguousStrides(shape)
	st := func(a backend.Arg) []int {
		if a.Strides == nil {
			return cs
		}
		return a.Strides
	}
	d := devOf(dst)
	name := "where" + suffix(buf(dst).dt)
	sh, strides := backend.Coalesce(shape, cs, st(cond), st(x), st(y))
	forSlices(sh, strides, func(offs, sh []int, st [][]int) {
		da, ca, xa, ya := dst, cond, x, y
		da.Off += offs[0]
		ca.Off += offs[1]
		xa.Off += offs[2]
		ya.Off += offs[3]
		m := prod(sh)
		var a args
		a.ptr(da)
		a.ptr(ca)
		a.ptr(xa)
		a.ptr(ya)
		a.i64(m)
		dims := newDims(sh, st[1], st[2], st[3])
		dims.add(&a)
		d.launch("Where", name, m, 0, 0, 0, &a)
	})
}

// Cumsum writes the inclusive running sums of src along the middle axis of
// [outer, n, inner] into dst (both contiguous), adding in order in the
// element type (integers wrap), as the CPU backend adds: one thread per
// line where neighbouring lines' elements are adjacent (inner ≥ 32, or
// short lines), else one block per line staging tiles in shared memory so
// that reads and writes are coalesced (a thread per line along the last
// axis would touch a cache line per element).
func (b *Backend) Cumsum(outer, n, inner int, dst, src backend.Arg) {
	if outer*n*inner == 0 {
		return
	}
	var a args
	a.ptr(dst)
	a.ptr(src)
	a.i64(outer)
	a.i64(n)
	a.i64(inner)
	d, dt := devOf(dst), buf(dst).dt
	lines := outer * inner
	if inner >= 32 || n < 64 {
		d.launch("Cumsum", "cumsum"+suffix(dt), lines, 0, 0, 0, &a)
		return
	}
	const block = 256 // tiles of 8·block elements: 16 KiB of float64
	blocks := min(lines, d.phys.sms*max(d.phys.maxTPSM/block, 1))
	d.launch("Cumsum", "cumsum_block"+suffix(dt), 0, blocks, block, 8*block*dt.Size(), &a)
}

// Sort sorts src along the middle axis of [outer, n, inner] into vals and
// the Int64 positions idx, stably, ascending or descending, NaN above every
// number. Each line's runs of sortRun elements are sorted by insertion,
// then merged pairwise, a pass per doubling of the run width, each pass a
// launch with a thread per element that finds its place by binary search
// in the partner run: O(n log² n) work per line in log(n/sortRun) + 1
// launches, parallel over every element of every line (one long line, as
// TopK over a vocabulary, fills the device too). The passes alternate
// between vals/idx and a scratch pair, starting so that the last writes
// vals and idx.
func (b *Backend) Sort(outer, n, inner int, desc bool, vals, idx, src backend.Arg) {
	lines := outer * inner
	if lines*n == 0 {
		return
	}
	d := devOf(vals)
	dt := buf(src).dt
	sfx := suffix(dt)
	dsc := 0
	if desc {
		dsc = 1
	}
	passes := 0
	for w := sortRun; w < n; w *= 2 {
		passes++
	}
	type pair struct {
		v, i backend.Arg
		inn  int
	}
	out := pair{vals, idx, inner}
	var tv, ti *Buffer
	scratch := out
	if passes > 0 {
		tv = b.temp("Sort", d, dt, lines*n)
		ti = b.temp("Sort", d, backend.Int64, lines*n)
		scratch = pair{backend.Arg{Buf: tv}, backend.Arg{Buf: ti}, 1}
	}
	// The runs go where an even number of passes leaves the result in out.
	cur, next := out, scratch
	if passes%2 == 1 {
		cur, next = scratch, out
	}
	var a args
	a.ptr(cur.v)
	a.ptr(cur.i)
	a.i64(cur.inn)
	a.ptr(src)
	a.i64(inner)
	a.i64(lines)
	a.i64(n)
	a.i64(dsc)
	d.launch("Sort", "sort_runs"+sfx, lines*((n+sortRun-1)/sortRun), 0, 0, 0, &a)
	for w := sortRun; w < n; w *= 2 {
		var m args
		m.ptr(next.v)
		m.ptr(next.i)
		m.i64(next.inn)
		m.ptr(cur.v)
		m.ptr(cur.i)
		m.i64(cur.inn)
		m.i64(lines)
		m.i64(n)
		m.i64(w)
		m.i64(dsc)
		d.launch("Sort", "sort_merge"+sfx, lines*n, 0, 0, 0, &m)
		cur, next = next, cur
	}
	if tv != nil {
		// Freed blocks are reused only by later work on this stream.
		b.Free(d.dev, tv)
		b.Free(d.dev, ti)
	}
}

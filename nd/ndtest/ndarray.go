package ndtest

// The cases for the array views of nd/ndarray.go: ops whose operands are
// leading-axis slices and reshapes sharing their source's memory.

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
)

// confViews runs ops on views: leading-axis slices and reshapes share their
// source's memory and start at an offset into it, which a kernel must
// honour on every operand and in the in-place ops. The references reuse
// those of the other families.
func confViews(e confEnv) {
	base, bv := e.rand(1700, -1, 1, 5, 3, 4)
	v := nd.SliceAxis(base, 2, 4, 0) // [2, 3, 4] at offset 24
	vv := bv[24:48]
	vs := []int{2, 3, 4}
	r := nd.Reshape(nd.SliceAxis(base, 1, 3, 0), 6, 4) // [6, 4] at offset 12
	rv := bv[12:36]
	add := func(a, b float64) float64 { return a + b }

	e.run("Exp", func(e confEnv) {
		want := make([]float64, len(vv))
		for i, x := range vv {
			want[i] = math.Exp(x)
		}
		e.check(nd.Exp(v), vs, want, confTolDefault)
	})
	e.run("Add_two_views", func(e confEnv) {
		want, sh := refBroadcast(add, vv, vs, rv, vs)
		e.check(nd.Add(v, nd.Reshape(r, vs...)), sh, want, confTolDefault)
	})
	e.run("Add_broadcast_view", func(e confEnv) {
		row := nd.SliceAxis(nd.Reshape(base, 15, 4), 7, 8, 0) // [1, 4] at offset 28
		want, sh := refBroadcast(add, vv, vs, bv[28:32], []int{1, 4})
		e.check(nd.Add(v, row), sh, want, confTolDefault)
	})
	e.run("SliceOfSlice", func(e confEnv) {
		w := nd.SliceAxis(nd.SliceAxis(base, 1, 5, 0), 2, 3, 0) // row 3
		e.check(w, []int{1, 3, 4}, bv[36:48], confTolExact)
		want, sh := refSlice(vv, vs, 2, 1, 3)
		e.check(nd.SliceAxis(v, 1, 3, 2), sh, want, confTolExact)
	})
	e.run("Reduce", func(e confEnv) {
		want, _, drop := refReduce(refSum, vv, vs, []int{1})
		e.check(nd.Sum(v, 1), drop, want, confTolDefault)
		want, _, drop = refReduce(refMax, vv, vs, nil)
		e.check(nd.Max(v), drop, want, confTolExact)
		if !e.dtypeSupported() {
			return // ArgMax's Int64 result: see the argmax family
		}
		amax, ash := refArgMax(vv, vs, -1)
		e.checkAs(nd.ArgMax(v, -1), nd.Int64, ash, amax, confTolExact)
	})
	e.run("MatMul", func(e confEnv) {
		w, wv := e.rand(1701, -1, 1, 4, 5)
		e.check(nd.MatMul(r, w), []int{6, 5}, refGemm(rv, wv, 0, 0, 0, 6, 4, 5, false, false), confTolLongSum)
		e.check(nd.Dot(r, r, true, false), []int{4, 4}, refGemm(rv, rv, 0, 0, 0, 4, 6, 4, true, false), confTolLongSum)
		e.check(nd.MatMul(v, w), []int{2, 3, 5}, refGemm(vv, wv, 2, 2, 0, 3, 4, 5, false, false), confTolLongSum)
	})
	e.run("Transpose", func(e confEnv) {
		want, sh := refTranspose(vv, vs, []int{2, 0, 1})
		e.check(nd.Transpose(v, 2, 0, 1), sh, want, confTolExact)
	})
	e.run("Concat", func(e confEnv) {
		want, sh := refConcat(1, [][]float64{vv, rv}, [][]int{vs, vs})
		e.check(nd.Concat([]*nd.NDArray{v, nd.Reshape(r, vs...)}, 1), sh, want, confTolExact)
	})
	e.run("Softmax", func(e confEnv) {
		e.check(nd.Softmax(v, -1), vs, refSoftmax(vv, vs, -1, false), confTolDefault)
	})
	e.run("Pick", func(e confEnv) {
		idx := []float64{0, 3, 1, 2, 2, 9}
		e.check(nd.Pick(r, e.arr(idx, 6), 1), []int{6}, refPick(rv, []int{6, 4}, idx, 1), confTolExact)
	})
	img, iv := e.rand(1702, -1, 1, 3, 2, 5, 5)
	iview := nd.SliceAxis(img, 1, 3, 0) // [2, 2, 5, 5] at offset 50
	ivv := iv[50:]
	e.run("Conv2D", func(e confEnv) {
		w, wv := e.rand(1703, -1, 1, 3, 2, 3, 3)
		c := confConvCase{n: 2, c: 2, h: 5, w: 5, o: 3, kh: 3, kw: 3, opts: nd.ConvOpts{Pad: [2]int{1, 1}}}
		want, sh := refConv2D(c, ivv, wv, nil)
		e.check(nd.Conv2D(iview, w, nil, c.opts), sh, want, confTolLongSum)
	})
	e.run("Pool2D", func(e confEnv) {
		o := nd.PoolOpts{Type: nd.PoolMax, Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, CeilMode: true}
		want, sh := refPool2D(ivv, []int{2, 2, 5, 5}, o)
		e.check(nd.Pool2D(iview, o), sh, want, confTolExact)
	})
	e.run("BatchNorm", func(e confEnv) {
		rm, rmv := e.rand(1704, -0.5, 0.5, 2)
		rvar, rvv := e.rand(1705, 0.5, 2, 2)
		opts := nd.BatchNormOpts{Axis: new(1), Epsilon: new(1e-5), Momentum: new(0.9)}
		want, _, _ := refBatchNorm(ivv, []int{2, 2, 5, 5}, 1, nil, nil, rmv, rvv, false, opts)
		e.check(nd.BatchNorm(iview, nil, nil, rm, rvar, nd.BatchNormOpts{}), []int{2, 2, 5, 5}, want, confTolDefault)
	})
	e.run("Copies", func(e confEnv) {
		e.check(v.Copy(), vs, vv, confTolExact)
		back := v.CopyTo(confOther(e.dev)).CopyTo(e.dev)
		e.check(back, vs, vv, confTolExact)
		to := nd.Float64
		if e.dt == nd.Float64 {
			to = nd.Float32
		}
		want := slices.Clone(vv)
		for i := range want {
			if to == nd.Float32 {
				want[i] = float64(float32(want[i]))
			}
		}
		e.checkAs(v.AsType(to), to, vs, want, confTolExact)
	})
	// In-place ops on a view write into the source's memory, inside the
	// view's window only.
	inPlace := []struct {
		name string
		f    func(e confEnv, w *nd.NDArray, want []float64)
	}{
		{"FillInPlace", func(e confEnv, w *nd.NDArray, want []float64) {
			nd.FillInPlace(w, 3)
			copy(want[24:48], confConst(24, 3))
		}},
		{"ScaleInPlace", func(e confEnv, w *nd.NDArray, want []float64) {
			nd.ScaleInPlace(w, -2)
			for i := 24; i < 48; i++ {
				want[i] *= -2
			}
		}},
		{"AddTo", func(e confEnv, w *nd.NDArray, want []float64) {
			s, sv := e.rand(1706, -1, 1, 4)
			nd.AddTo(w, s)
			for i := 24; i < 48; i++ {
				want[i] += sv[i%4]
			}
		}},
		{"Assign", func(e confEnv, w *nd.NDArray, want []float64) {
			s, sv := e.rand(1707, -1, 1, vs...)
			nd.Assign(w, s.CopyTo(confOther(e.dev)))
			copy(want[24:48], sv)
		}},
	}
	for _, c := range inPlace {
		e.run(c.name, func(e confEnv) {
			b := base.Copy()
			w := nd.SliceAxis(b, 2, 4, 0)
			want := slices.Clone(bv)
			c.f(e, w, want)
			e.check(b, []int{5, 3, 4}, want, confTolDefault)
		})
	}
}

package ndtest

import (
	"errors"
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
)

// The cases for the integer and Bool dtypes (nd/dtype.go, nd/create.go,
// nd/host.go, nd/copy.go's AsType): creation and read-back, conversions,
// comparisons into Bool, integer arithmetic and reductions, index dtypes.
// The family runs once per float dtype of the suite, which sets the dtype
// of the float operands.

// dtypeSupported reports whether e's device can hold integer arrays; a
// backend that cannot says so with an ErrDevice error at allocation.
func (e confEnv) dtypeSupported() bool {
	ok := true
	func() {
		defer func() {
			if r := recover(); r != nil {
				var err *nd.Error
				if er, isErr := r.(error); isErr && errors.As(er, &err) && err.Kind == nd.ErrDevice {
					ok = false
					return
				}
				panic(r)
			}
		}()
		nd.Zeros(e.dev, nd.Int64, 1).Release()
	}()
	return ok
}

// ints checks that got holds exactly want (as int64) with dtype dt.
func (e confEnv) ints(got *nd.NDArray, dt nd.DType, shape []int, want ...int64) {
	e.T.Helper()
	if got.DType() != dt || !slices.Equal(got.Shape(), shape) || got.Context() != e.dev {
		e.Fatalf("result %v %v on %v, want %v %v on %v", got.DType(), got.Shape(), got.Context(), dt, shape, e.dev)
	}
	if v := got.Int64s(); !slices.Equal(v, want) {
		e.Errorf("values %v, want %v", v, want)
	}
}

func confDTypes(e confEnv) {
	if !e.dtypeSupported() {
		e.Skipf("SKIPPED: %v cannot allocate integer arrays yet", e.dev)
	}
	nan, inf := math.NaN(), math.Inf(1)
	e.run("FromSliceReadBack", func(e confEnv) {
		e.ints(nd.FromSlice(e.dev, []int64{math.MinInt64, -1, math.MaxInt64}), nd.Int64, []int{3}, math.MinInt64, -1, math.MaxInt64)
		e.ints(nd.FromSlice(e.dev, []int32{math.MinInt32, 7}), nd.Int32, []int{2}, math.MinInt32, 7)
		e.ints(nd.FromSlice(e.dev, []uint8{0, 255}, 2, 1), nd.Uint8, []int{2, 1}, 0, 255)
		e.ints(nd.FromSlice(e.dev, []int{4, -4}), nd.Int64, []int{2}, 4, -4)
		if b := nd.FromSlice(e.dev, []bool{true, false}).Bools(); !slices.Equal(b, []bool{true, false}) {
			e.Errorf("bools %v", b)
		}
		e.ints(nd.Ones(e.dev, nd.Int32, 2), nd.Int32, []int{2}, 1, 1)
		e.ints(nd.Full(e.dev, nd.Uint8, 300, 1), nd.Uint8, []int{1}, 255)
	})
	e.run("AsType", func(e confEnv) {
		x := e.arr([]float64{-1.7, 2.9, nan, inf, -inf, 300.5, 0})
		e.ints(x.AsType(nd.Int32), nd.Int32, []int{7}, -1, 2, 0, math.MaxInt32, math.MinInt32, 300, 0)
		e.ints(x.AsType(nd.Int64), nd.Int64, []int{7}, -1, 2, 0, math.MaxInt64, math.MinInt64, 300, 0)
		e.ints(x.AsType(nd.Uint8), nd.Uint8, []int{7}, 0, 2, 0, 255, 0, 255, 0)
		e.ints(x.AsType(nd.Bool), nd.Bool, []int{7}, 1, 1, 1, 1, 1, 1, 0)
		e.check(nd.FromSlice(e.dev, []bool{true, false}).AsType(e.dt), []int{2}, []float64{1, 0}, confTolExact)
		e.ints(nd.FromSlice(e.dev, []int64{1 << 32, -1, 255}).AsType(nd.Int32), nd.Int32, []int{3}, 0, -1, 255)
		e.ints(nd.FromSlice(e.dev, []int64{256, -1}).AsType(nd.Uint8), nd.Uint8, []int{2}, 0, 255)
	})
	e.run("Comparisons", func(e confEnv) {
		a := e.arr([]float64{1, 2, 3, nan}, 2, 2)
		b := e.arr([]float64{2, 2}, 2)
		e.ints(nd.Greater(a, b), nd.Bool, []int{2, 2}, 0, 0, 1, 0)
		e.ints(nd.Equal(a, b), nd.Bool, []int{2, 2}, 0, 1, 0, 0)
		e.ints(nd.NotEqual(a, b), nd.Bool, []int{2, 2}, 1, 0, 1, 1)
		ia, ib := nd.FromSlice(e.dev, []int32{1, 5, -3}), nd.FromSlice(e.dev, []int32{1})
		e.ints(nd.LessEqual(ia, ib), nd.Bool, []int{3}, 1, 0, 1)
		p, q := nd.FromSlice(e.dev, []bool{true, true, false, false}), nd.FromSlice(e.dev, []bool{true, false, true, false})
		e.ints(nd.LogicalAnd(p, q), nd.Bool, []int{4}, 1, 0, 0, 0)
		e.ints(nd.LogicalOr(p, q), nd.Bool, []int{4}, 1, 1, 1, 0)
		e.ints(nd.LogicalXor(p, q), nd.Bool, []int{4}, 0, 1, 1, 0)
		e.ints(nd.LogicalNot(a), nd.Bool, []int{2, 2}, 0, 0, 0, 0)
		e.ints(nd.Equal(p, q), nd.Bool, []int{4}, 1, 0, 0, 1)
	})
	e.run("IntArithmetic", func(e confEnv) {
		a := nd.FromSlice(e.dev, []int64{7, -7, 5, math.MinInt64}, 2, 2)
		b := nd.FromSlice(e.dev, []int64{2, 0}, 1, 2)
		e.ints(nd.Div(a, b), nd.Int64, []int{2, 2}, 3, 0, 2, 0)
		e.ints(nd.Add(a, b), nd.Int64, []int{2, 2}, 9, -7, 7, math.MinInt64)
		e.ints(nd.Mul(a, b), nd.Int64, []int{2, 2}, 14, 0, 10, 0)
		e.ints(nd.Sub(b, a), nd.Int64, []int{2, 2}, -5, 7, -3, math.MinInt64)
		e.ints(nd.Maximum(a, b), nd.Int64, []int{2, 2}, 7, 0, 5, 0)
		u := nd.FromSlice(e.dev, []uint8{250, 3})
		e.ints(nd.Add(u, u), nd.Uint8, []int{2}, 244, 6)
		e.ints(nd.Neg(nd.FromSlice(e.dev, []int32{3, -4})), nd.Int32, []int{2}, -3, 4)
		e.ints(nd.Abs(nd.FromSlice(e.dev, []int32{3, -4})), nd.Int32, []int{2}, 3, 4)
		e.ints(nd.Clip(nd.FromSlice(e.dev, []int32{-9, 0, 9}), -2, 3), nd.Int32, []int{3}, -2, 0, 3)
		e.ints(nd.MulScalar(nd.FromSlice(e.dev, []int64{3, -4}), -2), nd.Int64, []int{2}, -6, 8)
		// Python's // and %, and C's fmod: the divisor's sign, the
		// dividend's sign; x/0 gives 0 as Div does.
		p := nd.FromSlice(e.dev, []int32{7, -7, 7, -7, 6, 5, math.MinInt32})
		q := nd.FromSlice(e.dev, []int32{2, 2, -2, -2, 3, 0, -1})
		e.ints(nd.FloorDiv(p, q), nd.Int32, []int{7}, 3, -4, -4, 3, 2, 0, math.MinInt32)
		e.ints(nd.Mod(p, q), nd.Int32, []int{7}, 1, 1, -1, -1, 0, 0, 0)
		e.ints(nd.Fmod(p, q), nd.Int32, []int{7}, 1, -1, 1, -1, 0, 0, 0)
		e.ints(nd.Floor(nd.FromSlice(e.dev, []int64{-3, 4})), nd.Int64, []int{2}, -3, 4)
		e.ints(nd.Round(nd.FromSlice(e.dev, []int32{-3, 4})), nd.Int32, []int{2}, -3, 4)
	})
	e.run("Reductions", func(e confEnv) {
		x := nd.FromSlice(e.dev, []int32{math.MaxInt32, math.MaxInt32, -5, 1, 2, 3}, 2, 3)
		e.ints(nd.Sum(x, 1), nd.Int64, []int{2}, 2*math.MaxInt32-5, 6)
		e.ints(nd.Sum(nd.FromSlice(e.dev, []bool{true, false, true})), nd.Int64, []int{}, 2)
		e.ints(nd.Max(x, 0), nd.Int32, []int{3}, math.MaxInt32, math.MaxInt32, 3)
		e.ints(nd.Min(x), nd.Int32, []int{}, -5)
		e.ints(nd.ArgMax(x, 1), nd.Int64, []int{2}, 0, 2)
		e.ints(nd.ArgMin(x, 0), nd.Int64, []int{3}, 1, 1, 0)
		f := e.arr([]float64{1, nan, 3, nan, 2, 0, -1, 5, -1}, 3, 3)
		e.ints(nd.ArgMax(f, 1), nd.Int64, []int{3}, 1, 0, 1)
		e.ints(nd.ArgMin(f, 1), nd.Int64, []int{3}, 1, 0, 0)
		e.ints(nd.ArgMax(f, 0), nd.Int64, []int{3}, 1, 0, 0)
	})
	e.run("IndexDTypes", func(e confEnv) {
		x := e.arr([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
		for _, idx := range []*nd.NDArray{
			nd.FromSlice(e.dev, []int64{2, 0}), nd.FromSlice(e.dev, []int32{2, 0}),
			nd.FromSlice(e.dev, []uint8{2, 0}), e.arr([]float64{2, 0}),
		} {
			e.check(nd.Pick(x, idx, 1), []int{2}, []float64{3, 4}, confTolExact)
		}
		oh := nd.OneHot(nd.FromSlice(e.dev, []int64{1, 3, -1}), 3, 1, 0)
		e.checkAs(oh, nd.Float32, []int{3, 3}, []float64{0, 1, 0, 0, 0, 0, 0, 0, 0}, confTolExact)
		t := nd.Take(nd.FromSlice(e.dev, []int64{10, 20, 30}, 3), nd.FromSlice(e.dev, []int64{2, -1, 0}, 3), 0, nd.TakeWrap)
		e.ints(t, nd.Int64, []int{3}, 30, 30, 10)
		// Without a mode, out-of-range indices are clipped (TakeClip).
		e.ints(nd.Take(nd.FromSlice(e.dev, []int64{10, 20, 30}, 3), nd.FromSlice(e.dev, []int64{5, -1}, 2), 0), nd.Int64, []int{2}, 30, 10)
		w := nd.Where(nd.FromSlice(e.dev, []bool{true, false}), nd.FromSlice(e.dev, []int32{1, 2}), nd.FromSlice(e.dev, []int32{-1}))
		e.ints(w, nd.Int32, []int{2}, 1, -1)
		e.ints(nd.Cumsum(nd.FromSlice(e.dev, []bool{true, true, false, true}), 0), nd.Int64, []int{4}, 1, 2, 2, 3)
		v, i := nd.Sort(nd.FromSlice(e.dev, []int32{3, 1, 3, 0}), 0, true)
		e.ints(v, nd.Int32, []int{4}, 3, 3, 1, 0)
		e.ints(i, nd.Int64, []int{4}, 0, 2, 1, 3)
		e.ints(nd.Flip(nd.FromSlice(e.dev, []uint8{1, 2, 3}), 0), nd.Uint8, []int{3}, 3, 2, 1)
	})
}

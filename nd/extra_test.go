package nd_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestExtraErrors checks that the ops of products.go, blocks.go,
// calculus.go, cov.go, histc.go, pdist.go, gcd.go, affinegrid.go and
// multinomial.go reject bad shapes, axes, dtypes and arguments with an
// *nd.Error of the right kind whose text names the op.
func TestExtraErrors(t *testing.T) {
	dev := ctx.CPU(0)
	f := func(shape ...int) *nd.NDArray { return nd.Ones(dev, nd.Float64, shape...) }
	f32 := func(shape ...int) *nd.NDArray { return nd.Ones(dev, nd.Float32, shape...) }
	i64 := func(v ...int64) *nd.NDArray { return nd.FromSlice(dev, v, len(v)) }
	vec := func(v ...float64) *nd.NDArray { return nd.FromSlice(dev, v, len(v)) }
	other := nd.Ones(ctx.CPU(1), nd.Float64, 2, 3)
	cases := []struct {
		name string
		kind nd.ErrorKind
		want string
		call func()
	}{
		{"Kron dtypes", nd.ErrDType, "nd.Kron:", func() { nd.Kron(f(2), f32(2)) }},
		{"Kron contexts", nd.ErrContext, "nd.Kron:", func() { nd.Kron(f(2, 3), other) }},
		{"Cross ranks", nd.ErrShape, "nd.Cross:", func() { nd.Cross(f(3), f(2, 3), -1) }},
		{"Cross size", nd.ErrShape, "size 3", func() { nd.Cross(f(3, 4), f(3, 4), -1) }},
		{"Cross axis", nd.ErrArgument, "nd.Cross:", func() { nd.Cross(f(2, 3), f(2, 3), 2) }},
		{"Cross broadcast", nd.ErrShape, "nd.Cross:", func() { nd.Cross(f(2, 3), f(4, 3), 1) }},
		{"Cross scalars", nd.ErrShape, "nd.Cross:", func() { nd.Cross(f(), f(), 0) }},
		{"Tensordot counts", nd.ErrArgument, "nd.Tensordot:", func() { nd.Tensordot(f(2, 3), f(3, 2), []int{1}, nil) }},
		{"Tensordot twice", nd.ErrArgument, "twice", func() { nd.Tensordot(f(2, 3), f(3, 3), []int{1, 1}, []int{0, 1}) }},
		{"Tensordot range", nd.ErrArgument, "out of range", func() { nd.Tensordot(f(2, 3), f(3, 2), []int{2}, []int{0}) }},
		{"Tensordot sizes", nd.ErrShape, "nd.Tensordot:", func() { nd.Tensordot(f(2, 3), f(4, 2), []int{1}, []int{0}) }},
		{"Tensordot ints", nd.ErrDType, "nd.Tensordot:", func() { nd.Tensordot(i64(1, 2), i64(1, 2), []int{0}, []int{0}) }},
		{"BlockDiag none", nd.ErrArgument, "nd.BlockDiag:", func() { nd.BlockDiag() }},
		{"BlockDiag rank", nd.ErrShape, "nd.BlockDiag:", func() { nd.BlockDiag(f(2), f(1, 2, 2)) }},
		{"BlockDiag dtypes", nd.ErrDType, "nd.BlockDiag:", func() { nd.BlockDiag(f(2), f32(2)) }},
		{"CartesianProd none", nd.ErrArgument, "nd.CartesianProd:", func() { nd.CartesianProd() }},
		{"CartesianProd matrix", nd.ErrShape, "nd.CartesianProd:", func() { nd.CartesianProd(f(2), f(2, 2)) }},
		{"Vander matrix", nd.ErrShape, "nd.Vander:", func() { nd.Vander(f(2, 2), 3, false) }},
		{"Diff scalar", nd.ErrShape, "nd.Diff:", func() { nd.Diff(f(), 1, 0, nil, nil) }},
		{"Diff order", nd.ErrArgument, "negative order", func() { nd.Diff(f(4), -1, 0, nil, nil) }},
		{"Diff axis", nd.ErrArgument, "nd.Diff:", func() { nd.Diff(f(2, 3), 1, 2, nil, nil) }},
		{"Diff prepend rank", nd.ErrShape, "nd.Diff:", func() { nd.Diff(f(2, 3), 1, 1, f(2), nil) }},
		{"Diff append sizes", nd.ErrShape, "nd.Diff:", func() { nd.Diff(f(2, 3), 1, 1, nil, f(3, 1)) }},
		{"Diff dtypes", nd.ErrDType, "nd.Diff:", func() { nd.Diff(f(2, 3), 1, 1, f32(2, 1), nil) }},
		{"Rot90 vector", nd.ErrShape, "nd.Rot90:", func() { nd.Rot90(f(3), 1, [2]int{0, 0}) }},
		{"Rot90 same axis", nd.ErrArgument, "nd.Rot90:", func() { nd.Rot90(f(2, 3), 1, [2]int{0, -2}) }},
		{"Rot90 axis range", nd.ErrArgument, "nd.Rot90:", func() { nd.Rot90(f(2, 3), 1, [2]int{0, 2}) }},
		{"Trapezoid ints", nd.ErrDType, "nd.Trapezoid:", func() { nd.Trapezoid(i64(1, 2), 1, 0) }},
		{"Trapezoid scalar", nd.ErrShape, "nd.Trapezoid:", func() { nd.Trapezoid(f(), 1, 0) }},
		{"TrapezoidX positions", nd.ErrShape, "one position per sample", func() { nd.TrapezoidX(f(2, 3), f(4), -1) }},
		{"TrapezoidX broadcast", nd.ErrShape, "nd.TrapezoidX:", func() { nd.TrapezoidX(f(2, 3), f(4, 3), 1) }},
		{"CumulativeTrapezoid axis", nd.ErrArgument, "nd.CumulativeTrapezoid:", func() { nd.CumulativeTrapezoid(f(2, 3), 1, -3) }},
		{"CumulativeTrapezoidX dtypes", nd.ErrDType, "nd.CumulativeTrapezoidX:", func() { nd.CumulativeTrapezoidX(f(2, 3), f32(3), 1) }},
		{"Cov rank", nd.ErrShape, "nd.Cov:", func() { nd.Cov(f(2, 2, 2), 1, nil, nil) }},
		{"Cov ints", nd.ErrDType, "nd.Cov:", func() { nd.Cov(i64(1, 2), 1, nil, nil) }},
		{"Cov float fweights", nd.ErrDType, "fweights", func() { nd.Cov(f(2, 3), 1, f(3), nil) }},
		{"Cov fweights length", nd.ErrShape, "fweights", func() { nd.Cov(f(2, 3), 1, i64(1, 2), nil) }},
		{"Cov negative fweights", nd.ErrArgument, "negative", func() { nd.Cov(f(2, 3), 1, i64(1, -1, 2), nil) }},
		{"Cov aweights dtype", nd.ErrDType, "nd.Cov:", func() { nd.Cov(f(2, 3), 1, nil, f32(3)) }},
		{"Cov negative aweights", nd.ErrArgument, "negative", func() { nd.Cov(f(2, 3), 1, nil, vec(1, -1, 2)) }},
		{"Cov NaN aweights", nd.ErrArgument, "NaN", func() { nd.Cov(f(2, 3), 1, nil, vec(1, math.NaN(), 2)) }},
		{"Cov zero weights", nd.ErrArgument, "sum to zero", func() { nd.Cov(f(2, 3), 1, i64(0, 0, 0), nil) }},
		{"Cov contexts", nd.ErrContext, "nd.Cov:", func() { nd.Cov(f(2, 3), 1, nil, nd.Ones(ctx.CPU(1), nd.Float64, 3)) }},
		{"Corrcoef rank", nd.ErrShape, "nd.Corrcoef:", func() { nd.Corrcoef(f(2, 2, 2)) }},
		{"Histc bins", nd.ErrArgument, "nd.Histc:", func() { nd.Histc(f(3), 0, 0, 1) }},
		{"Histc ints", nd.ErrDType, "nd.Histc:", func() { nd.Histc(i64(1, 2), 2, 0, 1) }},
		{"Histc infinite", nd.ErrArgument, "not finite", func() { nd.Histc(f(3), 2, 0, math.Inf(1)) }},
		{"Histc order", nd.ErrArgument, "larger than min", func() { nd.Histc(f(3), 2, 1, 0) }},
		{"Histc NaN range", nd.ErrArgument, "not finite", func() { nd.Histc(vec(1, math.NaN()), 2, 0, 0) }},
		{"Pdist vector", nd.ErrShape, "nd.Pdist:", func() { nd.Pdist(f(3), 2) }},
		{"Pdist negative p", nd.ErrArgument, "nd.Pdist:", func() { nd.Pdist(f(3, 2), -1) }},
		{"Pdist NaN p", nd.ErrArgument, "nd.Pdist:", func() { nd.Pdist(f(3, 2), math.NaN()) }},
		{"Pdist ints", nd.ErrDType, "nd.Pdist:", func() { nd.Pdist(nd.Zeros(dev, nd.Int64, 2, 2), 2) }},
		{"Gcd floats", nd.ErrDType, "nd.Gcd:", func() { nd.Gcd(f(2), f(2)) }},
		{"Gcd bools", nd.ErrDType, "nd.Gcd:", func() { nd.Gcd(nd.Zeros(dev, nd.Bool, 2), nd.Zeros(dev, nd.Bool, 2)) }},
		{"Gcd dtypes", nd.ErrDType, "nd.Gcd:", func() { nd.Gcd(i64(1, 2), nd.FromSlice(dev, []int32{1, 2}, 2)) }},
		{"Gcd broadcast", nd.ErrShape, "nd.Gcd:", func() { nd.Gcd(i64(1, 2), i64(1, 2, 3)) }},
		{"Lcm floats", nd.ErrDType, "nd.Lcm:", func() { nd.Lcm(f(2), f(2)) }},
		{"AffineGrid size", nd.ErrArgument, "nd.AffineGrid:", func() { nd.AffineGrid(f(1, 2, 3), []int{1, 1, 2}, false) }},
		{"AffineGrid theta", nd.ErrShape, "nd.AffineGrid:", func() { nd.AffineGrid(f(1, 2, 3), []int{1, 1, 2, 2, 2}, false) }},
		{"AffineGrid batch", nd.ErrShape, "nd.AffineGrid:", func() { nd.AffineGrid(f(2, 2, 3), []int{1, 1, 2, 2}, false) }},
		{"AffineGrid zero size", nd.ErrArgument, "positive", func() { nd.AffineGrid(f(1, 2, 3), []int{1, 1, 0, 2}, false) }},
		{"AffineGrid ints", nd.ErrDType, "nd.AffineGrid:", func() { nd.AffineGrid(nd.Zeros(dev, nd.Int64, 1, 2, 3), []int{1, 1, 2, 2}, false) }},
		{"Multinomial rank", nd.ErrShape, "nd.Multinomial:", func() { nd.Multinomial(f(2, 2, 2), 1, true) }},
		{"Multinomial ints", nd.ErrDType, "nd.Multinomial:", func() { nd.Multinomial(i64(1, 2), 1, true) }},
		{"Multinomial count", nd.ErrArgument, "at least one", func() { nd.Multinomial(f(3), 0, true) }},
		{"Multinomial negative", nd.ErrArgument, "non-negative", func() { nd.Multinomial(vec(1, -1), 1, true) }},
		{"Multinomial NaN", nd.ErrArgument, "non-negative", func() { nd.Multinomial(vec(1, math.NaN()), 1, true) }},
		{"Multinomial Inf", nd.ErrArgument, "finite", func() { nd.Multinomial(vec(1, math.Inf(1)), 1, false) }},
		{"Multinomial zero row", nd.ErrArgument, "row 1", func() { nd.Multinomial(nd.FromSlice(dev, []float64{1, 0, 0, 0}, 2, 2), 1, true) }},
		{"Multinomial categories", nd.ErrArgument, "without replacement", func() { nd.Multinomial(f(3), 4, false) }},
		{"Multinomial non-zero", nd.ErrArgument, "2 non-zero", func() { nd.Multinomial(vec(1, 0, 2), 3, false) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := nd.Catch(c.call)
			if err == nil {
				t.Fatal("no error")
			}
			var e *nd.Error
			if !errors.As(err, &e) || e.Kind != c.kind {
				t.Errorf("error %v, want kind %v", err, c.kind)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestHistcSkipsNaN checks that NaNs and elements outside the range are
// not counted, and that half arrays count in float32 and come back in
// their dtype.
func TestHistcSkipsNaN(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.FromSlice(dev, []float64{math.NaN(), 0.5, -3, 1, math.Inf(1), math.NaN()}, 6)
	if got := nd.Histc(x, 2, 0, 1).Float64s(); !slices.Equal(got, []float64{0, 2}) {
		t.Errorf("Histc with NaNs = %v, want [0 2]", got)
	}
	h := nd.FromSlice(dev, []float32{0.25, 0.5, 0.75, 1}, 4).AsType(nd.BFloat16)
	got := nd.Histc(h, 4, 0, 1) // 1 falls in the last bin
	if got.DType() != nd.BFloat16 || !slices.Equal(got.Float64s(), []float64{0, 1, 1, 2}) {
		t.Errorf("Histc of bfloat16 = %v %v, want bfloat16 [0 1 1 2]", got.DType(), got.Float64s())
	}
}

// TestExtraOnOtherContext checks that the ops compute where their inputs
// live: on cpu(1), results stay there.
func TestExtraOnOtherContext(t *testing.T) {
	dev := ctx.CPU(1)
	x := nd.FromSlice(dev, []float64{0, 1, 2, 2, 1, 3}, 2, 3)
	ints := nd.FromSlice(dev, []int64{4, 6, 9}, 3)
	theta := nd.FromSlice(dev, []float64{1, 0, 0, 0, 1, 0}, 1, 2, 3)
	for name, out := range map[string]*nd.NDArray{
		"Kron": nd.Kron(x, x), "Cross": nd.Cross(x, x, 1), "Tensordot": nd.Tensordot(x, x, []int{1}, []int{1}),
		"BlockDiag": nd.BlockDiag(x, x), "Vander": nd.Vander(nd.Reshape(x, 6), 3, false),
		"Diff": nd.Diff(x, 1, 1, nil, x), "Rot90": nd.Rot90(x, 1, [2]int{0, 1}), "Trapezoid": nd.TrapezoidX(x, x, 1),
		"Cov": nd.Cov(x, 1, nil, nil), "Corrcoef": nd.Corrcoef(x), "Histc": nd.Histc(x, 3, 0, 0),
		"Pdist": nd.Pdist(x, 2), "Gcd": nd.Gcd(ints, ints), "Lcm": nd.Lcm(ints, ints),
		"AffineGrid": nd.AffineGrid(theta, []int{1, 1, 2, 2}, false), "Multinomial": nd.Multinomial(x, 2, false),
	} {
		if out.Context() != dev {
			t.Errorf("%s: result on %v, want %v", name, out.Context(), dev)
		}
	}
}

// TestGcdWraps checks the integer edge cases PyTorch shares: gcd of the
// most negative Int64 with 0 wraps to itself, Lcm's product wraps, Uint8
// works, and Gcd is 0 only where both are.
func TestGcdWraps(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.FromSlice(dev, []int64{math.MinInt64, 1<<40 + 1, 0, 5}, 4)
	b := nd.FromSlice(dev, []int64{0, 1<<40 - 1, 0, 0}, 4)
	if got := nd.Gcd(a, b).Int64s(); !slices.Equal(got, []int64{math.MinInt64, 1, 0, 5}) {
		t.Errorf("Gcd = %v", got)
	}
	if got := nd.Lcm(a, b).Int64s(); got[1] != 1 { // (2^80 − 1) mod 2^64 = −1, then |−1|
		t.Errorf("Lcm of 2^40±1 = %d, want 1 (wrapped, as torch's)", got[1])
	}
	u := nd.Gcd(nd.FromSlice(dev, []uint8{255, 12}, 2), nd.FromSlice(dev, []uint8{85, 18}, 2))
	if u.DType() != nd.Uint8 || !slices.Equal(u.Int64s(), []int64{85, 6}) {
		t.Errorf("Gcd of uint8 = %v %v", u.DType(), u.Int64s())
	}
}

// TestPdistZeroDistanceGradient checks PyTorch's convention: a zero
// distance gives its rows no gradient, for every p.
func TestPdistZeroDistanceGradient(t *testing.T) {
	dev := ctx.CPU(0)
	for _, p := range []float64{0, 0.5, 1, 1.5, 2, 3, math.Inf(1)} {
		x := nd.FromSlice(dev, []float64{1, -2, 0.5, 1, -2, 0.5}, 2, 3)
		x.AttachGrad(nd.GradWrite)
		nd.DefaultSession().Record(func() { nd.Backward([]*nd.NDArray{nd.Sum(nd.Pdist(x, p))}, nil, false) })
		for _, g := range x.Grad().Float64s() {
			if g != 0 {
				t.Errorf("p = %g: gradient %v at a zero distance, want zeros", p, x.Grad().Float64s())
				break
			}
		}
	}
}

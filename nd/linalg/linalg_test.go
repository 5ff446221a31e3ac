package linalg_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/linalg"
	"github.com/goluon/goluon/nd/ndtest"
)

type tensor struct {
	Shape []int
	Data  []float64
}

// ramp is torch.linspace(-1, 1, n) shaped like a (ones when n < 2).
func ramp(a *nd.NDArray) *nd.NDArray {
	n := a.Size()
	if n < 2 {
		return nd.OnesLike(a)
	}
	return nd.Reshape(nd.Linspace(a.Context(), a.DType(), -1, 1, n), a.Shape()...)
}

// ramp2 is ramp squared: a head under which a loss of squared orthonormal
// vectors is not a constant.
func ramp2(a *nd.NDArray) *nd.NDArray { r := ramp(a); return nd.Mul(r, r) }

// TestGoldens compares every function with torch.linalg
// (testdata/make_goldens.py): values and gradients in float64, and values
// in float32.
func TestGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Op                     string
			Inputs, Outputs, Grads []tensor
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	for i, c := range g.Cases {
		for _, dt := range []nd.DType{nd.Float64, nd.Float32} {
			t.Run(fmt.Sprint(i, c.Op, dt), func(t *testing.T) {
				in := make([]*nd.NDArray, len(c.Inputs))
				for j, x := range c.Inputs {
					in[j] = nd.FromSlice(dev, x.Data, x.Shape...).AsType(dt)
					in[j].AttachGrad(nd.GradWrite)
				}
				var outs []*nd.NDArray
				autograd.Record(func() {
					var loss *nd.NDArray
					switch c.Op {
					case "Inv":
						outs = []*nd.NDArray{linalg.Inv(in[0])}
					case "Det":
						outs = []*nd.NDArray{linalg.Det(in[0])}
					case "Slogdet":
						s, l := linalg.Slogdet(in[0])
						outs = []*nd.NDArray{s, l}
						loss = nd.Sum(nd.Mul(l, ramp(l)))
					case "Solve":
						outs = []*nd.NDArray{linalg.Solve(in[0], in[1])}
					case "Cholesky":
						outs = []*nd.NDArray{linalg.Cholesky(in[0])}
					case "Eigh":
						w, v := linalg.Eigh(in[0])
						outs = []*nd.NDArray{w, v}
						loss = nd.Add(nd.Sum(nd.Mul(w, ramp(w))), nd.Sum(nd.Mul(nd.Mul(v, v), ramp2(v))))
					case "Svd":
						u, sv, vh := linalg.Svd(in[0])
						outs = []*nd.NDArray{u, sv, vh}
						loss = nd.Add(nd.Add(nd.Sum(nd.Mul(nd.Mul(u, u), ramp2(u))), nd.Sum(nd.Mul(sv, ramp(sv)))),
							nd.Sum(nd.Mul(nd.Mul(vh, vh), ramp2(vh))))
					case "Eigvals":
						w, _ := linalg.Eigh(in[0])
						outs = []*nd.NDArray{w}
					case "Svdvals":
						outs = []*nd.NDArray{linalg.Svdvals(in[0])}
					case "MatrixNormfro", "MatrixNormnuc", "MatrixNorm2":
						outs = []*nd.NDArray{linalg.MatrixNorm(in[0], c.Op[len("MatrixNorm"):])}
					case "Pinv":
						outs = []*nd.NDArray{linalg.Pinv(in[0], 0)}
					case "Lstsq":
						outs = []*nd.NDArray{linalg.Lstsq(in[0], in[1])}
					case "Qr":
						q, r := linalg.Qr(in[0])
						outs = []*nd.NDArray{q, r}
						loss = nd.Add(nd.Sum(nd.Mul(q, ramp(q))), nd.Sum(nd.Mul(r, ramp(r))))
					default:
						t.Fatalf("unknown op %q", c.Op)
					}
					if loss == nil {
						loss = nd.Sum(nd.Mul(outs[0], ramp(outs[0])))
					}
					autograd.Backward(loss)
				})
				tol := 1e-12
				if dt == nd.Float32 {
					tol = 2e-5
				}
				for j, want := range c.Outputs {
					if !slices.Equal(outs[j].Shape(), want.Shape) {
						t.Fatalf("output %d of shape %v, torch %v", j, outs[j].Shape(), want.Shape)
					}
					got := outs[j].Float64s()
					if c.Op == "Eigh" && j == 1 || c.Op == "Svd" && j == 0 {
						got, want.Data = signFixed(got, want.Shape), signFixed(want.Data, want.Shape)
					}
					if c.Op == "Svd" && j == 2 { // rows of Vh: columns of V
						got, want.Data = signFixedRows(got, want.Shape), signFixedRows(want.Data, want.Shape)
					}
					near(t, fmt.Sprint("output ", j), got, want.Data, tol)
				}
				if dt == nd.Float64 {
					for j, x := range in {
						near(t, fmt.Sprint("gradient ", j), x.Grad().Float64s(), c.Grads[j].Data, 1e-10)
					}
				}
			})
		}
	}
}

// signFixed flips each vector stored as a column of the matrices of
// shape so that its largest entry is positive.
func signFixed(v []float64, shape []int) []float64 {
	out := slices.Clone(v)
	rows, cols := shape[len(shape)-2], shape[len(shape)-1]
	for m := 0; m+rows*cols <= len(v) && rows*cols > 0; m += rows * cols {
		for c := range cols {
			big := 0.0
			for r := range rows {
				if x := v[m+r*cols+c]; math.Abs(x) > math.Abs(big) {
					big = x
				}
			}
			if big < 0 {
				for r := range rows {
					out[m+r*cols+c] = -v[m+r*cols+c]
				}
			}
		}
	}
	return out
}

// signFixedRows is signFixed for vectors stored as rows.
func signFixedRows(v []float64, shape []int) []float64 {
	out := slices.Clone(v)
	n := shape[len(shape)-1]
	for r := 0; r+n <= len(v); r += n {
		big := 0.0
		for _, x := range v[r : r+n] {
			if math.Abs(x) > math.Abs(big) {
				big = x
			}
		}
		if big < 0 {
			for i := r; i < r+n; i++ {
				out[i] = -v[i]
			}
		}
	}
	return out
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, torch %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) && !(math.IsInf(want[i], -1) && math.IsInf(got[i], -1)) {
			t.Fatalf("%s %d: %v, torch %v", what, i, got[i], want[i])
		}
	}
}

// TestGradCheck checks every gradient against central differences.
func TestGradCheck(t *testing.T) {
	dev := ctx.CPU(0)
	square := func(seed uint64, shape ...int) *nd.NDArray {
		n := shape[len(shape)-1]
		return nd.Add(ndtest.Rand(dev, seed, -1, 1, shape...), nd.MulScalar(nd.Eye(dev, nd.Float64, n, n, 0), 3))
	}
	spd := func(seed uint64, shape ...int) *nd.NDArray {
		m := ndtest.Rand(dev, seed, -1, 1, shape...)
		n := shape[len(shape)-1]
		return nd.Add(nd.MatMul(m, nd.SwapAxes(m, -1, -2)), nd.MulScalar(nd.Eye(dev, nd.Float64, n, n, 0), float64(n)))
	}
	sym := func(f func(a *nd.NDArray) *nd.NDArray) func(in []*nd.NDArray) *nd.NDArray {
		// Perturbations of a symmetric input stay symmetric: the functions
		// read one triangle.
		return func(in []*nd.NDArray) *nd.NDArray {
			return f(nd.MulScalar(nd.Add(in[0], nd.SwapAxes(in[0], -1, -2)), 0.5))
		}
	}
	cases := []struct {
		name string
		f    func(in []*nd.NDArray) *nd.NDArray
		in   []*nd.NDArray
	}{
		{"Inv", func(in []*nd.NDArray) *nd.NDArray { return linalg.Inv(in[0]) }, []*nd.NDArray{square(1, 2, 3, 3)}},
		{"Det", func(in []*nd.NDArray) *nd.NDArray { return linalg.Det(in[0]) }, []*nd.NDArray{square(2, 2, 3, 3)}},
		{"Slogdet", func(in []*nd.NDArray) *nd.NDArray { _, l := linalg.Slogdet(in[0]); return l }, []*nd.NDArray{square(3, 3, 3)}},
		{"Solve", func(in []*nd.NDArray) *nd.NDArray { return linalg.Solve(in[0], in[1]) }, []*nd.NDArray{square(4, 2, 1, 3, 3), ndtest.Rand(dev, 5, -1, 1, 2, 3, 2)}},
		{"Cholesky", sym(linalg.Cholesky), []*nd.NDArray{spd(6, 2, 3, 3)}},
		{"EighValues", sym(func(a *nd.NDArray) *nd.NDArray { w, _ := linalg.Eigh(a); return w }), []*nd.NDArray{spd(7, 3, 3)}},
		{"Svd", func(in []*nd.NDArray) *nd.NDArray {
			u, sv, vh := linalg.Svd(in[0])
			return nd.Concat([]*nd.NDArray{nd.Reshape(nd.Mul(u, u), -1), sv, nd.Reshape(nd.Mul(vh, vh), -1)}, 0)
		}, []*nd.NDArray{ndtest.Rand(dev, 9, -1, 1, 4, 3)}},
		{"SvdWide", func(in []*nd.NDArray) *nd.NDArray {
			u, _, vh := linalg.Svd(in[0])
			return nd.Concat([]*nd.NDArray{nd.Reshape(nd.Mul(u, u), -1), nd.Reshape(nd.Mul(vh, vh), -1)}, 0)
		}, []*nd.NDArray{ndtest.Rand(dev, 10, -1, 1, 2, 4)}},
		{"MatrixNormNuc", func(in []*nd.NDArray) *nd.NDArray { return linalg.MatrixNorm(in[0], "nuc") }, []*nd.NDArray{ndtest.Rand(dev, 11, -1, 1, 2, 3, 4)}},
		{"Pinv", func(in []*nd.NDArray) *nd.NDArray { return linalg.Pinv(in[0], 0) }, []*nd.NDArray{ndtest.Rand(dev, 12, -1, 1, 4, 3)}},
		{"Lstsq", func(in []*nd.NDArray) *nd.NDArray { return linalg.Lstsq(in[0], in[1]) }, []*nd.NDArray{ndtest.Rand(dev, 13, -1, 1, 5, 2), ndtest.Rand(dev, 14, -1, 1, 5)}},
		{"Qr", func(in []*nd.NDArray) *nd.NDArray {
			q, r := linalg.Qr(in[0])
			return nd.Add(nd.Sum(q, -2), nd.Sum(r, -2))
		}, []*nd.NDArray{ndtest.Rand(dev, 15, -1, 1, 2, 4, 3)}},
		{"EighVectors", sym(func(a *nd.NDArray) *nd.NDArray { _, v := linalg.Eigh(a); return nd.Mul(v, v) }), []*nd.NDArray{spd(8, 3, 3)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { ndtest.CheckGrad(t, c.f, c.in, ndtest.GradTol{}) })
	}
}

// TestErrors: singular and indefinite matrices, wrong shapes and dtypes
// are *nd.Error values.
func TestErrors(t *testing.T) {
	dev := ctx.CPU(0)
	singular := nd.FromSlice(dev, []float64{1, 2, 2, 4, 1, 0, 0, 1}, 2, 2, 2)
	for name, f := range map[string]func(){
		"Inv singular":   func() { linalg.Inv(singular) },
		"Solve singular": func() { linalg.Solve(singular, nd.Ones(dev, nd.Float64, 2, 2)) },
		"Cholesky":       func() { linalg.Cholesky(nd.FromSlice(dev, []float64{1, 2, 2, 1}, 2, 2)) },
		"not square":     func() { linalg.Det(nd.Ones(dev, nd.Float64, 2, 3)) },
		"integer":        func() { linalg.Inv(nd.FromSlice(dev, []int64{1, 0, 0, 1}, 2, 2)) },
		"rhs shape":      func() { linalg.Solve(nd.Ones(dev, nd.Float64, 3, 3), nd.Ones(dev, nd.Float64, 2, 1)) },
		"batches":        func() { linalg.Solve(nd.Ones(dev, nd.Float64, 2, 3, 3), nd.Ones(dev, nd.Float64, 3, 3, 1)) },
		"rhs dtype":      func() { linalg.Solve(nd.Ones(dev, nd.Float64, 2, 2), nd.Ones(dev, nd.Float32, 2)) },
	} {
		var e *nd.Error
		if err := nd.Catch(f); !errors.As(err, &e) {
			t.Errorf("%s: %v, want an *nd.Error", name, err)
		}
	}
	err := nd.Catch(func() { linalg.Inv(singular) })
	if want := "matrix [0] of the batch is singular"; err == nil || !contains(err.Error(), want) {
		t.Errorf("error %v does not say %q", err, want)
	}
	// Singular: sign 0 and log|det| −Inf, as torch.
	s, l := linalg.Slogdet(singular)
	if got := append(s.Float64s(), l.Float64s()...); got[0] != 0 || !math.IsInf(got[2], -1) || got[1] != 1 || got[3] != 0 {
		t.Errorf("slogdet of a singular and the identity: %v", got)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestDetExact: integer matrices have integer determinants, as torch's
// (gonum's Det rounded through exp(log|det|)).
func TestDetExact(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		v    []float64
		n    int
		want float64
	}{{[]float64{3}, 1, 3}, {[]float64{2, 1, 1, 2}, 2, 3}, {[]float64{0, 1, 1, 0}, 2, -1},
		{[]float64{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2}, 4, 16}, {[]float64{0, 0, 1, 1, 0, 0, 0, 1, 0}, 3, 1}} {
		if got := linalg.Det(nd.FromSlice(dev, c.v, c.n, c.n)).Scalar(); got != c.want {
			t.Errorf("det %v = %v, want %v", c.v, got, c.want)
		}
	}
}

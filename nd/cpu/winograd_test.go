package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// TestWinoRowKernels checks each AVX2 row kernel against its plain Go
// definition, bit for bit (NaN and ±Inf included), for 1 to 3 groups, and
// that it writes nothing but its 16 planes' slots.
func TestWinoRowKernels(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: only the Go kernels exist here")
	}
	r := rand.New(rand.NewPCG(21, 22))
	type kernel struct {
		name          string
		inRows, inLen int // rows read and their stride
		run           func(in []float32, ldi int, out []float32, ldo, groups int)
		outRows       func(groups int) (rows, width int) // rows written, values per row
	}
	planes := func(g int) (int, int) { return 16, 8 * g }
	kernels := []kernel{
		{"input", 4, 0, winoInputRow[float32], planes},
		{"gradout", 2, 0, winoGradOutRow[float32], planes},
		{"output", 16, 0, winoOutputRow[float32], func(g int) (int, int) { return 2, 16 * g }},
	}
	for _, k := range kernels {
		for groups := 1; groups <= 3; groups++ {
			t.Run(fmt.Sprintf("%s/groups=%d", k.name, groups), func(t *testing.T) {
				ldi := 16*groups + 2 + r.IntN(9)
				in := vecInputs(r, k.inRows*ldi)
				rows, width := k.outRows(groups)
				ldo := width + 1 + r.IntN(9)
				run := func(asm bool) []float32 {
					out := make([]float32, rows*ldo)
					for i := range out {
						out[i] = 42
					}
					useAsmKernel = asm
					defer func() { useAsmKernel = true }()
					k.run(in, ldi, out, ldo, groups)
					return out
				}
				got, want := run(true), run(false)
				for i := range got {
					inRow := i%ldo < width
					if !sameBits(got[i], want[i]) {
						t.Fatalf("[%d] (row %d col %d): kernel %v, Go %v", i, i/ldo, i%ldo, got[i], want[i])
					}
					if !inRow && got[i] != 42 {
						t.Fatalf("[%d]: written outside the rows", i)
					}
				}
			})
		}
	}
}

// winoCase is one convolution the Winograd tests check.
type winoCase struct{ n, c, h, w, oc, ph, pw int }

func (c winoCase) params() backend.ConvParams {
	p := convP(c.n, c.c, c.h, c.oc, 3, c.ph)
	p.InW, p.PadW = c.w, c.pw
	p.OutW = c.w + 2*c.pw - 2
	return p
}

// winoCases cover odd and even output sizes, each padding, tile rows of
// fewer and more than 8 tiles, channel counts around the micro-kernel's 6
// and 16, and (with a small winoTargetCols) several groups per chunk and a
// ragged last group.
var winoCases = []winoCase{
	{1, 1, 3, 3, 1, 0, 0},
	{2, 3, 5, 6, 2, 1, 1},
	{3, 4, 8, 7, 5, 0, 2},
	{2, 7, 9, 20, 6, 2, 0},
	{5, 2, 17, 18, 17, 1, 1},
	{4, 16, 12, 12, 16, 1, 1},
	{3, 17, 15, 15, 9, 0, 0},
	{1, 6, 33, 35, 7, 1, 2},
}

// TestWinogradMatchesIm2col runs the Winograd passes in float64 and checks
// them against the im2col ones (whose gradients the float64 gradient
// checks verify) to 1e-12: the transforms are exact algebra, so only
// rounding separates them.
func TestWinogradMatchesIm2col(t *testing.T) {
	for _, cols := range []int{8, 256} {
		defer func(v int) { winoTargetCols = v }(winoTargetCols)
		winoTargetCols = cols
		for _, c := range winoCases {
			t.Run(fmt.Sprintf("cols=%d/%v", cols, c), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.n*1000+c.c), uint64(c.h)))
				s := newConvShape(c.params())
				x := widen(randSlice(c.n*c.c*c.h*c.w, r))
				w := widen(randSlice(c.oc*c.c*9, r))
				dy := widen(randSlice(c.n*c.oc*s.ohw, r))
				check := func(pass string, got, want []float64) {
					t.Helper()
					for i := range want {
						if d := math.Abs(got[i] - want[i]); d > 1e-12*(1+math.Abs(want[i])) {
							t.Fatalf("%s [%d]: winograd %v, im2col %v", pass, i, got[i], want[i])
						}
					}
				}
				y, yWant := make([]float64, len(dy)), make([]float64, len(dy))
				winoConv2D(s, y, x, w)
				convForward(s, yWant, x, w)
				check("forward", y, yWant)

				dx, dxWant := make([]float64, len(x)), make([]float64, len(x))
				winoBackwardData(s, dx, dy, w)
				convBackwardData(s, dxWant, dy, w)
				check("data", dx, dxWant)

				dw, dwWant := make([]float64, len(w)), make([]float64, len(w))
				winoBackwardFilter(s, dw, x, dy)
				convBackwardFilter(s, dwWant, x, dy)
				check("filter", dw, dwWant)
			})
		}
	}
}

// TestWinogradFloat32 checks the float32 Winograd passes (the AVX2 path
// where there is one) against float64 im2col references, to the float32
// tolerance of the conformance suite's long sums (1e-4 absolute and
// relative), and that the kernels are reproducible run to run.
func TestWinogradFloat32(t *testing.T) {
	for _, c := range winoCases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.oc), uint64(c.w)))
			s := newConvShape(c.params())
			x := randSlice(c.n*c.c*c.h*c.w, r)
			w := randSlice(c.oc*c.c*9, r)
			dy := randSlice(c.n*c.oc*s.ohw, r)
			check := func(pass string, got []float32, want []float64) {
				t.Helper()
				for i := range want {
					if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
						t.Fatalf("%s [%d]: float32 winograd %v, float64 im2col %v", pass, i, got[i], want[i])
					}
				}
			}
			y, yWant := make([]float32, len(dy)), make([]float64, len(dy))
			winoConv2D(s, y, x, w)
			convForward(s, yWant, widen(x), widen(w))
			check("forward", y, yWant)

			dx, dxWant := make([]float32, len(x)), make([]float64, len(x))
			winoBackwardData(s, dx, dy, w)
			convBackwardData(s, dxWant, widen(dy), widen(w))
			check("data", dx, dxWant)

			dw, dwWant := make([]float32, len(w)), make([]float64, len(w))
			winoBackwardFilter(s, dw, x, dy)
			convBackwardFilter(s, dwWant, widen(x), widen(dy))
			check("filter", dw, dwWant)

			dw2 := make([]float32, len(w))
			winoBackwardFilter(s, dw2, x, dy)
			for i := range dw {
				if dw[i] != dw2[i] {
					t.Fatalf("filter gradient not reproducible at [%d]: %v then %v", i, dw[i], dw2[i])
				}
			}
		})
	}
}

// TestUseWinograd checks which convolutions take the Winograd path.
func TestUseWinograd(t *testing.T) {
	if !useAsmKernel {
		t.Skip("no AVX2: Winograd is not used on this CPU")
	}
	f32 := func(p backend.ConvParams) backend.ConvParams { p.DType = backend.Float32; return p }
	f64 := func(p backend.ConvParams) backend.ConvParams { p.DType = backend.Float64; return p }
	for _, c := range []struct {
		name string
		p    backend.ConvParams
		want bool
	}{
		{"cifar2", f32(convP(128, 32, 32, 32, 3, 0)), true},
		{"cifar4", f32(convP(128, 64, 15, 64, 3, 0)), true},
		{"float64", f64(convP(128, 32, 32, 32, 3, 0)), false},
		{"5x5", f32(convP(128, 32, 32, 32, 5, 0)), false},
		{"pad3", f32(convP(128, 32, 32, 32, 3, 3)), false},
		{"few channels", f32(convP(128, 3, 32, 32, 3, 1)), false},
		{"stride2", func() backend.ConvParams { p := f32(convP(8, 32, 32, 32, 3, 1)); p.StrideH = 2; return p }(), false},
		{"groups2", func() backend.ConvParams { p := f32(convP(8, 32, 32, 32, 3, 1)); p.Groups = 2; return p }(), false},
	} {
		if got := useWinograd(c.p); got != c.want {
			t.Errorf("%s: useWinograd = %v, want %v", c.name, got, c.want)
		}
	}
}

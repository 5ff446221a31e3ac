//go:build amd64

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The ZMM kernels (kernels512_amd64.go) against their AVX2 twins: the
// elementwise ones bit for bit, on random data with NaN (several
// payloads), ±Inf, ±0 and subnormals, for every length up to 70 (all
// loop tails) and a few long ones, at unaligned offsets, in place and not,
// with guard values around every buffer; the reductions against a float64
// reference to the rounding bound their comments state.

// needZMM skips a test on a CPU that cannot run the ZMM kernels.
func needZMM(t testing.TB) {
	t.Helper()
	if DetectedISA() < ISAAVX512 {
		t.Skipf("this CPU or OS supports %s at most, not AVX-512 F/BW/VL: the ZMM kernels cannot run here", DetectedISA())
	}
}

// zmmLengths are the lengths the elementwise tests take.
var zmmLengths = func() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 255, 1000, 4099)
}()

// zmmSpecials are the special values the inputs hold (as bits): ±0, NaNs
// of both signs with and without payloads (a signalling one too), ±Inf,
// subnormals.
var zmmSpecials = []uint32{
	0, 0x80000000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0x7f800001,
	0x7f800000, 0xff800000, 0x00000001, 0x80000003,
}

// zmmInputs returns n values: about one in six special, the rest normally
// distributed.
func zmmInputs(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		if r.IntN(6) == 0 {
			s[i] = math.Float32frombits(zmmSpecials[r.IntN(len(zmmSpecials))])
		} else {
			s[i] = float32(r.NormFloat64())
		}
	}
	return s
}

// zmmGuard is the value (a signalling NaN) around every test buffer.
const zmmGuard = 0x7fbadbad

// zmmBuf returns a buffer holding vals at offset off, with guard values
// before and 20 after, and the slice of vals in it.
func zmmBuf(vals []float32, off int) (buf, s []float32) {
	buf = make([]float32, off+len(vals)+20)
	for i := range buf {
		buf[i] = math.Float32frombits(zmmGuard)
	}
	s = buf[off : off+len(vals)]
	copy(s, vals)
	return buf, s
}

// ptr returns the address of s's first element, also when s is empty.
func ptr(s []float32) *float32 { return &s[:1][0] }

// sameBuf fails t unless got and want hold the same bits.
func sameBuf(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if g, w := math.Float32bits(got[i]), math.Float32bits(want[i]); g != w {
			t.Fatalf("%s [%d]: ZMM %#08x (%v), AVX2 %#08x (%v)", what, i, g, got[i], w, want[i])
		}
	}
}

// elemKernel runs one elementwise kernel: d from the inputs in and the
// scalars s.
type elemKernel func(d *float32, in []*float32, s []float32, n int)

// binK adapts a kernel d = a op b.
func binK(k func(d, a, b *float32, n int)) elemKernel {
	return func(d *float32, in []*float32, _ []float32, n int) { k(d, in[0], in[1], n) }
}

// scalK adapts a kernel d = a op s.
func scalK(k func(d, a *float32, s float32, n int)) elemKernel {
	return func(d *float32, in []*float32, s []float32, n int) { k(d, in[0], s[0], n) }
}

// unK adapts a kernel d = f(a).
func unK(k func(d, a *float32, n int)) elemKernel {
	return func(d *float32, in []*float32, _ []float32, n int) { k(d, in[0], n) }
}

// zmmElemCases pairs every elementwise ZMM kernel with its AVX2 twin.
var zmmElemCases = []struct {
	name           string
	ins, scalars   int
	avx2, zmm      elemKernel
	nanScalarLoose bool // see addReluScalarF32x512: a NaN scalar plus a NaN input may give either NaN
}{
	{"add", 2, 0, binK(addF32), binK(addF32x512), false},
	{"sub", 2, 0, binK(subF32), binK(subF32x512), false},
	{"mul", 2, 0, binK(mulF32), binK(mulF32x512), false},
	{"div", 2, 0, binK(divF32), binK(divF32x512), false},
	{"addScalar", 1, 1, scalK(addScalarF32), scalK(addScalarF32x512), false},
	{"subScalar", 1, 1, scalK(subScalarF32), scalK(subScalarF32x512), false},
	{"mulScalar", 1, 1, scalK(mulScalarF32), scalK(mulScalarF32x512), false},
	{"divScalar", 1, 1, scalK(divScalarF32), scalK(divScalarF32x512), false},
	{"relu", 1, 0, unK(reluF32), unK(reluF32x512), false},
	{"sqrt", 1, 0, unK(sqrtF32), unK(sqrtF32x512), false},
	{"reluGrad", 2, 0, binK(reluGradF32), binK(reluGradF32x512), false},
	{"addRelu", 2, 0, binK(addReluF32), binK(addReluF32x512), false},
	{"addReluScalar", 1, 1, scalK(addReluScalarF32), scalK(addReluScalarF32x512), true},
	{"scaleShift", 1, 2,
		func(d *float32, in []*float32, s []float32, n int) { scaleShiftF32(d, in[0], n, s[0], s[1]) },
		func(d *float32, in []*float32, s []float32, n int) { scaleShiftF32x512(d, in[0], n, s[0], s[1]) }, false},
	{"axpbyc", 2, 3,
		func(d *float32, in []*float32, s []float32, n int) { axpbycF32(d, in[0], in[1], n, s[0], s[1], s[2]) },
		func(d *float32, in []*float32, s []float32, n int) {
			axpbycF32x512(d, in[0], in[1], n, s[0], s[1], s[2])
		}, false},
	{"fma", 3, 0,
		func(d *float32, in []*float32, _ []float32, n int) { fmaF32(d, in[0], in[1], in[2], n) },
		func(d *float32, in []*float32, _ []float32, n int) { fmaF32x512(d, in[0], in[1], in[2], n) }, false},
	{"reluGradSum.d", 2, 0,
		func(d *float32, in []*float32, _ []float32, n int) { reluGradSumF32(d, in[0], in[1], n) },
		func(d *float32, in []*float32, _ []float32, n int) { reluGradSumF32x512(d, in[0], in[1], n) }, false},
}

// zmmScalars are the scalars the scalar kernels take in turn.
var zmmScalars = []float32{1.5, -0.75, 0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 3e-39}

// TestZMMElementwise checks every elementwise ZMM kernel against its AVX2
// twin bit for bit, into a separate output and in place (d = the first
// input), and that nothing outside the n outputs is written.
func TestZMMElementwise(t *testing.T) {
	needZMM(t)
	for _, c := range zmmElemCases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(512, uint64(len(c.name))))
			for i, n := range zmmLengths {
				vals := make([][]float32, c.ins)
				for j := range vals {
					vals[j] = zmmInputs(r, n)
				}
				s := make([]float32, c.scalars)
				for j := range s {
					s[j] = zmmScalars[(i+j)%len(zmmScalars)]
					if r.IntN(2) == 0 {
						s[j] = float32(r.NormFloat64())
					}
				}
				for _, inPlace := range []bool{false, true} {
					offs := []int{r.IntN(16), r.IntN(16), r.IntN(16), r.IntN(16)}
					run := func(k elemKernel) (out []float32, ins [][]float32) {
						in := make([]*float32, c.ins)
						ins = make([][]float32, c.ins)
						for j := range in {
							ins[j], _ = zmmBuf(vals[j], offs[j+1])
							in[j] = &ins[j][offs[j+1]]
						}
						out, d := zmmBuf(make([]float32, n), offs[0])
						dp := ptr(d)
						if inPlace {
							out, dp = ins[0], in[0]
						}
						k(dp, in, s, n)
						return out, ins
					}
					got, gotIns := run(c.zmm)
					want, wantIns := run(c.avx2)
					what := fmt.Sprintf("n=%d in place=%v s=%v", n, inPlace, s)
					if c.nanScalarLoose && len(s) > 0 && s[0] != s[0] {
						looseNaNs(got, want)
					}
					sameBuf(t, what, got, want)
					for j := range gotIns {
						sameBuf(t, what+" input", gotIns[j], wantIns[j])
					}
					for j, v := range got {
						o := offs[0]
						if inPlace {
							o = offs[1]
						}
						if (j < o || j >= o+n) && math.Float32bits(v) != zmmGuard {
							t.Fatalf("%s: [%d] outside the output written: %v", what, j-o, v)
						}
					}
				}
			}
		})
	}
}

// looseNaNs makes got[i] want[i] where both are NaN.
func looseNaNs(got, want []float32) {
	for i := range got {
		if got[i] != got[i] && want[i] != want[i] {
			got[i] = want[i]
		}
	}
}

// TestZMMRows checks copyRowsF32x512 and addRowsF32x512 against their AVX2
// twins (copyRows against Go's copy below width 8, which copyRowsF32 does
// not take) for 1 to 3 rows of 1 to 40 values with gaps between rows.
func TestZMMRows(t *testing.T) {
	needZMM(t)
	r := rand.New(rand.NewPCG(5, 12))
	for rows := 1; rows <= 3; rows++ {
		for width := 1; width <= 40; width++ {
			ldd, lds := width+r.IntN(5), width+r.IntN(20)
			src := zmmInputs(r, (rows-1)*lds+width)
			dst := zmmInputs(r, (rows-1)*ldd+width)
			offS, offD := r.IntN(16), r.IntN(16)
			type kern func(d, s *float32, rows, width, ldd, lds int)
			run := func(k kern) []float32 {
				_, s := zmmBuf(src, offS)
				buf, d := zmmBuf(dst, offD)
				if k == nil { // Go's copy
					for i := range rows {
						copy(d[i*ldd:][:width], s[i*lds:][:width])
					}
					return buf
				}
				k(&d[0], &s[0], rows, width, ldd, lds)
				return buf
			}
			what := fmt.Sprintf("rows=%d width=%d ldd=%d lds=%d", rows, width, ldd, lds)
			var copyWant []float32
			if width >= 8 {
				copyWant = run(copyRowsF32)
			} else {
				copyWant = run(nil)
			}
			sameBuf(t, "copyRows "+what, run(copyRowsF32x512), copyWant)
			sameBuf(t, "addRows "+what, run(addRowsF32x512), run(addRowsF32))
		}
	}
}

// TestZMMAccF32 checks accF32x512 against accF32 (the same float64
// additions) bit for bit, and that it writes nothing past n.
func TestZMMAccF32(t *testing.T) {
	needZMM(t)
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range zmmLengths {
		off := r.IntN(16)
		_, s := zmmBuf(zmmInputs(r, n), off)
		init := make([]float64, n+9)
		for i := range init {
			init[i] = r.NormFloat64()
		}
		got, want := append([]float64(nil), init...), append([]float64(nil), init...)
		accF32x512(&got[0], ptr(s), n)
		accF32(&want[0], ptr(s), n)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n=%d [%d]: ZMM %v, AVX2 %v", n, i, got[i], want[i])
			}
		}
	}
}

// refSum returns Σ terms (Neumaier's compensated sum, far more accurate
// than the kernels) and Σ|terms|.
func refSum(terms []float64) (sum, abs float64) {
	var c float64
	for _, v := range terms {
		t := sum + v
		if math.Abs(sum) >= math.Abs(v) {
			c += (sum - t) + v
		} else {
			c += (v - t) + sum
		}
		sum = t
		abs += math.Abs(v)
	}
	return sum + c, abs
}

// sumTol is the tolerance of a float64 sum of n terms whose absolute
// values add up to abs: the bound of the kernels' comments, (n+16)·2⁻⁵³·abs,
// with the reference's own rounding on top.
func sumTol(n int, sum, abs float64) float64 {
	return float64(n+16)*0x1p-53*abs + 0x1p-52*math.Abs(sum)
}

// TestZMMReductions checks sumF32x512, bnSumsF32x512 and the sum of
// reluGradSumF32x512 (whose d TestZMMElementwise checks) against a float64
// reference within sumTol (the AVX2 twins too, to show the bound is theirs
// as well), and that NaN and ±Inf propagate.
func TestZMMReductions(t *testing.T) {
	needZMM(t)
	r := rand.New(rand.NewPCG(15, 16))
	check := func(what string, n int, got, want, abs float64) {
		t.Helper()
		if d := math.Abs(got - want); !(d <= sumTol(n, want, abs)) {
			t.Fatalf("%s n=%d: %v, reference %v (off by %g, tolerance %g)", what, n, got, want, d, sumTol(n, want, abs))
		}
	}
	lengths := append(append([]int(nil), zmmLengths...), 1<<16+5)
	for _, n := range lengths {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp(4*r.NormFloat64()))
			y[i] = float32(r.NormFloat64())
		}
		_, xs := zmmBuf(x, r.IntN(16))
		_, ys := zmmBuf(y, r.IntN(16))
		tx, txy, tg := make([]float64, n), make([]float64, n), make([]float64, 0, n)
		for i := range x {
			tx[i], txy[i] = float64(x[i]), float64(x[i])*float64(y[i])
			if 0 < y[i] {
				tg = append(tg, float64(x[i]))
			}
		}
		sx, ax := refSum(tx)
		sxy, axy := refSum(txy)
		sg, ag := refSum(tg)
		for _, k := range []struct {
			name  string
			sum   func(s *float32, n int) float64
			sums  func(x, y *float32, n int) (float64, float64)
			rgsum func(d, y, g *float32, n int) float64
		}{{"AVX2", sumF32, bnSumsF32, reluGradSumF32}, {"ZMM", sumF32x512, bnSumsF32x512, reluGradSumF32x512}} {
			check(k.name+" sumF32", n, k.sum(ptr(xs), n), sx, ax)
			gx, gxy := k.sums(ptr(xs), ptr(ys), n)
			check(k.name+" bnSumsF32 Σx", n, gx, sx, ax)
			check(k.name+" bnSumsF32 Σxy", n, gxy, sxy, axy)
			d := make([]float32, n+1)
			check(k.name+" reluGradSumF32", n, k.rgsum(ptr(d), ptr(ys), ptr(xs), n), sg, ag)
		}
	}
	for _, n := range []int{1, 7, 8, 15, 16, 17, 40, 100} {
		for _, special := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(i%5) - 2
			}
			x[r.IntN(n)] = float32(special)
			ones := make([]float32, n)
			for i := range ones {
				ones[i] = 1
			}
			want := special
			sx := sumF32x512(&x[0], n)
			bx, _ := bnSumsF32x512(&x[0], &ones[0], n)
			gs := reluGradSumF32x512(&make([]float32, n)[0], &ones[0], &x[0], n)
			for _, got := range []float64{sx, bx, gs} {
				if !(got == want || got != got && want != want) {
					t.Fatalf("n=%d with %v: sums %v %v %v", n, special, sx, bx, gs)
				}
			}
		}
	}
}

// poolInputs returns n pooling inputs: small integers and ±0 (so windows
// have ties), now and then NaN or −Inf.
func poolInputs(r *rand.Rand, n int) []float32 {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, 2, -1, 3}
	s := make([]float32, n)
	for i := range s {
		s[i] = vals[r.IntN(len(vals))]
		switch r.IntN(60) {
		case 0:
			s[i] = float32(math.NaN())
		case 1:
			s[i] = float32(math.Inf(-1))
		}
	}
	return s
}

// TestZMMPool checks maxPool2x2RowF32x512 and maxPool2x2BackRowF32x512
// against their AVX2 twins for 1 to 9 and 33 groups of 8 windows: outputs
// bit for bit, the backward pass's count of windows done (it stops before
// a group whose maximum is NaN), and nothing written past them.
func TestZMMPool(t *testing.T) {
	needZMM(t)
	r := rand.New(rand.NewPCG(17, 18))
	for _, groups := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 33} {
		for rep := 0; rep < 8; rep++ {
			w := 16 * groups
			nanRate := rep % 4 // 0: no NaN
			x0, x1 := poolInputs(r, w), poolInputs(r, w)
			if nanRate == 0 {
				for _, x := range [][]float32{x0, x1} {
					for i := range x {
						if x[i] != x[i] {
							x[i] = 5
						}
					}
				}
			}
			_, r0 := zmmBuf(x0, r.IntN(16))
			_, r1 := zmmBuf(x1, r.IntN(16))
			off := r.IntN(16)
			yGot, yg := zmmBuf(make([]float32, 8*groups), off)
			yWant, yw := zmmBuf(make([]float32, 8*groups), off)
			maxPool2x2RowF32x512(&yg[0], &r0[0], &r1[0], groups)
			maxPool2x2RowF32(&yw[0], &r0[0], &r1[0], groups)
			what := fmt.Sprintf("groups=%d rep=%d", groups, rep)
			sameBuf(t, "forward "+what, yGot, yWant)

			_, dy := zmmBuf(zmmInputs(r, 8*groups), r.IntN(16))
			offD := r.IntN(16)
			back := func(k func(d0, d1, r0, r1, y, dy *float32, groups int) int) (int, []float32, []float32) {
				b0, d0 := zmmBuf(make([]float32, w), offD)
				b1, d1 := zmmBuf(make([]float32, w), offD)
				return k(&d0[0], &d1[0], &r0[0], &r1[0], &yw[0], &dy[0], groups), b0, b1
			}
			nGot, g0, g1 := back(maxPool2x2BackRowF32x512)
			nWant, w0, w1 := back(maxPool2x2BackRowF32)
			if nGot != nWant {
				t.Fatalf("backward %s: ZMM did %d windows, AVX2 %d", what, nGot, nWant)
			}
			sameBuf(t, "backward d0 "+what, g0, w0)
			sameBuf(t, "backward d1 "+what, g1, w1)
		}
	}
}

// TestZMMWinograd checks the three Winograd row kernels against their AVX2
// twins bit for bit for 1 to 7 and 32 groups of 8 tiles, with the buffers
// (16 planes, or the rows of the image) at unaligned offsets and guard
// values around them.
func TestZMMWinograd(t *testing.T) {
	needZMM(t)
	r := rand.New(rand.NewPCG(19, 20))
	type rowKernel func(in *float32, ldi int, out *float32, ldo, groups int)
	kernels := []struct {
		name            string
		avx2, zmm       rowKernel
		inRows, outRows int
		inW, outW       func(g int) int // values used per row
	}{
		{"input", winoInputRowF32, winoInputRowF32x512, 4, 16,
			func(g int) int { return 16*g + 2 }, func(g int) int { return 8 * g }},
		{"output", winoOutputRowF32, winoOutputRowF32x512, 16, 2,
			func(g int) int { return 8 * g }, func(g int) int { return 16 * g }},
		{"gradout", winoGradOutRowF32, winoGradOutRowF32x512, 2, 16,
			func(g int) int { return 16 * g }, func(g int) int { return 8 * g }},
	}
	for _, k := range kernels {
		for _, groups := range []int{1, 2, 3, 4, 5, 6, 7, 32} {
			ldi := k.inW(groups) + r.IntN(9)
			ldo := k.outW(groups) + r.IntN(9)
			_, in := zmmBuf(zmmInputs(r, (k.inRows-1)*ldi+k.inW(groups)), r.IntN(16))
			off := r.IntN(16)
			outLen := (k.outRows-1)*ldo + k.outW(groups)
			got, g := zmmBuf(make([]float32, outLen), off)
			want, w := zmmBuf(make([]float32, outLen), off)
			// Mark the gaps between the output rows too.
			for i := range g {
				if i%ldo >= k.outW(groups) {
					g[i] = math.Float32frombits(zmmGuard)
					w[i] = g[i]
				}
			}
			k.zmm(&in[0], ldi, &g[0], ldo, groups)
			k.avx2(&in[0], ldi, &w[0], ldo, groups)
			sameBuf(t, fmt.Sprintf("%s groups=%d", k.name, groups), got, want)
		}
	}
}

// TestZMMDispatch checks that every kernel variable holds the ZMM twin
// exactly when the active level is AVX-512 (GOLUON_CPU=avx2 must keep the
// AVX2 kernels), and that the ZMM choice can be made on this CPU.
func TestZMMDispatch(t *testing.T) {
	pairs := []struct{ v, avx2, zmm any }{
		{addF32k, addF32, addF32x512}, {subF32k, subF32, subF32x512},
		{mulF32k, mulF32, mulF32x512}, {divF32k, divF32, divF32x512},
		{addScalarF32k, addScalarF32, addScalarF32x512}, {subScalarF32k, subScalarF32, subScalarF32x512},
		{mulScalarF32k, mulScalarF32, mulScalarF32x512}, {divScalarF32k, divScalarF32, divScalarF32x512},
		{reluF32k, reluF32, reluF32x512}, {reluGradF32k, reluGradF32, reluGradF32x512},
		{sqrtF32k, sqrtF32, sqrtF32x512},
		{copyRowsF32k, copyRowsF32, copyRowsF32x512}, {addRowsF32k, addRowsF32, addRowsF32x512},
		{sumF32k, sumF32, sumF32x512}, {accF32k, accF32, accF32x512},
		{addReluF32k, addReluF32, addReluF32x512}, {addReluScalarF32k, addReluScalarF32, addReluScalarF32x512},
		{reluGradSumF32k, reluGradSumF32, reluGradSumF32x512}, {bnSumsF32k, bnSumsF32, bnSumsF32x512},
		{scaleShiftF32k, scaleShiftF32, scaleShiftF32x512}, {axpbycF32k, axpbycF32, axpbycF32x512},
		{fmaF32k, fmaF32, fmaF32x512},
		{maxPool2x2RowF32k, maxPool2x2RowF32, maxPool2x2RowF32x512},
		{maxPool2x2BackRowF32k, maxPool2x2BackRowF32, maxPool2x2BackRowF32x512},
		{winoInputRowF32k, winoInputRowF32, winoInputRowF32x512},
		{winoOutputRowF32k, winoOutputRowF32, winoOutputRowF32x512},
		{winoGradOutRowF32k, winoGradOutRowF32, winoGradOutRowF32x512},
		{gatherRowsF32k, gatherRowsF32, gatherRowsF32x512},
	}
	fp := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for i, p := range pairs {
		want := p.avx2
		if useZMMKernel {
			want = p.zmm
		}
		if fp(p.v) != fp(want) {
			t.Errorf("kernel %d: the variable does not hold the kernel for level %s", i, ActiveISA())
		}
	}
	if useZMMKernel != (ActiveISA() >= ISAAVX512) {
		t.Errorf("useZMMKernel %v at level %s", useZMMKernel, ActiveISA())
	}
}

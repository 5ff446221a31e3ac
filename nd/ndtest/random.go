package ndtest

// The cases for the ops of nd/random.go: RandomUniform and RandomNormal.

import (
	"math"
	"slices"

	"github.com/goluon/goluon/nd"
)

// confRandom checks the random generators (range, determinism under
// nd.Seed, moments); it runs inside the "creation" family (create.go).
func confRandom(e confEnv) {
	e.run("RandomUniform", func(e confEnv) {
		const n = 10000
		nd.Seed(42)
		a := nd.RandomUniform(e.dev, e.dt, -2, 3, 100, 100)
		if !slices.Equal(a.Shape(), []int{100, 100}) || a.DType() != e.dt || a.Context() != e.dev {
			e.Fatalf("got %v %v on %v", a.Shape(), a.DType(), a.Context())
		}
		av := a.Float64s()
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, v := range av {
			lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
		}
		// [-2, 3) is covered: the extremes of 10k draws lie within 0.01 of
		// the ends (or one step of the dtype below 3: bfloat16's is 1/64),
		// and the mean (0.5, standard error 0.015) within 0.08.
		top := min(2.99, roundTo(e.dt, 3-1.0/64))
		if lo < -2 || hi >= 3 || lo > -1.99 || hi < top {
			e.Errorf("values span [%g, %g], want [-2, 3) nearly covered", lo, hi)
		}
		if m := sum / n; math.Abs(m-0.5) > 0.08 {
			e.Errorf("mean %g, want 0.5 ± 0.08", m)
		}
		nd.Seed(42)
		e.run("same_seed", func(e confEnv) {
			e.check(nd.RandomUniform(e.dev, e.dt, -2, 3, 100, 100), []int{100, 100}, av, confTolExact)
		})
		nd.Seed(43)
		c := nd.RandomUniform(e.dev, e.dt, -2, 3, 100, 100).Float64s()
		same := 0
		for i := range av {
			if av[i] == c[i] {
				same++
			}
		}
		if same > n/100 {
			e.Errorf("seeds 42 and 43 agree on %d of %d values", same, n)
		}
	})
	e.run("RandomNormal", func(e confEnv) {
		const n = 10000
		nd.Seed(7)
		a := nd.RandomNormal(e.dev, e.dt, 1.5, 2, n)
		if !slices.Equal(a.Shape(), []int{n}) || a.DType() != e.dt || a.Context() != e.dev {
			e.Fatalf("got %v %v on %v", a.Shape(), a.DType(), a.Context())
		}
		v := a.Float64s()
		sum, sq := 0.0, 0.0
		for _, x := range v {
			sum += x
		}
		m := sum / n
		for _, x := range v {
			sq += (x - m) * (x - m)
		}
		sd := math.Sqrt(sq / (n - 1))
		// Standard errors: 0.02 for the mean and 0.014 for the standard
		// deviation; the bounds are five of them.
		if math.Abs(m-1.5) > 0.1 || math.Abs(sd-2) > 0.07 {
			e.Errorf("mean %g std %g, want 1.5 and 2", m, sd)
		}
		nd.Seed(7)
		e.check(nd.RandomNormal(e.dev, e.dt, 1.5, 2, n), []int{n}, v, confTolExact)
	})
	e.run("Like", func(e confEnv) { // the template's shape, dtype and context
		tmpl := e.arr(confConst(6, 0), 2, 3)
		for _, a := range []*nd.NDArray{nd.RandomUniformLike(tmpl, 0.25, 0.5), nd.RandomNormalLike(tmpl, 0, 1)} {
			if !slices.Equal(a.Shape(), []int{2, 3}) || a.DType() != e.dt || a.Context() != e.dev {
				e.Fatalf("got %v %v on %v", a.Shape(), a.DType(), a.Context())
			}
		}
		for _, v := range nd.RandomUniformLike(tmpl, 0.25, 0.5).Float64s() {
			if v < 0.25 || v >= 0.5 {
				e.Fatalf("RandomUniformLike drew %g outside [0.25, 0.5)", v)
			}
		}
	})
}

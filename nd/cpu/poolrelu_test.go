package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// poolReluCase is a pooling over the output of a bias + ReLU.
type poolReluCase struct {
	name           string
	typ            backend.PoolType
	n, c, h, k, st int
	pad            int
	dt             backend.DType
	noBias         bool
}

func (tc poolReluCase) params() (backend.PoolParams, backend.ChannelParams) {
	o := (tc.h+2*tc.pad-tc.k)/tc.st + 1
	pp := backend.PoolParams{Type: tc.typ, N: tc.n, C: tc.c, InH: tc.h, InW: tc.h, OutH: o, OutW: o, KH: tc.k, KW: tc.k,
		StrideH: tc.st, StrideW: tc.st, PadH: tc.pad, PadW: tc.pad, DType: tc.dt, Device: ctx.CPU(0)}
	cp := backend.ChannelParams{Outer: tc.n, C: tc.c, Inner: tc.h * tc.h, DType: tc.dt, Device: ctx.CPU(0)}
	return pp, cp
}

var poolReluCases = []poolReluCase{
	{name: "lenet1", typ: backend.PoolMax, n: 32, c: 6, h: 24, k: 2, st: 2, dt: backend.Float32},
	{name: "lenet2", typ: backend.PoolMax, n: 32, c: 16, h: 10, k: 2, st: 2, dt: backend.Float32},
	{name: "odd-2x2", typ: backend.PoolMax, n: 3, c: 5, h: 9, k: 2, st: 2, dt: backend.Float32},
	{name: "3x3-s2-pad", typ: backend.PoolMax, n: 2, c: 3, h: 12, k: 3, st: 2, pad: 1, dt: backend.Float32},
	{name: "3x3-s1", typ: backend.PoolMax, n: 2, c: 4, h: 7, k: 3, st: 1, dt: backend.Float32},
	{name: "avg", typ: backend.PoolAvg, n: 2, c: 3, h: 8, k: 2, st: 2, dt: backend.Float32},
	{name: "f64", typ: backend.PoolMax, n: 3, c: 4, h: 8, k: 2, st: 2, dt: backend.Float64},
	{name: "no-bias", typ: backend.PoolMax, n: 4, c: 3, h: 6, k: 2, st: 2, dt: backend.Float32, noBias: true},
}

// TestPoolReluBackwardMatchesPair checks PoolReluBackward against
// Pool2DBackward followed by BiasReluBackward, bit for bit: dx, the bias
// gradient, and dx in place of the pooling's gradient.
func TestPoolReluBackwardMatchesPair(t *testing.T) {
	be := New()
	r := rand.New(rand.NewPCG(7, 11))
	for _, tc := range poolReluCases {
		t.Run(tc.name, func(t *testing.T) {
			pp, cp := tc.params()
			if !be.FusesPoolReluBackward(pp, cp) {
				t.Fatalf("FusesPoolReluBackward(%+v, %+v) = false", pp, cp)
			}
			nx, ny := tc.n*tc.c*tc.h*tc.h, tc.n*tc.c*pp.OutH*pp.OutW
			vals := func(n int, relu bool) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = r.NormFloat64()
					if relu && v[i] < 0 {
						v[i] = 0 // a ReLU's output: zeros tie in the windows
					}
				}
				if relu && n > 9 {
					v[3], v[7] = math.NaN(), math.Copysign(0, -1)
				}
				return v
			}
			x, dy := vals(nx, true), vals(ny, false)
			arg := func(v []float64) backend.Arg {
				if tc.dt == backend.Float64 {
					return backend.Arg{Buf: &Buffer{dt: backend.Float64, F64: slices.Clone(v)}}
				}
				f := make([]float32, len(v))
				for i, e := range v {
					f[i] = float32(e)
				}
				return backend.Arg{Buf: &Buffer{dt: backend.Float32, F32: f}}
			}
			xa, dya := arg(x), arg(dy)
			ya := arg(make([]float64, ny))
			be.Pool2D(pp, ya, xa)
			bias := func() backend.Arg {
				if tc.noBias {
					return backend.Arg{}
				}
				return arg(make([]float64, tc.c))
			}
			// The pair.
			tmp, wantDx, wantDb := arg(make([]float64, nx)), arg(make([]float64, nx)), bias()
			be.Pool2DBackward(pp, tmp, xa, ya, dya)
			be.BiasReluBackward(cp, wantDx, wantDb, tmp, xa)
			// Fused, into a fresh buffer and into one holding garbage.
			gotDx, gotDb := arg(vals(nx, false)), bias()
			be.PoolReluBackward(pp, cp, gotDx, gotDb, xa, ya, dya)
			same := func(what string, a, b backend.Arg) {
				if a.Buf == nil {
					return
				}
				ab, bb := a.Buf.(*Buffer), b.Buf.(*Buffer)
				var eq bool
				if tc.dt == backend.Float64 {
					eq = slices.EqualFunc(ab.F64, bb.F64, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
				} else {
					eq = slices.EqualFunc(ab.F32, bb.F32, func(u, v float32) bool { return math.Float32bits(u) == math.Float32bits(v) })
				}
				if !eq {
					t.Errorf("%s differs from the pair's", what)
				}
			}
			same("dx", gotDx, wantDx)
			same("dbias", gotDb, wantDb)
		})
	}
}

// TestFusesPoolReluBackward checks the parameters it declines.
func TestFusesPoolReluBackward(t *testing.T) {
	be := New()
	pp, cp := poolReluCases[0].params()
	for _, tc := range []struct {
		name string
		edit func(*backend.PoolParams, *backend.ChannelParams)
	}{
		{"other channels", func(_ *backend.PoolParams, c *backend.ChannelParams) { c.C++ }},
		{"other images", func(_ *backend.PoolParams, c *backend.ChannelParams) { c.Outer-- }},
		{"runs not planes", func(_ *backend.PoolParams, c *backend.ChannelParams) { c.Inner, c.C = 1, c.C*c.Inner }},
		{"short runs", func(p *backend.PoolParams, c *backend.ChannelParams) {
			p.InH, p.InW, p.OutH, p.OutW, c.Inner = 2, 2, 1, 1, 4
		}},
		{"half", func(p *backend.PoolParams, c *backend.ChannelParams) {
			p.DType, c.DType = backend.Float16, backend.Float16
		}},
		{"mixed", func(_ *backend.PoolParams, c *backend.ChannelParams) { c.DType = backend.Float64 }},
	} {
		p, c := pp, cp
		tc.edit(&p, &c)
		if be.FusesPoolReluBackward(p, c) {
			t.Errorf("%s: FusesPoolReluBackward = true", tc.name)
		}
	}
}

// BenchmarkPoolReluBackward compares the fused kernel with the pair on
// LeNet's two pooling layers (batch 32).
func BenchmarkPoolReluBackward(b *testing.B) {
	be := New()
	for _, tc := range poolReluCases[:2] {
		pp, cp := tc.params()
		nx, ny := tc.n*tc.c*tc.h*tc.h, tc.n*tc.c*pp.OutH*pp.OutW
		r := rand.New(rand.NewPCG(1, 2))
		arg := func(n int) backend.Arg {
			return backend.Arg{Buf: &Buffer{dt: backend.Float32, F32: randSlice(n, r)}}
		}
		x, y, dy, t1, dx, db := arg(nx), arg(ny), arg(ny), arg(nx), arg(nx), arg(tc.c)
		be.Pool2D(pp, y, x)
		b.Run(tc.name+"/pair", func(b *testing.B) {
			for b.Loop() {
				be.Pool2DBackward(pp, t1, x, y, dy)
				be.BiasReluBackward(cp, dx, db, t1, x)
			}
		})
		b.Run(tc.name+"/fused", func(b *testing.B) {
			for b.Loop() {
				be.PoolReluBackward(pp, cp, dx, db, x, y, dy)
			}
		})
	}
}

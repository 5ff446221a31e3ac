package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Fused GELU (backend.GELUKernels): one pass over x forward, writing the
// output and the gate Φ(x) (or (1 + tanh u)/2), and one pass over x, the
// gate and the output gradient backward; each value is computed in float64
// and rounded once. The erf (or tanh) is evaluated once per value, in the
// forward pass.

var _ backend.GELUKernels = (*Backend)(nil)

const (
	sqrt2Pi   = 0.7978845608028654 // √(2/π)
	invSqrt2  = 0.7071067811865476 // 1/√2
	invSqrt2P = 0.3989422804014327 // 1/√(2π)
	geluCubic = 0.044715
)

// GELU implements backend.GELUKernels.
func (*Backend) GELU(dt backend.DType, tanh bool, y, s, x backend.Arg, n int) {
	if dt == backend.Float64 {
		geluForward(slice[float64](y)[:n], slice[float64](s)[:n], slice[float64](x)[:n], tanh)
	} else {
		geluForward(slice[float32](y)[:n], slice[float32](s)[:n], slice[float32](x)[:n], tanh)
	}
}

// GELUBackward implements backend.GELUKernels.
func (*Backend) GELUBackward(dt backend.DType, tanh bool, dx, g, x, s backend.Arg, n int) {
	if dt == backend.Float64 {
		geluBackward(slice[float64](dx)[:n], slice[float64](g)[:n], slice[float64](x)[:n], slice[float64](s)[:n], tanh)
	} else {
		geluBackward(slice[float32](dx)[:n], slice[float32](g)[:n], slice[float32](x)[:n], slice[float32](s)[:n], tanh)
	}
}

func geluForward[T Float](y, s, x []T, tanh bool) {
	parallelFor(len(x), elemGrain/8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := float64(x[i])
			var gate float64
			if tanh {
				gate = 0.5 * (1 + math.Tanh(sqrt2Pi*(v+geluCubic*v*v*v)))
			} else {
				gate = 0.5 * (1 + math.Erf(v*invSqrt2))
			}
			y[i], s[i] = T(v*gate), T(gate)
		}
	})
}

// geluBackward: d/dx x·Φ(x) = Φ(x) + x·φ(x), from the stored Φ; for the
// tanh form the derivative 0.5·(1+t) + 0.5·x·(1−t²)·u' needs 1 − t, which
// a float32 gate near 1 no longer holds, so t is computed again.
func geluBackward[T Float](dx, g, x, s []T, tanh bool) {
	parallelFor(len(x), elemGrain/8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v, gate := float64(x[i]), float64(s[i])
			var d float64
			if tanh {
				t := math.Tanh(sqrt2Pi * (v + geluCubic*v*v*v))
				d = 0.5*(1+t) + 0.5*v*(1-t*t)*sqrt2Pi*(1+3*geluCubic*v*v)
			} else {
				d = gate + v*invSqrt2P*math.Exp(-0.5*v*v)
			}
			dx[i] = T(float64(g[i]) * d)
		}
	})
}

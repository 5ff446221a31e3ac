package cpu

import (
	"math"

	"github.com/goluon/goluon/nd/backend"
)

// Fused GELU (backend.GELUKernels): one pass over x forward, writing the
// output and the gate Φ(x) (or (1 + tanh u)/2), and one pass over x, the
// gate and the output gradient backward; each value is computed in float64
// and rounded once. The erf (or tanh) is evaluated once per value, in the
// forward pass. Float32 arrays use erf32 and exp32 (fastmath.go), accurate
// to float32 and 3–7 times faster than math.Erf and math.Exp, which
// float64 arrays keep.

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
		geluForward(slice[float64](y)[:n], slice[float64](s)[:n], slice[float64](x)[:n], tanh, false)
	} else {
		geluForward(slice[float32](y)[:n], slice[float32](s)[:n], slice[float32](x)[:n], tanh, true)
	}
}

// GELUBackward implements backend.GELUKernels.
func (*Backend) GELUBackward(dt backend.DType, tanh bool, dx, g, x, s backend.Arg, n int) {
	if dt == backend.Float64 {
		geluBackward(slice[float64](dx)[:n], slice[float64](g)[:n], slice[float64](x)[:n], slice[float64](s)[:n], tanh, false)
	} else {
		geluBackward(slice[float32](dx)[:n], slice[float32](g)[:n], slice[float32](x)[:n], slice[float32](s)[:n], tanh, true)
	}
}

// geluBlock is the number of values the kernels take through erfBlock or
// expBlock at a time (a stack buffer).
const geluBlock = 256

// geluForward writes y = x·gate and s = gate, gate = Φ(x) (or
// (1 + tanh u)/2); fast selects erfBlock over math.Erf.
func geluForward[T Float](y, s, x []T, tanh, fast bool) {
	parallelFor(len(x), elemGrain/8, func(lo, hi int) {
		var buf [geluBlock]float64
		for b := lo; b < hi; b += geluBlock {
			e := min(b+geluBlock, hi)
			u := buf[:e-b]
			for i := range u {
				v := float64(x[b+i])
				if tanh {
					u[i] = math.Tanh(sqrt2Pi * (v + geluCubic*v*v*v))
				} else {
					u[i] = v * invSqrt2
				}
			}
			if !tanh {
				if fast {
					erfBlock(u)
				} else {
					for i := range u {
						u[i] = math.Erf(u[i])
					}
				}
			}
			for i, t := range u {
				gate := 0.5 * (1 + t)
				if fast && !tanh && float64(x[b+i])*invSqrt2 <= -erfClamp {
					// erfBlock stops at ±erfClamp, where 1 + erf is about
					// 5e-9 instead of the 0 a float32 erf rounds to (as
					// PyTorch's): times a large negative x that would be
					// an output of -x·5e-9 and a gradient of the wrong sign.
					gate = 0
				}
				y[b+i], s[b+i] = T(float64(x[b+i])*gate), T(gate)
			}
		}
	})
}

// geluBackward writes dx = g·GELU'(x): Φ(x) + x·φ(x) from the stored Φ;
// for the tanh form 0.5·(1+t) + 0.5·x·(1−t²)·u', where 1 − t, which a
// float32 gate near 1 no longer holds, is computed again. fast selects
// expBlock over math.Exp.
func geluBackward[T Float](dx, g, x, s []T, tanh, fast bool) {
	parallelFor(len(x), elemGrain/8, func(lo, hi int) {
		var buf [geluBlock]float64
		for b := lo; b < hi; b += geluBlock {
			e := min(b+geluBlock, hi)
			u := buf[:e-b]
			for i := range u {
				v := float64(x[b+i])
				if tanh {
					t := math.Tanh(sqrt2Pi * (v + geluCubic*v*v*v))
					u[i] = 0.5*(1+t) + 0.5*v*(1-t*t)*sqrt2Pi*(1+3*geluCubic*v*v)
				} else {
					u[i] = -0.5 * v * v
				}
			}
			if !tanh {
				if fast {
					expBlock(u)
				} else {
					for i := range u {
						u[i] = math.Exp(u[i])
					}
				}
				for i := range u {
					u[i] = float64(s[b+i]) + float64(x[b+i])*invSqrt2P*u[i]
				}
			}
			for i, d := range u {
				dx[b+i] = T(float64(g[b+i]) * d)
			}
		}
	})
}

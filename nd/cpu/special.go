package cpu

import "math"

// digamma is ψ(x) = Γ'(x)/Γ(x): the reflection ψ(x) = ψ(1−x) − π/tan(πx)
// below 0, the recurrence ψ(x) = ψ(x+1) − 1/x up to 10, then the
// asymptotic series ln x − 1/(2x) − Σ B₂ₖ/(2k·x²ᵏ) (seven terms: below
// 1e-16 there). −Inf at 0 and NaN at the negative integers, as PyTorch's.
// The reflection's π/tan(πx) takes x minus its nearest integer (exact), so
// large negative arguments keep their accuracy.
// The CUDA kernels (common.cuh) take the same steps.
func digamma(x float64) float64 {
	if x == 0 {
		return math.Inf(-1)
	}
	r := 0.0
	if x < 0 {
		if x == math.Floor(x) {
			return math.NaN()
		}
		r = -math.Pi / math.Tan(math.Pi*(x-math.RoundToEven(x))) // tan has period π: reduce first, exactly
		x = 1 - x
	}
	for x < 10 {
		r -= 1 / x
		x++
	}
	f := 1 / (x * x)
	t := f * (-1.0/12 + f*(1.0/120+f*(-1.0/252+f*(1.0/240+f*(-1.0/132+f*(691.0/32760+f*(-1.0/12)))))))
	return r + math.Log(x) - 0.5/x + t
}

// trigamma is ψ'(x): the reflection ψ'(x) = π²/sin²(πx) − ψ'(1−x) at and
// below 0, the recurrence ψ'(x) = ψ'(x+1) + 1/x² up to 10, then the
// asymptotic series 1/x + 1/(2x²) + Σ B₂ₖ/x²ᵏ⁺¹. +Inf at 0 and the
// negative integers.
func trigamma(x float64) float64 {
	sign, r := 1.0, 0.0
	if x <= 0 {
		if x == math.Floor(x) {
			return math.Inf(1)
		}
		s := math.Sin(math.Pi * (x - math.RoundToEven(x))) // sin² has period π
		r = math.Pi * math.Pi / (s * s)
		sign = -1
		x = 1 - x
	}
	acc := 0.0
	for x < 10 {
		acc += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	t := 1/x + f/2 + f/x*(1.0/6+f*(-1.0/30+f*(1.0/42+f*(-1.0/30+f*(5.0/66+f*(-691.0/2730+f*7.0/6))))))
	return r + sign*(acc+t)
}

package cpu

import "math"

// Fast erf and exp for float32 results. math.Erf and math.Exp are float64
// accurate and cost about 21 and 9 ns a value here; a float32 result needs
// only an absolute error below half its ulp. erf32 evaluates the rational
// function fitted by testdata/fit_erf.py (erf_coeffs.go; largest absolute
// error 1.1e-8); exp32 reduces to 2^k·e^r with |r| ≤ ln2/2 and a
// degree-7 Taylor polynomial (relative error below 1e-8). Both run in
// float64 and are used only where the result is rounded to float32.

// erfBlock replaces every v[i] by erf(v[i]) to float32 accuracy:
// x·P(x²)/Q(x²) with |x| clamped to 4 (erf_coeffs.go). It works on a block
// so that the values' long dependency chains overlap: called once a value
// (not inlined), the same formula runs four times slower here. Whole
// groups of 8 values go to the vector kernel (fasterf_amd64.s), which does
// erfScalar's operations in the same order and gives its bits.
func erfBlock(v []float64) {
	if n := len(v) &^ 7; useAsmKernel && n > 0 {
		if useZMMKernel {
			erfF64x512(&v[0], n)
		} else {
			erfF64(&v[0], n)
		}
		v = v[n:]
	}
	erfScalar(v)
}

// erfClamp is where erfBlock stops: |x| above it is taken as erfClamp,
// whose erf is 1 in float32.
const erfClamp = 4

// erfScalar is erfBlock one value at a time, in Go. The float64
// conversions round each product before its sum, as the vector kernels
// do: without them a GOAMD64=v3 build fuses the pairs into FMAs, with
// other bits.
func erfScalar(v []float64) {
	for i, x := range v {
		a := math.Abs(x)
		if a > erfClamp {
			a = erfClamp
		}
		z := a * a
		p := erfP[0] + float64(z*(erfP[1]+float64(z*(erfP[2]+float64(z*(erfP[3]+float64(z*(erfP[4]+float64(z*(erfP[5]+float64(z*erfP[6])))))))))))
		q := erfQ[0] + float64(z*(erfQ[1]+float64(z*(erfQ[2]+float64(z*(erfQ[3]+float64(z*(erfQ[4]+float64(z*erfQ[5])))))))))
		v[i] = math.Copysign(float64(a*p)/q, x) // a NaN x stays NaN: a > 4 is false for it
	}
}

// erf32 is erfBlock for one value.
func erf32(x float64) float64 {
	v := [1]float64{x}
	erfBlock(v[:])
	return v[0]
}

const (
	ln2Hi  = 6.93147180369123816490e-01
	ln2Lo  = 1.90821492927058770002e-10
	log2e  = 1.44269504088896338700e+00
	expMin = -104.0 // below, e^x is 0 in float32
	expMax = 89.0   // above, e^x is +Inf in float32
	// roundMagic is 1.5·2⁵²: for |y| < 2⁵¹, (y + roundMagic) − roundMagic
	// is y rounded to the nearest integer (ties to even).
	roundMagic = 0x1.8p52
)

// expBlock replaces every v[i] by e^v[i] to float32 accuracy, on a
// block for the same reason as erfBlock. Whole groups of 8 values go to
// the vector kernel (fastexp_amd64.s; BenchmarkExpBlock compares), which
// does expScalar's operations in the same order and gives its bits.
func expBlock(v []float64) {
	if n := len(v) &^ 7; useAsmKernel && n > 0 {
		// The same operations, 8 or 4 values at a time. Called directly,
		// not through a kernel variable, so that v does not escape.
		if useZMMKernel {
			expF64x512(&v[0], n)
		} else {
			expF64(&v[0], n)
		}
		v = v[n:]
	}
	expScalar(v)
}

// expScalar is expBlock one value at a time, in Go.
func expScalar(v []float64) {
	for i, x := range v {
		switch {
		case x != x:
			continue
		case x < expMin:
			v[i] = 0
			continue
		case x > expMax:
			v[i] = math.Inf(1)
			continue
		}
		// k is x·log2e rounded to the nearest integer: adding and taking
		// away 1.5·2⁵² leaves no fraction bits (math.Round is a call).
		// The polynomial is 1 + r(1 + r(1/2 + r(1/6 + r(1/24 + r(1/120 +
		// r(1/720 + r/5040)))))). The float64 conversions round each
		// product before its sum, as the vector kernels do: without them
		// a GOAMD64=v3 build fuses the pairs into FMAs, with other bits.
		k := (float64(x*log2e) + roundMagic) - roundMagic
		r := (x - float64(k*ln2Hi)) - float64(k*ln2Lo)
		q := float64(r * (1.0 / 5040))
		q = float64(r * (1.0/720 + q))
		q = float64(r * (1.0/120 + q))
		q = float64(r * (1.0/24 + q))
		q = float64(r * (1.0/6 + q))
		q = float64(r * (1.0/2 + q))
		q = float64(r * (1 + q))
		p := 1 + q
		v[i] = p * math.Float64frombits(uint64(int64(k)+1023)<<52)
	}
}

// exp32 is expBlock for one value.
func exp32(x float64) float64 {
	v := [1]float64{x}
	expScalar(v[:])
	return v[0]
}

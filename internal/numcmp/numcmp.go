// Package numcmp compares computed arrays: the measures the checks of
// exported models share.
package numcmp

import "math"

// RelL2 returns ‖got − want‖₂ / ‖want‖₂ over the first len(want) values
// (NaN when a value is NaN; the denominator is at least 1e-30).
func RelL2[T float32 | float64](got, want []T) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / max(den, 1e-30))
}

// RelL2NaN is RelL2 over the positions where want is not NaN, and NaN
// (a mismatch) when got and want are not NaN at the same positions: a
// network's own NaNs (a fully masked attention row) must be reproduced,
// not compared.
func RelL2NaN[T float32 | float64](got, want []T) float64 {
	var num, den float64
	for i := range want {
		gn, wn := got[i] != got[i], want[i] != want[i]
		if gn != wn {
			return math.NaN()
		}
		if wn {
			continue
		}
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / max(den, 1e-30))
}

// Package paramtest holds what the equivalence tests share: snapshots of
// a network's parameters and their relative difference.
package paramtest

import (
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/gluon"
)

// Snapshot returns every parameter's value by name (its first replica),
// and an error when a replica differs from the first.
func Snapshot(params *gluon.ParamDict) (map[string][]float32, error) {
	out := map[string][]float32{}
	for _, name := range params.Names() {
		reps := params.Get(name).ListData()
		first := reps[0].Float32s()
		for d, r := range reps[1:] {
			if !slices.Equal(first, r.Float32s()) {
				return nil, fmt.Errorf("%s: replica %d differs from replica 0", name, d+1)
			}
		}
		out[name] = first
	}
	return out, nil
}

// RelDiff is ‖a−b‖ / ‖a‖ (NaN when a is all zeros and b equals it).
func RelDiff(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(a[i]) * float64(a[i])
	}
	return math.Sqrt(num / den)
}

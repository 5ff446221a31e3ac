package nd

import (
	"slices"
	"testing"
)

// TestDimsHold checks that shapes held inline copy their input, stay
// capped (an append never writes into the holder) and that longer shapes
// are copied out.
func TestDimsHold(t *testing.T) {
	for _, shape := range [][]int{nil, {}, {3}, {2, 3, 4, 5}, {1, 2, 3, 4, 5, 6}} {
		var d dims
		in := slices.Clone(shape)
		got := d.hold(in)
		if !slices.Equal(got, shape) || cap(got) != len(got) {
			t.Fatalf("hold(%v) = %v (cap %d)", shape, got, cap(got))
		}
		if len(in) > 0 {
			in[0] = 99
			if got[0] == 99 {
				t.Fatalf("hold(%v) shares its input", shape)
			}
		}
		before := d
		_ = append(got, 7)
		if d != before {
			t.Fatalf("append to hold(%v) wrote into the holder", shape)
		}
	}
}

package prune_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon/prune"
	"github.com/goluon/goluon/nd"
)

// convWeight is a [4 3 3 3] weight without zeros.
func convWeight() arr {
	a := arr{Shape: []int{4, 3, 3, 3}}
	for i := range 108 {
		a.Data = append(a.Data, 0.5+float64((i*37)%108)/100)
	}
	return a
}

// channelState returns, for each channel along dim of a mask of the given
// shape, whether it is entirely zero, entirely one, or mixed ("0", "1",
// "x").
func channelState(mask []float64, shape []int, dim int) string {
	size, inner := shape[dim], 1
	for _, d := range shape[dim+1:] {
		inner *= d
	}
	z, o := make([]int, size), make([]int, size)
	for i, v := range mask {
		if v == 0 {
			z[(i/inner)%size]++
		} else {
			o[(i/inner)%size]++
		}
	}
	s := make([]byte, size)
	for c := range s {
		switch {
		case o[c] == 0:
			s[c] = '0'
		case z[c] == 0:
			s[c] = '1'
		default:
			s[c] = 'x'
		}
	}
	return string(s)
}

// TestRandomUnstructured: the number of entries pruned is torch's
// (round-half-even of the fraction of those left, or the count), a second
// round prunes only entries left by the first, and the choice follows
// nd.Seed: the same seed gives the same mask, another seed another.
func TestRandomUnstructured(t *testing.T) {
	for _, c := range []struct {
		name        string
		first, then prune.Amount
		zeros       []int // after each round, of 108
	}{
		{"fraction", prune.Fraction(0.3), prune.Fraction(0.5), []int{32, 32 + 38}},
		{"count", prune.Count(10), prune.Count(98), []int{10, 108}},
		{"half-even", prune.Fraction(0.125), prune.Fraction(0.5), []int{14, 14 + 47}}, // 13.5 → 14; 47 of 94
		{"nothing", prune.Fraction(0), prune.Count(0), []int{0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			masks := func(seed uint64) [][]float64 {
				nd.Seed(seed)
				h := newHolder(t, convWeight())
				var out [][]float64
				for _, a := range []prune.Amount{c.first, c.then} {
					out = append(out, prune.RandomUnstructured(h, "weight", a).Mask.Data(cpu0).Float64s())
				}
				return out
			}
			a, b, other := masks(1), masks(1), masks(2)
			for i, m := range a {
				if n := zeros(m); n != c.zeros[i] {
					t.Errorf("round %d: %d zeros, want %d", i+1, n, c.zeros[i])
				}
				equalSlice(t, "same seed", b[i], m)
			}
			for i, v := range a[0] {
				if v == 0 && a[1][i] != 0 {
					t.Fatalf("entry %d pruned in the first round came back", i)
				}
			}
			if c.zeros[0] > 0 && c.zeros[0] < 108 && slices.Equal(a[0], other[0]) {
				t.Error("seeds 1 and 2 drew the same mask")
			}
		})
	}
}

// TestRandomStructured: whole channels go along the given dim (negative
// dims count from the end), as many as torch's amount; a second round
// chooses among the channels left, after an unstructured round too; the
// same seed gives the same channels.
func TestRandomStructured(t *testing.T) {
	shape := []int{4, 3, 3, 3}
	for _, c := range []struct {
		name    string
		dim     int
		amounts []prune.Amount
		pruned  []int // channels pruned after each round
	}{
		{"dim0-fraction", 0, []prune.Amount{prune.Fraction(0.5), prune.Fraction(0.5)}, []int{2, 3}},
		{"dim1-count", 1, []prune.Amount{prune.Count(1), prune.Count(2)}, []int{1, 3}},
		{"dim-1", -1, []prune.Amount{prune.Fraction(0.34), prune.Count(0)}, []int{1, 1}},
		{"dim2-all", 2, []prune.Amount{prune.Fraction(1)}, []int{3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(seed uint64) []string {
				nd.Seed(seed)
				h := newHolder(t, convWeight())
				dim := (c.dim + 4) % 4
				var states []string
				for i, a := range c.amounts {
					m := prune.RandomStructured(h, "weight", a, c.dim).Mask.Data(cpu0).Float64s()
					s := channelState(m, shape, dim)
					if got := len(s) - len(slices.DeleteFunc([]byte(s), func(b byte) bool { return b == '0' })); got != c.pruned[i] {
						t.Errorf("round %d: channels %s, want %d pruned", i+1, s, c.pruned[i])
					}
					if slices.Contains([]byte(s), 'x') {
						t.Errorf("round %d: channels %s: a channel is partly pruned", i+1, s)
					}
					if i > 0 && !stillZero(states[i-1], s) {
						t.Errorf("round %d: channels %s, after %s", i+1, s, states[i-1])
					}
					states = append(states, s)
				}
				return states
			}
			if a, b := run(3), run(3); !slices.Equal(a, b) {
				t.Errorf("same seed: %v and %v", a, b)
			}
		})
	}
	t.Run("after-unstructured", func(t *testing.T) {
		nd.Seed(5)
		h := newHolder(t, convWeight())
		l1 := prune.L1Unstructured(h, "weight", prune.Fraction(0.2), nil).Mask.Data(cpu0).Float64s()
		m := prune.RandomStructured(h, "weight", prune.Count(2), 0).Mask.Data(cpu0).Float64s()
		pruned := 0
		for c := range 4 {
			kept, gone := true, true
			for i := c * 27; i < (c+1)*27; i++ {
				kept = kept && m[i] == l1[i]
				gone = gone && m[i] == 0
			}
			if !kept && !gone {
				t.Fatalf("channel %d is neither kept as the first round left it nor pruned", c)
			}
			if gone {
				pruned++
			}
		}
		if pruned != 2 {
			t.Errorf("%d channels pruned, want 2", pruned)
		}
	})
}

// stillZero reports whether every channel zero in before is zero in after.
func stillZero(before, after string) bool {
	for i := range before {
		if before[i] == '0' && after[i] != '0' {
			return false
		}
	}
	return true
}

// TestGlobalRandom: GlobalUnstructured with Random prunes the amount over
// all targets together, only from entries left.
func TestGlobalRandom(t *testing.T) {
	nd.Seed(9)
	a, b := newHolder(t, convWeight()), newHolder(t, arr{Shape: []int{6, 5}, Data: convWeight().Data[:30]})
	prune.L1Unstructured(a, "weight", prune.Count(8), nil)
	ps := prune.GlobalUnstructured([]prune.Target{{Block: a}, {Block: b}}, prune.Random, prune.Fraction(0.25))
	got := zeros(ps[0].Mask.Data(cpu0).Float64s()) + zeros(ps[1].Mask.Data(cpu0).Float64s())
	if want := 8 + 32; got != want { // round(0.25 · 130) = 32 (32.5, half to even)
		t.Errorf("%d zeros, want %d", got, want)
	}
	if n := len(ps[0].Methods()); n != 2 {
		t.Errorf("methods %v", ps[0].Methods())
	}
}

package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// chiSquare returns Σ (observed − expected)²/expected over the cells with
// a positive expectation, and whether a cell with none was observed.
func chiSquare(observed []int, expected []float64) (stat float64, impossible bool) {
	for i, e := range expected {
		o := float64(observed[i])
		if e == 0 {
			impossible = impossible || o != 0
			continue
		}
		stat += (o - e) * (o - e) / e
	}
	return stat, impossible
}

// TestMultinomialWithReplacement draws from unnormalised weights with a
// fixed seed: the counts pass a chi-square test (3 degrees of freedom,
// below 16.27, its 0.1% point), zero weights are never drawn, and the
// same seed draws the same indices.
func TestMultinomialWithReplacement(t *testing.T) {
	dev := ctx.CPU(0)
	w := []float64{1, 0, 2, 7, 0, 5} // sum 15
	const n = 30000
	nd.Seed(11)
	got := nd.Multinomial(nd.FromSlice(dev, w, len(w)), n, true)
	if got.DType() != nd.Int64 || !slices.Equal(got.Shape(), []int{n}) || got.Context() != dev {
		t.Fatalf("result %v %v on %v, want int64 [%d] on %v", got.DType(), got.Shape(), got.Context(), n, dev)
	}
	counts := make([]int, len(w))
	for _, c := range got.Int64s() {
		counts[c]++
	}
	expected := make([]float64, len(w))
	for i, v := range w {
		expected[i] = n * v / 15
	}
	stat, impossible := chiSquare(counts, expected)
	if impossible {
		t.Errorf("a zero-weight category was drawn: counts %v", counts)
	}
	t.Logf("chi-square %.2f (3 degrees of freedom)", stat)
	if stat > 16.27 {
		t.Errorf("chi-square %.2f over counts %v (expected %v)", stat, counts, expected)
	}
	nd.Seed(11)
	again := nd.Multinomial(nd.FromSlice(dev, w, len(w)), n, true)
	if !slices.Equal(again.Int64s(), got.Int64s()) {
		t.Error("the same seed drew other indices")
	}
	// Rows draw from their own weights.
	rows := nd.Multinomial(nd.FromSlice(dev, []float32{1, 1, 0, 0, 0, 3}, 2, 3), 5, true)
	if !slices.Equal(rows.Shape(), []int{2, 5}) {
		t.Fatalf("shape %v, want [2 5]", rows.Shape())
	}
	v := rows.Int64s()
	for i, c := range v {
		if i < 5 && c > 1 || i >= 5 && c != 2 {
			t.Errorf("rows [1 1 0] and [0 0 3] drew %v", v)
			break
		}
	}
}

// TestMultinomialWithoutReplacement checks that the draws of a row are
// distinct, never zero-weight categories, and ordered as sequential draws
// in proportion to the remaining weights: over many rows the ordered
// pairs (first, second) pass a chi-square test (11 degrees of freedom,
// below 31.26, its 0.1% point).
func TestMultinomialWithoutReplacement(t *testing.T) {
	dev := ctx.CPU(0)
	w := []float64{1, 2, 3, 4} // sum 10
	const rows = 20000
	many := make([]float64, 0, rows*len(w))
	for range rows {
		many = append(many, w...)
	}
	nd.Seed(5)
	got := nd.Multinomial(nd.FromSlice(dev, many, rows, len(w)), len(w), false).Int64s()
	pairs := make([]int, 16)
	for r := range rows {
		row := got[r*4 : r*4+4]
		seen := map[int64]bool{}
		for _, c := range row {
			if seen[c] {
				t.Fatalf("row %d drew %v: repeated category", r, row)
			}
			seen[c] = true
		}
		pairs[row[0]*4+row[1]]++
	}
	expected := make([]float64, 16)
	for i, wi := range w {
		for j, wj := range w {
			if i != j {
				expected[i*4+j] = rows * wi / 10 * wj / (10 - wi)
			}
		}
	}
	stat, impossible := chiSquare(pairs, expected)
	t.Logf("chi-square %.2f (11 degrees of freedom)", stat)
	if impossible || stat > 31.26 {
		t.Errorf("ordered pairs %v (expected %v): chi-square %.2f", pairs, expected, stat)
	}
	// Zero weights are never drawn; the non-zero categories all are.
	nd.Seed(6)
	for range 50 {
		d := nd.Multinomial(nd.FromSlice(dev, []float32{0, 5, 0, 1, 2}, 5), 3, false).Int64s()
		s := slices.Sorted(slices.Values(d))
		if !slices.Equal(s, []int64{1, 3, 4}) {
			t.Fatalf("drew %v from weights [0 5 0 1 2], want categories 1, 3 and 4", d)
		}
	}
}

// TestMultinomialExtremeWeights draws from subnormal weights and from
// weights near the float64 maximum, whose sums hold a few bits or
// overflow and whose keys wᵢ/Eᵢ underflow or overflow: with replacement
// the counts, without it the ordered pairs (first, second) of rows
// 1:2:3:4, pass chi-square tests at 0.1% (fixed seeds).
func TestMultinomialExtremeWeights(t *testing.T) {
	dev := ctx.CPU(0)
	const n = 40000
	nd.Seed(17)
	for _, c := range []struct {
		w     []float64
		ratio []float64
	}{
		{[]float64{5e-324, 5e-324, 1e-323}, []float64{1, 1, 2}},        // one, one and two units of the last place
		{[]float64{1e308, 1e308, 1e308}, []float64{1, 1, 1}},           // the sum overflows
		{[]float64{0.5e308, 1e308, 0, 1.5e308}, []float64{1, 2, 0, 3}}, // so does this one
		{[]float64{1e-310, 3e-310, 2e-310}, []float64{1, 3, 2}},
	} {
		counts := make([]int, len(c.w))
		for _, k := range nd.Multinomial(nd.FromSlice(dev, c.w, len(c.w)), n, true).Int64s() {
			counts[k]++
		}
		total := 0.0
		for _, r := range c.ratio {
			total += r
		}
		expected := make([]float64, len(c.w))
		for i, r := range c.ratio {
			expected[i] = n * r / total
		}
		stat, impossible := chiSquare(counts, expected)
		if impossible || stat > 13.82 { // at most 2 degrees of freedom
			t.Errorf("with replacement, weights %v: counts %v, expected %v (chi-square %.1f)", c.w, counts, expected, stat)
		}
	}
	const rows = 20000
	for _, w := range [][]float64{
		{5e-324, 1e-323, 1.5e-323, 2e-323},   // 1, 2, 3 and 4 units of the last place
		{0.4e308, 0.8e308, 1.2e308, 1.6e308}, // near the maximum
	} {
		many := make([]float64, 0, rows*len(w))
		for range rows {
			many = append(many, w...)
		}
		got := nd.Multinomial(nd.FromSlice(dev, many, rows, len(w)), 2, false).Int64s()
		pairs := make([]int, 16)
		for r := range rows {
			pairs[got[2*r]*4+got[2*r+1]]++
		}
		expected := make([]float64, 16)
		for i := range 4 {
			for j := range 4 {
				if i != j {
					expected[i*4+j] = rows * float64(i+1) / 10 * float64(j+1) / float64(10-i-1)
				}
			}
		}
		stat, impossible := chiSquare(pairs, expected)
		if impossible || stat > 31.26 { // 11 degrees of freedom
			t.Errorf("without replacement, weights %v: ordered pairs %v, expected %v (chi-square %.1f)", w, pairs, expected, stat)
		}
	}
}

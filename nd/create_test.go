package nd_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestFromSliceShaped: the shape is taken as given, an empty one making a
// 0-d array (FromSlice makes it one-dimensional), in every session.
func TestFromSliceShaped(t *testing.T) {
	dev := ctx.CPU(0)
	s := nd.NewSession("shaped")
	for _, c := range []struct {
		name  string
		make  func() *nd.NDArray
		shape []int
		vals  []float64
	}{
		{"0-d", func() *nd.NDArray { return nd.FromSliceShaped(dev, []float32{2.5}, nil) }, []int{}, []float64{2.5}},
		{"0-d-empty-slice", func() *nd.NDArray { return nd.FromSliceShaped(dev, []float64{-1}, []int{}) }, []int{}, []float64{-1}},
		{"0-d-persistent", func() *nd.NDArray { return nd.PersistentSession().FromSliceShaped(dev, []float64{3}, nil) }, []int{}, []float64{3}},
		{"0-d-session", func() *nd.NDArray { return s.FromSliceShaped(dev, []float64{4}, nil) }, []int{}, []float64{4}},
		{"2-D", func() *nd.NDArray { return nd.FromSliceShaped(dev, []float64{1, 2, 3, 4, 5, 6}, []int{2, 3}) }, []int{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"zero-size", func() *nd.NDArray { return nd.FromSliceShaped(dev, []float32{}, []int{0, 3}) }, []int{0, 3}, []float64{}},
		{"FromSlice-no-shape-is-1-D", func() *nd.NDArray { return nd.FromSlice(dev, []float32{7}) }, []int{1}, []float64{7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := c.make()
			if !slices.Equal(a.Shape(), c.shape) || !slices.Equal(a.Float64s(), c.vals) {
				t.Errorf("got %v %v, want %v %v", a.Shape(), a.Float64s(), c.shape, c.vals)
			}
		})
	}
	if a := s.FromSliceShaped(dev, []float64{4}, nil); a.Session() != s {
		t.Errorf("session %v, want %v", a.Session(), s)
	}
	if err := nd.Catch(func() { nd.FromSliceShaped(dev, []float32{1, 2}, nil) }); err == nil {
		t.Error("two values for a 0-d array were accepted")
	}
}

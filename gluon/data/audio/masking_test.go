package audio_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/audio"
	"github.com/goluon/goluon/nd"
)

// recovered runs f and returns what it panics with, runtime errors
// included.
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// bandOf returns the frames (axis −1) or bins (axis −2) of x [F, T] that
// equal v, checking that each is masked across the other axis.
func bandOf(t *testing.T, x []float32, f, n int, axis int, v float32) []int {
	t.Helper()
	var band []int
	size, other := n, f
	if axis == -2 {
		size, other = f, n
	}
	for i := range size {
		hits := 0
		for j := range other {
			at := j*n + i
			if axis == -2 {
				at = i*n + j
			}
			if x[at] == v {
				hits++
			}
		}
		switch hits {
		case other:
			band = append(band, i)
		case 0:
		default:
			t.Fatalf("index %d masked in %d of %d places", i, hits, other)
		}
	}
	for k := 1; k < len(band); k++ {
		if band[k] != band[k-1]+1 {
			t.Fatalf("masked indices %v are not one band", band)
		}
	}
	return band
}

// TestMaskingWiderThanAxisTransform: TimeMasking(80) on spectrograms of
// 40 frames and FrequencyMasking(30) on 23 mel bins, as SpecAugment
// recipes apply them to short utterances, in the data pipeline
// (Transform, as a DataLoader's workers call it): every sample gets one
// band, cut to the axis, and no runtime panic. torchaudio's values for
// given draws are in the goldens (mask cases of make_goldens.py).
func TestMaskingWiderThanAxisTransform(t *testing.T) {
	for _, c := range []struct {
		name  string
		block *audio.Masking
		f, n  int
		axis  int
	}{
		{"TimeMasking(80) on 40 frames", audio.NewTimeMasking(80, audio.MaskOpts{Value: -7}), 16, 40, -1},
		{"FrequencyMasking(30) on 23 bins", audio.NewFrequencyMasking(30, audio.MaskOpts{Value: -7}), 23, 12, -2},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := audio.Transform(c.block)
			x := data.Tensor{Shape: []int{1, c.f, c.n}, F32: make([]float32, c.f*c.n)}
			rng := rand.New(rand.NewPCG(3, 4))
			size := c.n
			if c.axis == -2 {
				size = c.f
			}
			whole := 0
			for i := range 300 {
				var y data.Tensor
				var err error
				if p := recovered(func() { y, err = tr(x, rng) }); p != nil {
					t.Fatalf("sample %d: the transform panics: %v", i, p)
				}
				if err != nil {
					t.Fatalf("sample %d: %v", i, err)
				}
				if !slices.Equal(y.Shape, x.Shape) {
					t.Fatalf("shape %v", y.Shape)
				}
				if len(bandOf(t, y.F32, c.f, c.n, c.axis, -7)) == size {
					whole++
				}
			}
			if whole == 0 || whole == 300 {
				t.Errorf("%d of 300 masks cover the whole axis", whole)
			}
		})
	}
}

// TestMaskingIIDWiderThanAxis: iid masks wider than the axis, with the
// Block's own draws: each example's and channel's mask is one band of its
// own (a band cut at the start once spilled into the previous example's).
func TestMaskingIIDWiderThanAxis(t *testing.T) {
	dev := ctx.CPU(0)
	m := audio.NewFrequencyMasking(30, audio.MaskOpts{IID: true, Value: -7})
	const b, c, f, n = 4, 2, 23, 3
	x := nd.Zeros(dev, nd.Float32, b, c, f, n)
	for seed := range uint64(50) {
		var y []float32
		if p := recovered(func() { y = m.Apply(x, rand.New(rand.NewPCG(seed, 9))).Float32s() }); p != nil {
			t.Fatalf("seed %d: %v", seed, p)
		}
		for k := range b * c {
			t.Run(fmt.Sprint(seed, k), func(t *testing.T) {
				bandOf(t, y[k*f*n:(k+1)*f*n], f, n, -2, -7)
			})
		}
	}
}

// TestMaskingZeroP: torchaudio's p=0 (ZeroP) masks nothing and draws
// nothing; P's zero is p=1.
func TestMaskingZeroP(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Zeros(dev, nd.Float32, 1, 5, 20)
	rng := rand.New(rand.NewPCG(1, 1))
	y := audio.NewTimeMasking(10, audio.MaskOpts{ZeroP: true, Value: -7}).Apply(x, rng)
	if v := y.Float32s(); slices.Contains(v, -7) {
		t.Error("p=0 masked")
	}
	if got, want := rng.Uint64(), rand.New(rand.NewPCG(1, 1)).Uint64(); got != want {
		t.Error("p=0 drew from the generator")
	}
	masked := 0
	for seed := range uint64(20) {
		v := audio.NewTimeMasking(10, audio.MaskOpts{Value: -7}).Apply(x, rand.New(rand.NewPCG(seed, 1))).Float32s()
		if slices.Contains(v, -7) {
			masked++
		}
	}
	if masked == 0 {
		t.Error("P's zero value masked nothing in 20 draws; it means p = 1")
	}
}

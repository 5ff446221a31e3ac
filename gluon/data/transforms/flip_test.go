package transforms

import (
	"math"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

func TestFlipLeftRightExact(t *testing.T) {
	cases := []struct {
		name     string
		in, want data.Tensor
	}{
		{"HWC uint8 2x3x3",
			u8([]int{2, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18),
			u8([]int{2, 3, 3}, 7, 8, 9, 4, 5, 6, 1, 2, 3, 16, 17, 18, 13, 14, 15, 10, 11, 12)},
		{"HWC uint8 1x3x2",
			u8([]int{1, 3, 2}, 1, 2, 3, 4, 5, 6),
			u8([]int{1, 3, 2}, 5, 6, 3, 4, 1, 2)},
		{"HW uint8 2x3",
			u8([]int{2, 3}, 1, 2, 3, 4, 5, 6),
			u8([]int{2, 3}, 3, 2, 1, 6, 5, 4)},
		{"CHW float32 2x2x3",
			f32([]int{2, 2, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
			f32([]int{2, 2, 3}, 3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10)},
		{"HW float32 1x1", f32([]int{1, 1}, 5), f32([]int{1, 1}, 5)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustRun(t, FlipLeftRight(), c.in, nil); !equal(got, c.want) {
				t.Errorf("FlipLeftRight = %v, want %v", got, c.want)
			}
			if got := mustRun(t, RandomFlipLeftRight(1), c.in, seeded(1)); !equal(got, c.want) {
				t.Errorf("RandomFlipLeftRight(1) = %v, want %v", got, c.want)
			}
			if got := mustRun(t, RandomFlipLeftRight(0), c.in, seeded(1)); !equal(got, c.in) {
				t.Errorf("RandomFlipLeftRight(0) = %v, want the input", got)
			}
		})
	}
}

func TestRandomFlipProbability(t *testing.T) {
	x := u8([]int{1, 2}, 1, 2)
	const n = 10000
	for _, p := range []float64{0, 0.2, 0.5, 0.9, 1} {
		tr := RandomFlipLeftRight(p)
		rng := seeded(11)
		flips := 0
		for range n {
			if mustRun(t, tr, x, rng).U8[0] == 2 {
				flips++
			}
		}
		sigma := math.Sqrt(n * p * (1 - p))
		if got := float64(flips); math.Abs(got-n*p) > 4*sigma+0.5 {
			t.Errorf("p=%v: %d flips in %d draws, want about %.0f", p, flips, n, n*p)
		}
	}
}

func TestFlipErrors(t *testing.T) {
	for _, p := range []float64{-0.1, 1.5, math.NaN()} {
		_, err := RandomFlipLeftRight(p)(u8([]int{1, 1}, 1), seeded(1))
		wantError(t, err, "RandomFlipLeftRight")
	}
	_, err := RandomFlipLeftRight(0.5)(u8([]int{1, 1}, 1), nil)
	wantError(t, err, "RandomFlipLeftRight")
	for name, x := range badInputs {
		_, err := RandomFlipLeftRight(0.5)(x, seeded(1))
		if err == nil {
			t.Errorf("accepted %s input", name)
		}
		_, err = FlipLeftRight()(x, nil)
		if err == nil {
			t.Errorf("FlipLeftRight accepted %s input", name)
		}
	}
}

func TestRandomFlipTopBottom(t *testing.T) {
	cases := []struct {
		name     string
		in, want data.Tensor
	}{
		{"HW uint8", u8([]int{3, 2}, 1, 2, 3, 4, 5, 6), u8([]int{3, 2}, 5, 6, 3, 4, 1, 2)},
		{"HWC uint8", u8([]int{2, 1, 3}, 1, 2, 3, 4, 5, 6), u8([]int{2, 1, 3}, 4, 5, 6, 1, 2, 3)},
		{"CHW float32", f32([]int{2, 2, 1}, 1, 2, 3, 4), f32([]int{2, 2, 1}, 2, 1, 4, 3)},
	}
	for _, c := range cases {
		if got := mustRun(t, RandomFlipTopBottom(1), c.in, seeded(1)); !equal(got, c.want) {
			t.Errorf("%s: RandomFlipTopBottom(1) = %v, want %v", c.name, got, c.want)
		}
		if got := mustRun(t, RandomFlipTopBottom(0), c.in, seeded(1)); !equal(got, c.in) {
			t.Errorf("%s: RandomFlipTopBottom(0) = %v, want the input", c.name, got)
		}
	}
	_, err := RandomFlipTopBottom(1.5)(u8([]int{1, 1}, 1), seeded(1))
	wantError(t, err, "RandomFlipTopBottom")
	_, err = RandomFlipTopBottom(0.5)(u8([]int{1, 1}, 1), nil)
	wantError(t, err, "RandomFlipTopBottom")
}

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/nd/backend"
)

// poolCase builds the parameters of one plane of max pooling.
func poolCase(in, k, s [2]int) backend.PoolParams { return paddedPoolCase(in, k, s, [2]int{}) }

// paddedPoolCase is poolCase with padding.
func paddedPoolCase(in, k, s, pad [2]int) backend.PoolParams {
	return backend.PoolParams{
		Type: backend.PoolMax, N: 1, C: 1, InH: in[0], InW: in[1],
		OutH: (in[0]+2*pad[0]-k[0])/s[0] + 1, OutW: (in[1]+2*pad[1]-k[1])/s[1] + 1,
		KH: k[0], KW: k[1], StrideH: s[0], StrideW: s[1], PadH: pad[0], PadW: pad[1],
	}
}

// TestMaxPoolFastPath checks that the max-pooling loops give bit-identical
// results to the generic loops, forward and backward, on inputs with ties
// (small integers, −0 against +0), NaN and −Inf, for the 2×2 special case,
// other windows, overlapping windows, padding (ResNet's 3×3 stride-2
// pooling) and inputs the windows do not cover entirely; with the AVX2
// and AVX-512 kernels and without them.
func TestMaxPoolFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := []struct{ in, k, s, pad [2]int }{
		{[2]int{24, 24}, [2]int{2, 2}, [2]int{2, 2}, [2]int{}},
		{[2]int{7, 9}, [2]int{2, 2}, [2]int{2, 2}, [2]int{}},
		{[2]int{10, 10}, [2]int{2, 2}, [2]int{2, 2}, [2]int{}},
		{[2]int{8, 8}, [2]int{2, 2}, [2]int{3, 3}, [2]int{}},
		{[2]int{6, 6}, [2]int{2, 2}, [2]int{1, 2}, [2]int{}},
		{[2]int{9, 8}, [2]int{3, 3}, [2]int{2, 2}, [2]int{}},
		{[2]int{8, 8}, [2]int{3, 2}, [2]int{1, 1}, [2]int{}},
		{[2]int{5, 5}, [2]int{5, 5}, [2]int{1, 1}, [2]int{}},
		{[2]int{10, 10}, [2]int{1, 1}, [2]int{3, 3}, [2]int{}},
		// Rows of 8·k + r windows for the AVX2 kernels (with NaN in
		// some groups of 8 and not others), an odd input width.
		{[2]int{4, 40}, [2]int{2, 2}, [2]int{2, 2}, [2]int{}},
		{[2]int{6, 33}, [2]int{2, 2}, [2]int{2, 2}, [2]int{}},
		{[2]int{8, 70}, [2]int{2, 2}, [2]int{2, 2}, [2]int{}},
		// Padding: ResNet's stem pooling, uneven padding, 2×2 padded.
		{[2]int{16, 16}, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}},
		{[2]int{7, 9}, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}},
		{[2]int{5, 6}, [2]int{3, 2}, [2]int{1, 2}, [2]int{2, 1}},
		{[2]int{6, 6}, [2]int{2, 2}, [2]int{2, 2}, [2]int{1, 1}},
		// Three-wide windows: an odd number inside, none inside.
		{[2]int{6, 11}, [2]int{3, 3}, [2]int{1, 1}, [2]int{1, 1}},
		{[2]int{4, 2}, [2]int{3, 3}, [2]int{1, 1}, [2]int{1, 1}},
		{[2]int{5, 3}, [2]int{2, 3}, [2]int{2, 1}, [2]int{0, 0}},
		// Three wide at stride 2 (the AVX-512 kernel): 16 windows and a
		// tail, more than 32, fewer than 16; one and two rows high.
		{[2]int{5, 40}, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}},
		{[2]int{7, 70}, [2]int{3, 3}, [2]int{2, 2}, [2]int{0, 0}},
		{[2]int{9, 67}, [2]int{3, 3}, [2]int{1, 2}, [2]int{1, 1}},
		{[2]int{4, 12}, [2]int{1, 3}, [2]int{1, 2}, [2]int{0, 1}},
		{[2]int{6, 35}, [2]int{2, 3}, [2]int{2, 2}, [2]int{1, 0}},
	}
	defer func(v bool) { useAsmKernel = v }(useAsmKernel)
	asmOn := useAsmKernel // the loop below turns it off
	for _, c := range cases {
		for _, asm := range []bool{asmOn, false} {
			useAsmKernel = asm
			t.Run(fmt.Sprint(c.in, c.k, c.s, c.pad, asm), func(t *testing.T) {
				p := paddedPoolCase(c.in, c.k, c.s, c.pad)
				if !fastMaxPool(p) {
					t.Fatal("the fast path does not apply")
				}
				x := make([]float32, p.InH*p.InW)
				for i := range x {
					x[i] = float32(r.IntN(4)) // ties
					switch r.IntN(40) {
					case 0:
						x[i] = float32(math.NaN())
					case 1, 2:
						x[i] = float32(math.Inf(-1))
					case 3, 4, 5, 6:
						x[i] = float32(math.Copysign(0, -1)) // ties with +0
					case 7, 8:
						x[i] = -float32(r.IntN(3) + 1)
					}
				}
				dy := make([]float32, p.OutH*p.OutW)
				for i := range dy {
					dy[i] = float32(r.NormFloat64())
				}
				y, want := make([]float32, len(dy)), make([]float32, len(dy))
				maxPoolPlane(p, y, x)
				poolPlane(p, want, x)
				if !slices.EqualFunc(y, want, sameBits) {
					t.Errorf("forward\n got %v\nwant %v", y, want)
				}
				dx, dxWant := make([]float32, len(x)), make([]float32, len(x))
				for i := range dx {
					dx[i] = 7 // must be overwritten
				}
				maxPoolBackwardPlane(p, dx, x, dy)
				poolBackwardPlane(p, dxWant, x, dy)
				if !slices.EqualFunc(dx, dxWant, sameBits) {
					t.Errorf("backward\n got %v\nwant %v", dx, dxWant)
				}
				maxPoolBackwardPlaneY(p, dx, x, want, dy)
				if !slices.EqualFunc(dx, dxWant, sameBits) {
					t.Errorf("backward from y\n got %v\nwant %v", dx, dxWant)
				}
				other := slices.Clone(want) // outputs equal to no input: the search
				for i := range other {
					other[i] = other[i]*0.5 + 0.25
				}
				maxPoolBackwardPlaneY(p, dx, x, other, dy)
				if !slices.EqualFunc(dx, dxWant, sameBits) {
					t.Errorf("backward from another y\n got %v\nwant %v", dx, dxWant)
				}
				if !pool2x2(p) {
					return
				}
				for i := range dx {
					dx[i] = 7
				}
				maxPool2x2BackwardPlane(p, dx, x, want, dy)
				if !slices.EqualFunc(dx, dxWant, sameBits) {
					t.Errorf("2x2 backward from y\n got %v\nwant %v", dx, dxWant)
				}
				dx64 := make([]float64, len(x))
				maxPool2x2BackwardPlane(p, dx64, widen(x), widen(want), widen(dy))
				if !slices.Equal(dx64, widen(dxWant)) {
					t.Errorf("2x2 float64 backward\n got %v\nwant %v", dx64, dxWant)
				}
			})
		}
	}
	if padded := paddedPoolCase([2]int{6, 6}, [2]int{2, 2}, [2]int{2, 2}, [2]int{1, 0}); pool2x2(padded) {
		t.Error("the 2×2 kernels claim a padded pooling")
	}
	if wide := paddedPoolCase([2]int{6, 6}, [2]int{2, 2}, [2]int{2, 2}, [2]int{2, 0}); fastMaxPool(wide) {
		t.Error("the fast path claims padding as wide as the window")
	}
	zero := poolCase([2]int{6, 6}, [2]int{2, 2}, [2]int{1, 1})
	zero.StrideW = 0
	if fastMaxPool(zero) {
		t.Error("the fast path claims a stride of 0")
	}
	empty := paddedPoolCase([2]int{0, 4}, [2]int{2, 2}, [2]int{2, 2}, [2]int{1, 1})
	if fastMaxPool(empty) {
		t.Error("the fast path claims an empty input")
	}
	y := make([]float32, empty.OutH*empty.OutW)
	pool2D(empty, y, nil)
	for i, v := range y {
		if !math.IsInf(float64(v), -1) {
			t.Errorf("max pooling of an empty input: y[%d] = %v, want -Inf", i, v)
		}
	}
}

// BenchmarkMaxPool times LeNet's first pooling layer (batch 128, 6
// channels, 24×24, 2×2 stride 2) and ResNet's stem pooling at CIFAR's
// shape (batch 128, 64 channels, 16×16, 3×3 stride 2 padding 1), forward
// and backward.
func BenchmarkMaxPool(b *testing.B) {
	for _, c := range []struct {
		name string
		p    backend.PoolParams
	}{
		{"lenet", poolCase([2]int{24, 24}, [2]int{2, 2}, [2]int{2, 2})},
		{"resnet", paddedPoolCase([2]int{16, 16}, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1})},
	} {
		p := c.p
		p.N, p.C = 128, 6
		if c.name == "resnet" {
			p.C = 64
		}
		x := make([]float32, p.N*p.C*p.InH*p.InW)
		r := rand.New(rand.NewPCG(1, 1))
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		y := make([]float32, p.N*p.C*p.OutH*p.OutW)
		dx := make([]float32, len(x))
		b.Run(c.name+"/forward", func(b *testing.B) {
			for b.Loop() {
				pool2D(p, y, x)
			}
		})
		b.Run(c.name+"/backward", func(b *testing.B) {
			for b.Loop() {
				pool2DBackward(p, dx, x, y, y)
			}
		})
	}
}

// TestMaxPoolStackedPlanes pools several planes through pool2D, where
// planes of even height go to the ZMM kernel stacked as one tall plane,
// and checks each plane against the generic loops, bit for bit (NaN and
// −0 included); odd heights keep the per-plane path (odd widths stack).
func TestMaxPoolStackedPlanes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, in := range [][2]int{{24, 24}, {10, 10}, {8, 70}, {2, 2}, {7, 9}, {6, 33}} {
		p := paddedPoolCase(in, [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		p.N, p.C = 3, 5
		inPlane, outPlane := p.InH*p.InW, p.OutH*p.OutW
		x := make([]float32, p.N*p.C*inPlane)
		for i := range x {
			x[i] = float32(r.IntN(5)) - 2
			switch r.IntN(30) {
			case 0:
				x[i] = float32(math.NaN())
			case 1:
				x[i] = float32(math.Copysign(0, -1))
			}
		}
		y := make([]float32, p.N*p.C*outPlane)
		pool2D(p, y, x)
		one := p
		one.N, one.C = 1, 1
		for pl := range p.N * p.C {
			want := make([]float32, outPlane)
			poolPlane(one, want, x[pl*inPlane:][:inPlane])
			if got := y[pl*outPlane:][:outPlane]; !slices.EqualFunc(got, want, sameBits) {
				t.Fatalf("%v plane %d (stacked %v):\n got %v\nwant %v", in, pl, stackedMaxPool2x2(p), got, want)
			}
		}
	}
}

// TestMaxPoolBackwardOrder checks that overlapping windows add their
// gradients into a shared input in the generic loop's order: a unique
// maximum in four 3×3 stride-2 windows gets four gradients of mixed
// magnitudes, whose float32 sum depends on the order.
func TestMaxPoolBackwardOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, in := range [][2]int{{10, 36}, {9, 70}, {16, 16}} {
		p := paddedPoolCase(in, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1})
		x := make([]float32, p.InH*p.InW)
		for i := range x {
			x[i] = r.Float32()
		}
		for a := 1; a < p.InH; a += 4 {
			for b := 1; b < p.InW; b += 4 {
				x[a*p.InW+b] = 10 // the maximum of the (up to) four windows around it
			}
		}
		dy := make([]float32, p.OutH*p.OutW)
		for i := range dy {
			dy[i] = float32(math.Pow(10, 12*r.Float64()-6) * float64(1-2*r.IntN(2)))
		}
		y := make([]float32, len(dy))
		poolPlane(p, y, x)
		dx, want := make([]float32, len(x)), make([]float32, len(x))
		poolBackwardPlane(p, want, x, dy)
		maxPoolBackwardPlaneY(p, dx, x, y, dy)
		if !slices.EqualFunc(dx, want, sameBits) {
			t.Errorf("%v: backward from y\n got %v\nwant %v", in, dx, want)
		}
	}
}

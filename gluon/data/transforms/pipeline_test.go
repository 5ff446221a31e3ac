package transforms

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/goluon/goluon/gluon/data"
)

// CIFAR-10 channel statistics on the [0, 1] scale.
var cifarMean, cifarStd = []float32{0.4914, 0.4822, 0.4465}, []float32{0.2470, 0.2435, 0.2616}

func cifarPipeline() data.Transform {
	return data.Compose(
		RandomShift(0.1, 0.1, Nearest, 0),
		RandomFlipLeftRight(0.5),
		ToTensor(),
		Normalize(cifarMean, cifarStd),
	)
}

func cifarImage(seed uint64) data.Tensor {
	rng := seeded(seed)
	x := u8([]int{32, 32, 3}, make([]uint8, 32*32*3)...)
	for i := range x.U8 {
		x.U8[i] = uint8(rng.IntN(256))
	}
	return x
}

func TestCIFARPipeline(t *testing.T) {
	x := cifarImage(1)
	g, _ := geometry("test", x)
	tr := cifarPipeline()
	flips := 0
	for seed := range uint64(200) {
		got := mustRun(t, tr, x, seeded(seed))
		if !equal(data.Tensor{Shape: got.Shape}, data.Tensor{Shape: []int{3, 32, 32}}) || got.F32 == nil {
			t.Fatalf("output shape %v, want float32 [3 32 32]", got.Shape)
		}
		// Replay the draws in the documented order: height shift, width
		// shift, then the flip.
		rng := seeded(seed)
		dy, dx := drawShift(rng, 0.1, 32), drawShift(rng, 0.1, 32)
		flip := rng.Float64() < 0.5
		if flip {
			flips++
		}
		shifted := reference(x, g, 32, 32, -dy, -dx, Nearest, 0) // HWC values
		for c := range 3 {
			for y := range 32 {
				for xx := range 32 {
					sx := xx
					if flip {
						sx = 31 - xx
					}
					v := float32(uint8(shifted[(y*32+sx)*3+c])) / 255
					want := (v - cifarMean[c]) / cifarStd[c]
					if g := got.F32[(c*32+y)*32+xx]; g != want {
						t.Fatalf("seed %d (shift %d,%d flip %v): [%d,%d,%d] = %v, want %v", seed, dy, dx, flip, c, y, xx, g, want)
					}
				}
			}
		}
	}
	if flips == 0 || flips == 200 {
		t.Fatalf("%d flips in 200 draws", flips)
	}
}

// transformCase is a transform, an input it accepts, and whether it draws
// from its rng.
type transformCase struct {
	tr     data.Transform
	x      data.Tensor
	random bool
}

// allTransforms is one of every transform, with inputs they accept.
func allTransforms() map[string]transformCase {
	hwc := cifarImage(2)
	chw := mustRunNoT(ToTensor(), hwc)
	mean := mustRunNoT(ToFloat(), cifarImage(3))
	return map[string]transformCase{
		"ToTensor":             {ToTensor(), hwc, false},
		"ToFloat":              {ToFloat(), hwc, false},
		"Normalize":            {Normalize(cifarMean, cifarStd), chw, false},
		"SubtractMean":         {SubtractMean(mean), chw, false},
		"FlipLeftRight":        {FlipLeftRight(), hwc, false},
		"RandomFlip HWC":       {RandomFlipLeftRight(0.5), hwc, true},
		"RandomFlip CHW":       {RandomFlipLeftRight(0.5), chw, true},
		"Shift":                {Shift(2, -1, Nearest, 0), chw, false},
		"RandomShift HWC":      {RandomShift(0.2, 0.2, Nearest, 0), hwc, true},
		"RandomShift CHW":      {RandomShift(0.2, 0.2, Constant, 0.5), chw, true},
		"RandomCrop HWC":       {RandomCrop([2]int{32, 32}, 4, Constant, 0), hwc, true},
		"RandomCrop CHW":       {RandomCrop([2]int{28, 30}, 2, Nearest, 0), chw, true},
		"CIFAR pipeline":       {cifarPipeline(), hwc, true},
		"MiniGoogLeNet inputs": {data.Compose(ToFloat(), SubtractMean(mean), RandomShift(0.1, 0.1, Nearest, 0), RandomFlipLeftRight(0.5)), hwc, true},
		"AdjustHue HWC":        {AdjustHue(0.2), hwc, false},
		"AdjustContrast CHW":   {AdjustContrast(1.3), chw, false},
		"Grayscale":            {Grayscale(3), chw, false},
		"ColorJitter HWC":      {ColorJitter(0.4, 0.4, 0.4, 0.1), hwc, true},
		"ColorJitter CHW":      {ColorJitter(0.4, 0.4, 0.4, 0.1), chw, true},
		"RandomHue":            {RandomHue(0.3), hwc, true},
		"RandomGrayscale":      {RandomGrayscale(0.5), hwc, true},
		"Rotate CHW":           {Rotate(33, RotateOpts{Fill: []float32{0.5}}), chw, false},
		"RandomRotation HWC":   {RandomRotation([2]float64{-30, 30}, RotateOpts{}), hwc, true},
		"RandomRotation CHW":   {RandomRotation([2]float64{-30, 30}, RotateOpts{Interp: InterpNearest, Expand: true}), chw, true},
		"RandomAffine HWC":     {RandomAffine(AffineRanges{Degrees: [2]float64{-10, 10}, Translate: [2]float64{0.1, 0.1}, Scale: [2]float64{0.9, 1.1}, Shear: [4]float64{-5, 5, 0, 0}}, RotateOpts{}), hwc, true},
		"GaussianBlur HWC":     {GaussianBlur([2]int{5, 5}, [2]float64{0.1, 2}), hwc, true},
		"GaussianBlur CHW":     {GaussianBlur([2]int{9, 3}, [2]float64{0.1, 2}), chw, true},
		"RandomErasing":        {RandomErasing(0.5, [2]float64{0.02, 0.33}, [2]float64{0.3, 3.3}), chw, true},
		"RandomErasingNoise":   {RandomErasingNoise(0.5, [2]float64{0.02, 0.33}, [2]float64{0.3, 3.3}), chw, true},
		"SimCLR-style":         {data.Compose(RandomResizedCrop([2]int{32, 32}, [2]float64{0.2, 1}, [2]float64{3. / 4, 4. / 3}, ResizeOpts{}), RandomFlipLeftRight(0.5), ColorJitter(0.4, 0.4, 0.4, 0.1), RandomGrayscale(0.2), GaussianBlur([2]int{3, 3}, [2]float64{0.1, 2}), ToTensor()), hwc, true},
	}
}

func mustRunNoT(tr data.Transform, x data.Tensor) data.Tensor {
	y, err := tr(x, nil)
	if err != nil {
		panic(err)
	}
	return y
}

func TestInputsNotModified(t *testing.T) {
	for name, c := range allTransforms() {
		before := c.x.Clone()
		for seed := range uint64(20) {
			if _, err := c.tr(c.x, seeded(seed)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if !equal(before, c.x) {
			t.Errorf("%s modified its input", name)
		}
	}
}

func TestDeterminism(t *testing.T) {
	for name, c := range allTransforms() {
		first := mustRun(t, c.tr, c.x, seeded(42))
		if again := mustRun(t, c.tr, c.x, seeded(42)); !equal(first, again) {
			t.Errorf("%s: same seed, different outputs", name)
		}
		if !c.random {
			continue
		}
		distinct := 0
		for seed := range uint64(20) {
			if !equal(first, mustRun(t, c.tr, c.x, seeded(seed+100))) {
				distinct++
			}
		}
		if distinct == 0 {
			t.Errorf("%s: 20 other seeds all gave the seed-42 output", name)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	for name, c := range allTransforms() {
		const workers, per = 8, 25
		want := make([]data.Tensor, workers*per)
		for i := range want {
			want[i] = mustRun(t, c.tr, c.x, seeded(uint64(i)))
		}
		got := make([]data.Tensor, len(want))
		errs := make([]error, len(want))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for j := range per {
					i := w*per + j
					got[i], errs[i] = c.tr(c.x, seeded(uint64(i)))
				}
			})
		}
		wg.Wait()
		for i := range want {
			if errs[i] != nil || !equal(got[i], want[i]) {
				t.Fatalf("%s: concurrent call %d differs from the sequential one (err %v)", name, i, errs[i])
			}
		}
	}
}

func BenchmarkCIFARPipeline(b *testing.B) {
	tr := cifarPipeline()
	x := cifarImage(1)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if _, err := tr(x, rng); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "images/s")
}

func BenchmarkTransform(b *testing.B) {
	for name, c := range allTransforms() {
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.tr(c.x, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

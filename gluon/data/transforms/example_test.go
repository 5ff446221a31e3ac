package transforms_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/data/transforms"
)

// A 2x2 RGB image, stored HWC as files hold it, becomes CHW in [0, 1].
func ExampleToTensor() {
	img := data.Tensor{Shape: []int{2, 2, 3}, U8: []uint8{
		255, 0, 0, 0, 255, 0,
		0, 0, 255, 51, 102, 153,
	}}
	x, err := transforms.ToTensor()(img, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Shape)
	fmt.Println(x.F32)
	// Output:
	// [3 2 2]
	// [1 0 0 0.2 0 1 0 0.4 0 0 1 0.6]
}

// Shifting a 3x4 image one pixel right: Nearest repeats the left edge,
// Constant fills with cval.
func ExampleShift() {
	img := data.Tensor{Shape: []int{3, 4}, U8: []uint8{
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 10, 11, 12,
	}}
	for _, fill := range []transforms.FillMode{transforms.Nearest, transforms.Constant} {
		x, _ := transforms.Shift(0, 1, fill, 0)(img, nil)
		fmt.Println(fill, x.U8)
	}
	// Output:
	// nearest [1 1 2 3 5 5 6 7 9 9 10 11]
	// constant [0 1 2 3 0 5 6 7 0 9 10 11]
}

// The usual CIFAR-10 training augmentation: Keras-style shifts of up to 10%
// with edge fill, a horizontal flip half of the time, then Gluon's ToTensor
// and Normalize.
func ExampleRandomShift() {
	aug := data.Compose(
		transforms.RandomShift(0.1, 0.1, transforms.Nearest, 0),
		transforms.RandomFlipLeftRight(0.5),
		transforms.ToTensor(),
		transforms.Normalize([]float32{0.4914, 0.4822, 0.4465}, []float32{0.2470, 0.2435, 0.2616}),
	)
	img := data.Tensor{Shape: []int{32, 32, 3}, U8: make([]uint8, 32*32*3)}
	rng := data.SampleRNG(1, 0, 0) // the generator a DataLoader gives sample 0 in epoch 0
	x, err := aug(img, rng)
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Shape, len(x.F32))
	// Output: [3 32 32] 3072
}

// Torchvision's CIFAR augmentation: pad by 4 with zeros, crop back to 32x32.
func ExampleRandomCrop() {
	crop := transforms.RandomCrop([2]int{32, 32}, 4, transforms.Constant, 0)
	img := data.Tensor{Shape: []int{32, 32, 3}, U8: make([]uint8, 32*32*3)}
	x, _ := crop(img, rand.New(rand.NewPCG(1, 2)))
	fmt.Println(x.Shape)
	// Output: [32 32 3]
}

// Layout errors are reported, not panicked.
func ExampleNormalize_error() {
	img := data.Tensor{Shape: []int{2, 2, 3}, U8: make([]uint8, 12)}
	_, err := transforms.Normalize([]float32{0.5}, []float32{0.5})(img, nil)
	fmt.Println(err)
	// Output: transforms: Normalize: want a CHW float32 image, got uint8 (apply ToTensor first) (input uint8 [2 2 3])
}

type images []data.Tensor

func (d images) Len() int { return len(d) }
func (d images) Get(i int, _ *rand.Rand) (data.Sample, error) {
	return data.Sample{Data: d[i]}, nil
}

// Subtracting the per-pixel mean of the training set, as the MiniGoogLeNet
// tutorial does with `trainX -= mean`.
func ExampleMeanImage() {
	train := images{
		{Shape: []int{1, 2, 1}, U8: []uint8{10, 20}},
		{Shape: []int{1, 2, 1}, U8: []uint8{30, 60}},
	}
	mean, err := transforms.MeanImage(train, transforms.ToFloat())
	if err != nil {
		panic(err)
	}
	fmt.Println(mean.Shape, mean.F32)
	center := data.Compose(transforms.ToFloat(), transforms.SubtractMean(mean))
	x, _ := center(train[0], nil)
	fmt.Println(x.F32)
	// Output:
	// [1 1 2] [20 40]
	// [-10 -20]
}

// Per-channel statistics for Normalize, on ToTensor's [0, 1] scale.
func ExampleChannelMean() {
	train := images{
		{Shape: []int{1, 2, 2}, U8: []uint8{0, 255, 255, 255}},
		{Shape: []int{1, 2, 2}, U8: []uint8{0, 255, 255, 255}},
	}
	mean, std, err := transforms.ChannelMean(train, transforms.ToTensor())
	if err != nil {
		panic(err)
	}
	fmt.Println(mean, std)
	// Output: [0.5 1] [0.5 0]
}

// The evaluation preprocessing of ImageNet models from torchvision's
// model zoo (gluon/model/vision): the shorter side resized to 256 with
// PIL's antialiasing, the central 224×224 window, then values in [0, 1]
// normalised by ImageNet's channel statistics. Training uses
// RandomResizedCrop and a flip instead of the first two.
func ExampleResizeShorter() {
	eval := data.Compose(
		transforms.ResizeShorter(256, transforms.ResizeOpts{Antialias: true}),
		transforms.CenterCrop([2]int{224, 224}),
		transforms.ToTensor(),
		transforms.Normalize([]float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}),
	)
	train := data.Compose(
		transforms.RandomResizedCrop([2]int{224, 224}, [2]float64{0.08, 1}, [2]float64{3. / 4, 4. / 3}, transforms.ResizeOpts{Antialias: true}),
		transforms.RandomFlipLeftRight(0.5),
		transforms.ToTensor(),
		transforms.Normalize([]float32{0.485, 0.456, 0.406}, []float32{0.229, 0.224, 0.225}),
	)
	photo := data.Tensor{Shape: []int{480, 640, 3}, U8: make([]uint8, 480*640*3)} // HWC, as decoded
	x, err := eval(photo, nil)
	if err != nil {
		panic(err)
	}
	y, err := train(photo, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Shape, y.Shape)
	// Output:
	// [3 224 224] [3 224 224]
}

// torchvision's colour augmentation, as in SimCLR and many ImageNet
// recipes: brightness, contrast and saturation factors drawn from
// [0.6, 1.4] and a hue shift from [−0.1, 0.1], applied in a random order
// on the decoded uint8 image. The same generator state gives the same
// image; the deterministic AdjustBrightness it is built on scales and
// clamps (truncating uint8 values, as torchvision does on tensors).
func ExampleColorJitter() {
	jitter := transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)
	img := data.Tensor{Shape: []int{1, 2, 3}, U8: []uint8{200, 100, 50, 10, 20, 30}} // two HWC pixels
	a, err := jitter(img, data.SampleRNG(1, 0, 0))
	if err != nil {
		panic(err)
	}
	b, _ := jitter(img, data.SampleRNG(1, 0, 0))
	fmt.Println(a.Shape, a.U8, slices.Equal(a.U8, b.U8))

	brighter, _ := transforms.AdjustBrightness(1.5)(img, nil)
	fmt.Println(brighter.U8)

	aug := data.Compose(
		transforms.RandomResizedCrop([2]int{32, 32}, [2]float64{0.2, 1}, [2]float64{3. / 4, 4. / 3}, transforms.ResizeOpts{}),
		transforms.RandomFlipLeftRight(0.5),
		transforms.ColorJitter(0.4, 0.4, 0.4, 0.1),
		transforms.RandomGrayscale(0.2),
		transforms.ToTensor(),
	)
	x, err := aug(data.Tensor{Shape: []int{40, 50, 3}, U8: make([]uint8, 40*50*3)}, data.SampleRNG(1, 0, 1))
	if err != nil {
		panic(err)
	}
	fmt.Println(x.Shape)
	// Output:
	// [1 2 3] [212 87 82 7 24 28] true
	// [255 150 75 15 30 45]
	// [3 32 32]
}

// Rotating a 3×3 image by 90 degrees counter-clockwise, as torchvision's
// rotate does on tensors; RandomRotation draws the angle.
func ExampleRotate() {
	img := data.Tensor{Shape: []int{3, 3}, U8: []uint8{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}}
	x, err := transforms.Rotate(90, transforms.RotateOpts{Interp: transforms.InterpNearest})(img, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(x.U8)
	// Output: [3 6 9 2 5 8 1 4 7]
}

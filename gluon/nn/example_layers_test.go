package nn_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// show initialises b on cpu(0) with every weight set to one, runs it on x
// and prints the output rounded to three decimals.
func show(b gluon.Block, x *nd.NDArray) {
	if err := gluon.Initialize(b, initializer.One(), ctx.CPU(0)); err != nil {
		fmt.Println(err)
		return
	}
	y := b.Forward(x)
	fmt.Printf("%v %.3f\n", y.Shape(), y.Float32s())
}

func row(v ...float32) *nd.NDArray { return nd.FromSlice(ctx.CPU(0), v, 1, len(v)) }

// ExampleEmbedding looks up the vectors of a batch of token ids [2, 3]:
// the output has one more axis, the embedding's width. Row i of the weight
// is set to i, i+0.1, i+0.2 here so the lookup is visible.
func ExampleEmbedding() {
	dev := ctx.CPU(0)
	emb := nn.NewEmbedding(10, 3)
	if err := gluon.Initialize(emb, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	w := make([]float32, 30)
	for i := range w {
		w[i] = float32(i/3) + float32(i%3)/10
	}
	emb.Weight.SetData(nd.FromSlice(dev, w, 10, 3))
	y := emb.Forward(nd.FromSlice(dev, []int64{1, 2, 3, 4, 5, 9}, 2, 3))
	fmt.Printf("%v %.1f\n", y.Shape(), y.Float32s()[:6])
	// Output:
	// [2 3 3] [1.0 1.1 1.2 2.0 2.1 2.2]
}

// ExampleLayerNorm normalises each row to mean 0 and variance 1 (scale
// one, shift zero as initialised).
func ExampleLayerNorm() {
	show(nn.NewLayerNorm(-1, nn.NormOpts{}), row(1, 2, 3, 4))
	// Output:
	// [1 4] [-1.342 -0.447 0.447 1.342]
}

// ExampleGroupNorm normalises each of two groups of two channels.
func ExampleGroupNorm() {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 3, 10, 30}, 1, 4)
	show(nn.NewGroupNorm(2, nn.NormOpts{}), x)
	// Output:
	// [1 4] [-1.000 1.000 -1.000 1.000]
}

// ExampleInstanceNorm normalises each channel of each sample over its
// spatial positions.
func ExampleInstanceNorm() {
	x := nd.FromSlice(ctx.CPU(0), []float32{0, 2, 5, 7}, 1, 2, 2)
	show(nn.NewInstanceNorm(nn.NormOpts{}), x)
	// Output:
	// [1 2 2] [-1.000 1.000 -1.000 1.000]
}

// ExampleLeakyReLU keeps a slope of 0.1 for negative inputs.
func ExampleLeakyReLU() {
	show(nn.NewLeakyReLU(0.1), row(-2, -1, 0, 3))
	// Output:
	// [1 4] [-0.200 -0.100 0.000 3.000]
}

// ExamplePReLU learns the negative slope; it is initialised to one here,
// which makes it the identity.
func ExamplePReLU() {
	p := nn.NewPReLU(1)
	if err := gluon.Initialize(p, initializer.One(), ctx.CPU(0)); err != nil {
		fmt.Println(err)
		return
	}
	p.Alpha.SetData(nd.FromSlice(ctx.CPU(0), []float32{0.25}, 1))
	fmt.Printf("%.3f\n", p.Forward(row(-2, 4)).Float32s())
	// Output:
	// [-0.500 4.000]
}

// ExampleELU is α(eˣ − 1) below zero and the identity above.
func ExampleELU() {
	show(nn.NewELU(1), row(-1, 0, 2))
	// Output:
	// [1 3] [-0.632 0.000 2.000]
}

// ExampleGELU compares the exact (erf) form with the tanh approximation.
func ExampleGELU() {
	show(nn.NewGELU(false), row(-1, 0.5, 2))
	show(nn.NewGELU(true), row(-1, 0.5, 2))
	// Output:
	// [1 3] [-0.159 0.346 1.954]
	// [1 3] [-0.159 0.346 1.955]
}

// ExampleSiLU is x·sigmoid(x) (also called swish).
func ExampleSiLU() {
	show(nn.NewSiLU(), row(-1, 0, 2))
	// Output:
	// [1 3] [-0.269 0.000 1.762]
}

// ExamplePool1D pools a sequence of six values [1, 1, 6] with windows of
// two: the maxima, the means, and the global maximum.
func ExamplePool1D() {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 5, 2, 2, 0, 3}, 1, 1, 6)
	show(nn.NewMaxPool1D(2, nn.Pool1DOpts{}), x)
	show(nn.NewAvgPool1D(2, nn.Pool1DOpts{}), x)
	show(nn.NewGlobalMaxPool1D(), x)
	// Output:
	// [1 1 3] [5.000 2.000 3.000]
	// [1 1 3] [3.000 2.000 1.500]
	// [1 1 1] [5.000]
}

// ExamplePad2D pads one row [1, 2, 3] by two columns on the left and one
// on the right: reflected, replicated and with a constant.
func ExamplePad2D() {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3}, 1, 1, 1, 3)
	w := [4]int{2, 1, 0, 0} // left, right, top, bottom
	show(nn.NewReflectionPad2D(w), x)
	show(nn.NewReplicationPad2D(w), x)
	show(nn.NewConstantPad2D(w, 0), x)
	// Output:
	// [1 1 1 6] [3.000 2.000 1.000 2.000 3.000 2.000]
	// [1 1 1 6] [1.000 1.000 1.000 2.000 3.000 3.000]
	// [1 1 1 6] [0.000 0.000 1.000 2.000 3.000 0.000]
}

// ExamplePixelShuffle2D moves four channels of a 1×1 map into a 2×2 map.
func ExamplePixelShuffle2D() {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4}, 1, 4, 1, 1)
	show(nn.NewPixelShuffle2D(2), x)
	// Output:
	// [1 1 2 2] [1.000 2.000 3.000 4.000]
}

// ExampleActivation_hardSwish is MobileNetV3's x·clip(x/6 + 1/2, 0, 1).
func ExampleActivation_hardSwish() {
	show(nn.NewHardSwish(), row(-4, -1, 0, 1, 4))
	// Output:
	// [1 5] [-0.000 -0.333 0.000 0.667 4.000]
}

package initializer_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/goluon/goluon/gluon/initializer"
)

// Fill initialises a parameter by its name, as MXNet does: biases get
// zeros, batch-norm scales ones, and weights the initializer's draw.
func ExampleFill() {
	rng := rand.New(rand.NewPCG(1, 2))
	bias := make([]float64, 3)
	gamma := make([]float64, 3)
	weight := make([]float64, 4*3)
	initializer.Fill(initializer.Xavier{}, "dense0.bias", []int{3}, bias, rng)
	initializer.Fill(initializer.Xavier{}, "batchnorm0.gamma", []int{3}, gamma, rng)
	initializer.Fill(initializer.Constant{Value: 0.5}, "dense0.weight", []int{4, 3}, weight, rng)
	fmt.Println(bias, gamma, weight[:3])
	// Output:
	// [0 0 0] [1 1 1] [0.5 0.5 0.5]
}

// PyTorch initialises Linear and Conv weights with kaiming_uniform_(a=√5):
// values uniform within ±1/√fan_in.
func ExampleKaiming() {
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, 10*100) // a Dense of 100 inputs and 10 outputs
	initializer.Kaiming{Slope: math.Sqrt(5)}.InitWeight([]int{10, 100}, w, rng)
	lo, hi := slices.Min(w), slices.Max(w)
	fmt.Println(lo >= -0.1, hi <= 0.1, hi > 0.099)
	// Output:
	// true true true
}

package transforms

import (
	"math/rand/v2"

	"github.com/goluon/goluon/gluon/data"
)

// LinearTransformation returns torchvision's
// LinearTransformation(transformation_matrix, mean_vector), used for ZCA
// whitening: a float32 image of n = C·H·W values, flattened in CHW order
// into a row x, becomes (x − mean)·matrix, reshaped back. matrix is n×n,
// row-major (matrix[i*n+j] is row i, column j), and mean has n values;
// both are copied. Each output is accumulated in float64 from the float32
// differences, so results are within float32 rounding of torch's. A
// matrix that is not n×n for the mean's n is an argument error; uint8
// images and images of another size are input errors.
func LinearTransformation(matrix, mean []float32) data.Transform {
	const op = "LinearTransformation"
	n := len(mean)
	if n == 0 || len(matrix) != n*n {
		return argError(op, "want a non-empty mean of n values and an n×n matrix, got %d and %d values", n, len(matrix))
	}
	matrix, mean = append([]float32(nil), matrix...), append([]float32(nil), mean...)
	return func(x data.Tensor, _ *rand.Rand) (data.Tensor, error) {
		if _, err := floatInput(op, x); err != nil {
			return data.Tensor{}, err
		}
		if len(x.F32) != n {
			return data.Tensor{}, inputError(op, x, "image has %d values, the matrix is %d×%d", len(x.F32), n, n)
		}
		acc := make([]float64, n)
		for i, v := range x.F32 {
			d := float64(v - mean[i])
			row := matrix[i*n : (i+1)*n]
			for j, m := range row {
				acc[j] += d * float64(m)
			}
		}
		out := make([]float32, n)
		for j, v := range acc {
			out[j] = float32(v)
		}
		return data.Tensor{Shape: x.Shape, F32: out}, nil
	}
}

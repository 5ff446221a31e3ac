//go:build cuda || cudaemu

package cuda

func prod(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// forSlices calls fn once per slice of an iteration space with more than
// maxDims dimensions: the leading dimensions are walked on the host and fn
// gets each operand's element offset and the trailing maxDims dimensions.
// Spaces of at most maxDims dimensions give a single call with zero offsets.
func forSlices(shape []int, strides [][]int, fn func(offs []int, shape []int, strides [][]int)) {
	lead := max(len(shape)-maxDims, 0)
	inner := make([][]int, len(strides))
	for i, s := range strides {
		inner[i] = s[lead:]
	}
	outer := prod(shape[:lead])
	offs := make([]int, len(strides))
	for o := 0; o < outer; o++ {
		for i := range offs {
			offs[i] = 0
		}
		r := o
		for d := lead - 1; d >= 0; d-- {
			idx := r % shape[d]
			r /= shape[d]
			for i, s := range strides {
				offs[i] += idx * s[d]
			}
		}
		fn(offs, shape[lead:], inner)
	}
}

// extent returns how many elements a strided view of shape spans from its
// first element (strides are non-negative in nd), 0 for an empty view.
func extent(shape, strides []int) int {
	e := 1
	for d, n := range shape {
		if n == 0 {
			return 0
		}
		e += (n - 1) * strides[d]
	}
	return e
}

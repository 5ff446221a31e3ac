//go:build cuda || cudaemu

package cuda

// contiguousStrides returns the row-major strides of shape.
func contiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// coalesce simplifies an iteration space shared by several strided
// operands, as nd/cpu does: it drops dimensions of size 1 and merges
// neighbours that are contiguous with each other in every operand. The
// result has at least one dimension.
func coalesce(shape []int, strides ...[]int) ([]int, [][]int) {
	var sh []int
	st := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if k := len(sh) - 1; k >= 0 {
			merge := true
			for i, s := range strides {
				if st[i][k] != s[d]*n {
					merge = false
					break
				}
			}
			if merge {
				sh[k] *= n
				for i, s := range strides {
					st[i][k] = s[d]
				}
				continue
			}
		}
		sh = append(sh, n)
		for i, s := range strides {
			st[i] = append(st[i], s[d])
		}
	}
	if len(sh) == 0 {
		sh = []int{1}
		for i := range st {
			st[i] = []int{0}
		}
	}
	return sh, st
}

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

package backend

// ContiguousStrides returns the row-major strides of shape.
func ContiguousStrides(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// Coalesce simplifies an iteration space shared by several strided
// operands: it drops dimensions of size 1 and merges neighbours that are
// contiguous with each other in every operand. The result has at least one
// dimension.
func Coalesce(shape []int, strides ...[]int) ([]int, [][]int) {
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

// MergeReduceAxes simplifies the iteration space of a reduction of a
// contiguous array of the given shape over the axes marked in axes: it
// drops dimensions of size 1 and merges neighbours that are both reduced or
// both kept. Kept dimensions keep their order (the output's), so every
// backend plans its reductions from the same merged shape.
func MergeReduceAxes(shape []int, axes []bool) (merged []int, reduced []bool) {
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if k := len(merged) - 1; k >= 0 && reduced[k] == axes[d] {
			merged[k] *= n
			continue
		}
		merged = append(merged, n)
		reduced = append(reduced, axes[d])
	}
	return merged, reduced
}

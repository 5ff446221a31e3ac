package nd

// PadMode says how Pad fills the border.
type PadMode uint8

// The pad modes, as NumPy's pad and PyTorch's F.pad name them.
const (
	// PadConstant fills the border with a value.
	PadConstant PadMode = iota
	// PadEdge repeats the edge element (PyTorch's "replicate").
	PadEdge
	// PadReflect mirrors the elements next to the edge, without repeating
	// the edge itself ([1 2 3] padded by 2 is [3 2 1 2 3 2 1]); each width
	// must be less than the axis size.
	PadReflect
)

// Pad adds widths[d][0] elements before and widths[d][1] after axis d
// (axes without widths are not padded), filled per mode (value is
// PadConstant's fill). The gradient flows back to the elements that were
// copied, summed where an element fills several border positions.
func Pad(x *NDArray, widths [][2]int, mode PadMode, value float64) *NDArray {
	return dispatch("Pad", castNeutral, []*NDArray{x}, func(in []*NDArray) *NDArray { return padOp(in[0], widths, mode, value) })
}

func padOp(x *NDArray, widths [][2]int, mode PadMode, value float64) *NDArray {
	const op = "Pad"
	defer checkLive(op, x).done()
	if len(widths) > x.NDim() {
		fail(op, ErrArgument, "%d pad widths for a %d-d array of shape %v", len(widths), x.NDim(), x.shape)
	}
	out := x
	for d, w := range widths {
		before, after := w[0], w[1]
		n := x.shape[d]
		if before < 0 || after < 0 {
			fail(op, ErrArgument, "negative pad width %v on axis %d", w, d)
		}
		if before == 0 && after == 0 {
			continue
		}
		switch mode {
		case PadConstant:
			parts := []*NDArray{}
			if before > 0 {
				s := out.Shape()
				s[d] = before
				parts = append(parts, x.Session().Full(x.st.dev, x.dtype, value, s...))
			}
			parts = append(parts, out)
			if after > 0 {
				s := out.Shape()
				s[d] = after
				parts = append(parts, x.Session().Full(x.st.dev, x.dtype, value, s...))
			}
			out = Concat(parts, d)
		case PadEdge, PadReflect:
			if n == 0 {
				fail(op, ErrShape, "cannot pad an empty axis %d of shape %v by %v", d, x.shape, mode)
			}
			if mode == PadReflect && (before >= n || after >= n) {
				fail(op, ErrArgument, "reflect padding %v on axis %d needs widths below its size %d", w, d, n)
			}
			idx := make([]int, 0, before+n+after)
			for i := -before; i < n+after; i++ {
				k := i
				if mode == PadReflect {
					if k < 0 {
						k = -k
					}
					if k >= n {
						k = 2*(n-1) - k
					}
				}
				idx = append(idx, min(max(k, 0), n-1))
			}
			// The index array stays alive: Take's backward reads it.
			out = Take(out, x.Session().FromSlice(x.st.dev, idx), d, TakeClip)
		default:
			fail(op, ErrArgument, "unknown pad mode %d", mode)
		}
	}
	if out == x {
		return Slice(x) // a copy, as for any other width
	}
	return out
}

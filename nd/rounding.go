package nd

import "github.com/goluon/goluon/nd/backend"

// Floor returns the largest integer ≤ x, elementwise (integer arrays are
// returned as copies). The rounding functions are piecewise constant:
// they are not recorded, so no gradient flows through them (PyTorch's is
// zero almost everywhere).
func Floor(x *NDArray) *NDArray { return unaryRaw("Floor", backend.Floor, x, 0, 0) }

// Ceil returns the smallest integer ≥ x, elementwise; see Floor.
func Ceil(x *NDArray) *NDArray { return unaryRaw("Ceil", backend.Ceil, x, 0, 0) }

// Round returns the nearest integer to x, halves to even (NumPy's round,
// PyTorch's round: Round(2.5) = 2, Round(-0.5) = -0); see Floor.
func Round(x *NDArray) *NDArray { return unaryRaw("Round", backend.Round, x, 0, 0) }

// Trunc returns x rounded toward zero, elementwise; see Floor.
func Trunc(x *NDArray) *NDArray { return unaryRaw("Trunc", backend.Trunc, x, 0, 0) }

// FloorDiv returns ⌊a/b⌋ elementwise, broadcasting: Python's and NumPy's
// a // b, for integers and floats. On integers a zero divisor gives 0
// (Div's convention); on floats it gives ±Inf or NaN. It is piecewise
// constant and not recorded (no gradient flows through it).
func FloorDiv(a, b *NDArray) *NDArray { return binaryRaw("FloorDiv", backend.FloorDiv, a, b) }

// Mod returns a − b·⌊a/b⌋ elementwise, broadcasting: the remainder with
// the divisor's sign, as Python's a % b, NumPy's mod and PyTorch's
// remainder (Mod(-7, 3) = 2). On integers a zero divisor gives 0. Its
// gradient is 1 for a and −⌊a/b⌋ for b.
func Mod(a, b *NDArray) *NDArray {
	return binaryOp("Mod", backend.Mod, a, b, func(g, _ *NDArray, need []bool) (ga, gb *NDArray) {
		ga = pass(g, need[0])
		if need[1] {
			q := binaryRaw("Mod", backend.FloorDiv, a, b)
			gb = mulRaw(g, q)
			q.Release()
			unaryInPlace(gb, backend.Neg, 0, 0)
		}
		return
	})
}

// Fmod returns a − b·trunc(a/b) elementwise, broadcasting: the remainder
// with the dividend's sign, as C's fmod and PyTorch's fmod
// (Fmod(-7, 3) = -1). On integers a zero divisor gives 0. Its gradient is
// 1 for a and −trunc(a/b) for b.
func Fmod(a, b *NDArray) *NDArray {
	return binaryOp("Fmod", backend.Fmod, a, b, func(g, _ *NDArray, need []bool) (ga, gb *NDArray) {
		ga = pass(g, need[0])
		if need[1] {
			d := binaryRaw("Fmod", bDiv, a, b)
			unaryInPlace(d, backend.Trunc, 0, 0)
			gb = mulRaw(g, d)
			d.Release()
			unaryInPlace(gb, backend.Neg, 0, 0)
		}
		return
	})
}

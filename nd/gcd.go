package nd

// Gcd returns the greatest common divisor of a and b elementwise,
// broadcasting (PyTorch's gcd): non-negative, with gcd(0, 0) = 0. a and b
// are integer arrays (Int32, Int64 or Uint8) of one dtype; floating and
// Bool arrays are an error. It runs Euclid's algorithm where the arrays
// live, one round of elementwise ops per step, reading back after each
// whether any element still needs one (at most about 92 rounds for Int64).
// As in PyTorch, the magnitude of the most negative value wraps to itself.
func Gcd(a, b *NDArray) *NDArray {
	const op = "Gcd"
	defer checkInputs(op, a, b).done()
	checkIntegers(op, a)
	return gcd(op, a, b)
}

// gcd is Gcd on checked inputs.
func gcd(op string, a, b *NDArray) *NDArray {
	shape := broadcastShape(op, a.shape, b.shape)
	// PyTorch's loop: u, v = |a|, |b|; while u ≠ 0: u, v = v mod u, u.
	u := BroadcastTo(Abs(a), shape...)
	v := BroadcastTo(Abs(b), shape...)
	zero, one := scalarLike(u, 0), scalarLike(u, 1)
	for step := 0; ; step++ {
		nz := NotEqual(u, zero)
		some := AnyTrue(nz)
		more := some.Bools()[0]
		release(some)
		if !more {
			release(nz)
			return v
		}
		d := Where(nz, u, one)
		r := Sub(v, Mul(Div(v, d), d)) // v mod u, truncating as C's %
		nu, nv := Where(nz, r, zero), Where(nz, u, v)
		release(nz, d, r)
		if step > 0 { // u and v are this loop's own arrays
			release(u, v)
		}
		u, v = nu, nv
	}
}

// Lcm returns the least common multiple of a and b elementwise,
// broadcasting (PyTorch's lcm): |a/gcd(a, b)·b|, 0 where either is 0; the
// product wraps in the dtype, as PyTorch's does. a and b are integer
// arrays of one dtype, as for Gcd.
func Lcm(a, b *NDArray) *NDArray {
	const op = "Lcm"
	defer checkInputs(op, a, b).done()
	checkIntegers(op, a)
	g := gcd(op, a, b)
	zero, one := scalarLike(g, 0), scalarLike(g, 1)
	isZero := Equal(g, zero)
	q := Abs(Mul(Div(a, Where(isZero, one, g)), b))
	out := Where(isZero, zero, q)
	release(g, isZero, q)
	return out
}

// checkIntegers fails unless a is an integer array.
func checkIntegers(op string, a *NDArray) {
	if !a.dtype.IsInt() {
		fail(op, ErrDType, "needs integer arrays, got %v (shape %v)", a.dtype, a.shape)
	}
}

package nd

// hostLen returns the length of a []float32 or []float64, or -1.
func hostLen(s any) int {
	switch v := s.(type) {
	case []float32:
		return len(v)
	case []float64:
		return len(v)
	}
	return -1
}

// ReadInto copies the array's elements into dst, a []float32 or []float64
// of exactly Size() elements, converting between dtypes. Unlike Float32s it
// allocates nothing, so a loop that stages arrays through a reused host
// buffer (a kvstore packing gradients for the network) stays
// allocation-free.
func (a *NDArray) ReadInto(dst any) {
	const op = "ReadInto"
	checkLive(op, a)
	if n := hostLen(dst); n != a.Size() {
		if n < 0 {
			fail(op, ErrArgument, "destination is %T, want []float32 or []float64", dst)
		}
		fail(op, ErrShape, "destination has %d elements, array of shape %v has %d", n, a.shape, a.Size())
	}
	a.be().Sync(a.st.dev)
	a.be().Read(a.st.buf, a.off, dst)
}

// WriteFrom overwrites the array's elements with src, a []float32 or
// []float64 of exactly Size() elements, converting between dtypes. It is
// not recorded on the autograd tape (like Assign).
func (a *NDArray) WriteFrom(src any) {
	const op = "WriteFrom"
	checkLive(op, a)
	if n := hostLen(src); n != a.Size() {
		if n < 0 {
			fail(op, ErrArgument, "source is %T, want []float32 or []float64", src)
		}
		fail(op, ErrShape, "source has %d elements, array of shape %v has %d", n, a.shape, a.Size())
	}
	a.be().Sync(a.st.dev)
	a.be().Write(a.st.buf, a.off, src)
}

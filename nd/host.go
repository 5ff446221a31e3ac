package nd

// checkHost validates the host slice s of a transfer to or from a.
func checkHost(op, what string, a *NDArray, s any) {
	checkLive(op, a)
	var n int
	switch v := s.(type) {
	case []float32:
		n = len(v)
	case []float64:
		n = len(v)
	default:
		fail(op, ErrArgument, "%s is %T, want []float32 or []float64", what, s)
	}
	if n != a.Size() {
		fail(op, ErrShape, "%s has %d elements, array of shape %v has %d", what, n, a.shape, a.Size())
	}
}

// ReadInto copies the array's elements into dst, a []float32 or []float64
// of exactly Size() elements, converting between dtypes. Unlike Float32s it
// allocates nothing, so a loop that stages arrays through a reused host
// buffer (a kvstore packing gradients for the network) stays
// allocation-free.
func (a *NDArray) ReadInto(dst any) {
	checkHost("ReadInto", "destination", a, dst)
	a.be().Sync(a.st.dev)
	a.be().Read(a.st.buf, a.off, dst)
}

// WriteFrom overwrites the array's elements with src, a []float32 or
// []float64 of exactly Size() elements, converting between dtypes. It is
// not recorded on the autograd tape (like Assign).
func (a *NDArray) WriteFrom(src any) {
	checkHost("WriteFrom", "source", a, src)
	a.be().Sync(a.st.dev)
	a.be().Write(a.st.buf, a.off, src)
}

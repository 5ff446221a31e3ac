package nd

import "github.com/goluon/goluon/nd/backend"

// checkHost validates the host slice s of a transfer to or from a.
func checkHost(op, what string, a *NDArray, s any) {
	defer checkLive(op, a).done()
	_, n, ok := backend.HostDType(s)
	if !ok {
		fail(op, ErrArgument, "%s is %T, want []float32, []float64, []int32, []int64, []uint8, []bool, []nd.F16 or []nd.BF16", what, s)
	}
	if n != a.Size() {
		fail(op, ErrShape, "%s has %d elements, array of shape %v has %d", what, n, a.shape, a.Size())
	}
}

// ReadInto copies the array's elements into dst, a []float32, []float64,
// []int32, []int64, []uint8 or []bool of exactly Size() elements,
// converting between dtypes as AsType does. Unlike Float32s it
// allocates nothing, so a loop that stages arrays through a reused host
// buffer (a kvstore packing gradients for the network) stays
// allocation-free.
func (a *NDArray) ReadInto(dst any) {
	checkHost("ReadInto", "destination", a, dst)
	claimIn(a)
	a.be().Read(a.st.buf, a.off, dst)
}

// WriteFrom overwrites the array's elements with src, a slice of any type
// ReadInto accepts, of exactly Size() elements, converting between dtypes
// as AsType does. It is
// not recorded on the autograd tape (like Assign).
func (a *NDArray) WriteFrom(src any) {
	checkHost("WriteFrom", "source", a, src)
	claimIn(a)
	a.be().Write(a.st.buf, a.off, src)
}

// Int64s copies the array's elements to a new []int64, converting as
// AsType(Int64) does.
func (a *NDArray) Int64s() []int64 {
	out := make([]int64, a.Size())
	a.ReadInto(out)
	return out
}

// Int32s copies the array's elements to a new []int32, converting as
// AsType(Int32) does.
func (a *NDArray) Int32s() []int32 {
	out := make([]int32, a.Size())
	a.ReadInto(out)
	return out
}

// Uint8s copies the array's elements to a new []uint8, converting as
// AsType(Uint8) does.
func (a *NDArray) Uint8s() []uint8 {
	out := make([]uint8, a.Size())
	a.ReadInto(out)
	return out
}

// Bools copies the array's elements to a new []bool: true where an element
// is not zero.
func (a *NDArray) Bools() []bool {
	out := make([]bool, a.Size())
	a.ReadInto(out)
	return out
}

// Ints copies the array's elements to a new []int, converting as
// AsType(Int64) does: the form Go code indexes with.
func (a *NDArray) Ints() []int {
	v := a.Int64s()
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

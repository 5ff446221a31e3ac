package nd

import (
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
	"github.com/goluon/goluon/nd/cpu"
)

func init() { backend.Register(ctx.KindCPU, cpu.New()) }

// Empty returns an array with unspecified contents.
func Empty(dev ctx.Context, dt DType, shape ...int) *NDArray {
	return creator().Empty(dev, dt, shape...)
}

// Empty is the package-level Empty making an array of s.
func (s *Session) Empty(dev ctx.Context, dt DType, shape ...int) *NDArray {
	return newArray("Empty", s, dev, dt, shape)
}

// Full returns an array of the given dtype and shape filled with v,
// converted to dt as AsType converts (truncated for integers, v != 0 for
// Bool).
func Full(dev ctx.Context, dt DType, v float64, shape ...int) *NDArray {
	return creator().Full(dev, dt, v, shape...)
}

// Full is the package-level Full making an array of s.
func (s *Session) Full(dev ctx.Context, dt DType, v float64, shape ...int) *NDArray {
	if !dt.Valid() {
		fail("Full", ErrDType, "unknown dtype %v", dt)
	}
	a := newArray("Full", s, dev, dt, shape)
	a.be().Fill(a.storageArg(), a.Size(), v)
	return a
}

// Zeros returns an array of zeros of dtype dt (false for Bool). Every
// constructor takes its dtype right after the context.
func Zeros(dev ctx.Context, dt DType, shape ...int) *NDArray {
	return creator().Zeros(dev, dt, shape...)
}

// Zeros is the package-level Zeros making an array of s.
func (s *Session) Zeros(dev ctx.Context, dt DType, shape ...int) *NDArray {
	return s.Full(dev, dt, 0, shape...)
}

// Ones returns an array of ones of dtype dt (true for Bool).
func Ones(dev ctx.Context, dt DType, shape ...int) *NDArray {
	return creator().Ones(dev, dt, shape...)
}

// Ones is the package-level Ones making an array of s.
func (s *Session) Ones(dev ctx.Context, dt DType, shape ...int) *NDArray {
	return s.Full(dev, dt, 1, shape...)
}

// ZerosLike returns zeros with a's shape, dtype, context and session.
func ZerosLike(a *NDArray) *NDArray { return FullLike(a, 0) }

// OnesLike returns ones with a's shape, dtype, context and session.
func OnesLike(a *NDArray) *NDArray { return FullLike(a, 1) }

// FullLike returns an array filled with v with a's shape, dtype, context
// and session.
func FullLike(a *NDArray, v float64) *NDArray {
	defer checkLive("FullLike", a).done()
	return a.Session().Full(a.st.dev, a.dtype, v, a.shape...)
}

// FromSlice copies a Go slice into a new array of the given shape on dev.
// The slice's type sets the dtype: []float32, []float64, []int32, []int64,
// []uint8 and []bool give the dtype of that name, and []int gives Int64.
// With no shape the array is one-dimensional.
func FromSlice(dev ctx.Context, data any, shape ...int) *NDArray {
	return creator().FromSlice(dev, data, shape...)
}

// FromSlice is the package-level FromSlice making an array of s.
func (s *Session) FromSlice(dev ctx.Context, data any, shape ...int) *NDArray {
	return s.fromSlice("FromSlice", dev, data, shape, true)
}

// FromSliceShaped is FromSlice with the shape taken exactly as given: an
// empty shape makes a 0-d array (one element, no axes), where FromSlice
// makes a one-dimensional one. Code that rebuilds an array from host
// values and another array's Shape() uses it, so that a 0-d array (a
// whole-tensor weight norm's magnitude, its optimizer state) stays 0-d.
func FromSliceShaped(dev ctx.Context, data any, shape []int) *NDArray {
	return creator().FromSliceShaped(dev, data, shape)
}

// FromSliceShaped is the package-level FromSliceShaped making an array of
// s.
func (s *Session) FromSliceShaped(dev ctx.Context, data any, shape []int) *NDArray {
	return s.fromSlice("FromSliceShaped", dev, data, shape, false)
}

// fromSlice makes the array of FromSlice (with oneD, an empty shape is
// one-dimensional) and FromSliceShaped.
func (s *Session) fromSlice(op string, dev ctx.Context, data any, shape []int, oneD bool) *NDArray {
	if ints, ok := data.([]int); ok {
		v := make([]int64, len(ints))
		for i, x := range ints {
			v[i] = int64(x)
		}
		data = v
	}
	dt, n, ok := backend.HostDType(data)
	if !ok {
		fail(op, ErrArgument, "data must be []float32, []float64, []int, []int32, []int64, []uint8, []bool, []F16 or []BF16, got %T", data)
	}
	if len(shape) == 0 && oneD {
		shape = []int{n}
	}
	if numel(shape) != n {
		fail(op, ErrShape, "%d values do not fill shape %v (%d elements)", n, shape, numel(shape))
	}
	a := newArray(op, s, dev, dt, shape)
	a.be().Write(a.st.buf, a.off, data)
	return a
}

// Scalar returns a one-element array holding v.
func Scalar(dev ctx.Context, dt DType, v float64) *NDArray {
	return creator().Scalar(dev, dt, v)
}

// Scalar is the package-level Scalar making an array of s.
func (s *Session) Scalar(dev ctx.Context, dt DType, v float64) *NDArray { return s.Full(dev, dt, v, 1) }

// Arange returns the values start, start+step, ... below stop (above it
// for a negative step) as an array of dtype dt: each value is computed in
// float64 from its index, so errors do not accumulate, and converted as
// AsType converts.
func Arange(dev ctx.Context, dt DType, start, stop, step float64) *NDArray {
	return creator().Arange(dev, dt, start, stop, step)
}

// Arange is the package-level Arange making an array of s.
func (s *Session) Arange(dev ctx.Context, dt DType, start, stop, step float64) *NDArray {
	finite := !math.IsInf(start, 0) && !math.IsInf(stop, 0) && !math.IsInf(step, 0) && !math.IsNaN(start+stop+step)
	if !finite || step == 0 || (stop-start)/step < 0 {
		fail("Arange", ErrArgument, "empty or infinite range start=%g stop=%g step=%g", start, stop, step)
	}
	if n := math.Ceil((stop - start) / step); n > 1<<31 {
		fail("Arange", ErrArgument, "range start=%g stop=%g step=%g has %g elements, more than 2^31", start, stop, step, n)
	}
	if !dt.Valid() {
		fail("Arange", ErrDType, "unknown dtype %v", dt)
	}
	var v []float64
	for x := start; (step > 0 && x < stop) || (step < 0 && x > stop); x = start + step*float64(len(v)) {
		v = append(v, x)
	}
	a := newArray("Arange", s, dev, dt, []int{len(v)})
	a.be().Write(a.st.buf, a.off, v)
	return a
}

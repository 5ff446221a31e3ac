package nd

import "sync/atomic"

// Autocast: while a session autocasts to a half-precision dtype, its ops
// convert their floating-point inputs by class, as torch.autocast and
// MXNet's AMP do (package gluon/amp documents the lists):
//
//   - low precision (castLow): GEMM and convolution run in the half dtype;
//     Float32 inputs are converted to it;
//   - float32 (castFloat32): exponentials, logarithms, powers, softmax,
//     sums, means, norms, layer/group/instance norm and the fused loss
//     convert half inputs to Float32;
//   - widest (castWidest): binary ops, Where and Concat/Stack convert half
//     inputs to Float32 when another input is Float32 (or the other half
//     dtype);
//   - every other op runs in its inputs' dtype (BatchNorm, pooling, ReLU,
//     dropout, reshapes: the neutral list).
//
// The conversions are recorded AsTypes, so gradients flow back to the
// Float32 parameters in Float32. Float64 arrays are never converted.

// castClass is an op's class in the autocast policy.
type castClass uint8

const (
	castLow castClass = iota
	castFloat32
	castWidest
	castNeutral
)

// autocasting counts the sessions with an open autocast scope, so that ops
// skip the policy when none has.
var autocasting atomic.Int32

// EnterAutocast makes s's ops follow the autocast policy in dt (Float16 or
// BFloat16) until the returned function is called; Float32 turns it off
// inside an enclosing autocast scope (torch.autocast(enabled=False)). The
// scopes are counters, so the goroutines of one tree (per-device workers)
// may enter and leave them concurrently; an off scope wins over an open
// one, and Float16 over BFloat16.
func (s *Session) EnterAutocast(dt DType) (exit func()) {
	var c *atomic.Int32
	switch dt {
	case Float16:
		c = &s.castF16
	case BFloat16:
		c = &s.castBF16
	case Float32:
		c = &s.castOff
	default:
		fail("EnterAutocast", ErrDType, "autocast runs in Float16 or BFloat16 (Float32 turns it off), not %v", dt)
	}
	c.Add(1)
	autocasting.Add(1)
	return once(func() { c.Add(-1); autocasting.Add(-1) })
}

// Autocast runs f with s's ops following the autocast policy in dt (see
// EnterAutocast).
func (s *Session) Autocast(dt DType, f func()) {
	defer s.EnterAutocast(dt)()
	f()
}

// AutocastDType returns the dtype s's low-precision ops run in, and false
// when s does not autocast.
func (s *Session) AutocastDType() (DType, bool) {
	switch {
	case s.castOff.Load() > 0:
		return Float32, false
	case s.castF16.Load() > 0:
		return Float16, true
	case s.castBF16.Load() > 0:
		return BFloat16, true
	}
	return Float32, false
}

// EnterAutocast is Session.EnterAutocast on the default session.
func EnterAutocast(dt DType) (exit func()) { return defaultSession.EnterAutocast(dt) }

// Autocast is Session.Autocast on the default session.
func Autocast(dt DType, f func()) { defaultSession.Autocast(dt, f) }

// autocast converts in (in place) as the policy of the inputs' session
// says for an op of class c.
func autocast(op string, c castClass, in []*NDArray) {
	if autocasting.Load() == 0 {
		return
	}
	dt, on := sessionOf(op, in...).AutocastDType()
	if !on {
		return
	}
	var to DType
	switch c {
	case castNeutral:
		return
	case castLow:
		to = dt
	case castFloat32:
		to = Float32
	case castWidest:
		first, mixed := DType(0), false
		seen := false
		for _, a := range in {
			if a == nil || !(a.dtype == Float32 || a.dtype.IsHalf()) {
				continue
			}
			if seen && a.dtype != first {
				mixed = true
			}
			first, seen = a.dtype, true
		}
		if !mixed {
			return
		}
		to = Float32
	}
	for i, a := range in {
		if a != nil && a.dtype != to && (a.dtype == Float32 || a.dtype.IsHalf()) {
			in[i] = a.AsType(to)
		}
	}
}

// dispatch applies the autocast policy of class c to in and runs f on the
// result: directly when no input is half precision, and otherwise on
// float32 copies, its result rounded back (viaFloat32).
func dispatch(op string, c castClass, in []*NDArray, f func(w []*NDArray) *NDArray) *NDArray {
	checkLive(op, nonNil(in)...)
	autocast(op, c, in)
	if dt, ok := halfOf(in...); ok {
		return via1(dt, f, in...)
	}
	return f(in)
}

// nonNil returns the arrays of in that are not nil (optional inputs).
func nonNil(in []*NDArray) []*NDArray {
	out := in[:0:0]
	for _, a := range in {
		if a != nil {
			out = append(out, a)
		}
	}
	return out
}

// autocast2 is autocast for a binary op, whose recorded inputs (captured
// by its backward) must be the converted ones: again reports that a or b
// was converted, and the op is then called again with them.
func autocast2(op string, c castClass, a, b *NDArray) (_, _ *NDArray, again bool) {
	if autocasting.Load() == 0 || a == nil || b == nil {
		return a, b, false
	}
	in := []*NDArray{a, b}
	autocast(op, c, in)
	return in[0], in[1], in[0] != a || in[1] != b
}

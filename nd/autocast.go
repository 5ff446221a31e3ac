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
	checkAutocastDType("EnterAutocast", dt)
	f := &frame{kind: "Autocast", dt: dt}
	s.attach(f)
	f.bump(s, 1)
	autocasting.Add(1)
	return once(func() { f.bump(s, -1); autocasting.Add(-1); s.detach(f) })
}

// EnterAutocastAll is EnterAutocast for every goroutine tree of s at
// once: in the default session, whose state is kept per goroutine tree
// (see Go), it applies to the ops of every tree, those that open later
// included, as amp.Init does; an EnterAutocast(Float32) scope of a tree
// still turns it off there. In any other session it is EnterAutocast.
func (s *Session) EnterAutocastAll(dt DType) (exit func()) {
	if s != defaultSession {
		return s.EnterAutocast(dt)
	}
	checkAutocastDType("EnterAutocastAll", dt)
	f := &frame{kind: "Autocast", dt: dt}
	f.bumpIn(&everyTree, 1)
	f.bump(s, 1)
	autocasting.Add(1)
	return once(func() { f.bump(s, -1); f.bumpIn(&everyTree, -1); autocasting.Add(-1) })
}

func checkAutocastDType(op string, dt DType) {
	switch dt {
	case Float16, BFloat16, Float32:
	default:
		fail(op, ErrDType, "autocast runs in Float16 or BFloat16 (Float32 turns it off), not %v", dt)
	}
}

// Autocast runs f with s's ops following the autocast policy in dt (see
// EnterAutocast).
func (s *Session) Autocast(dt DType, f func()) {
	defer s.EnterAutocast(dt)()
	f()
}

// AutocastDType returns the dtype s's low-precision ops run in, and false
// when s does not autocast.
func (s *Session) AutocastDType() (DType, bool) { return s.mode().autocast() }

// EnterAutocast is Session.EnterAutocast on the default session.
func EnterAutocast(dt DType) (exit func()) { return defaultSession.EnterAutocast(dt) }

// Autocast is Session.Autocast on the default session.
func Autocast(dt DType, f func()) { defaultSession.Autocast(dt, f) }

// autocast converts in (in place) as the policy of the inputs' session
// says for an op of class c; positions whose bit is set in index (index
// and mask operands) are neither converted nor counted. It returns the
// arrays it made, for castsDone.
func autocast(op string, c castClass, in []*NDArray, index uint) []*NDArray {
	if autocasting.Load() == 0 {
		return nil
	}
	dt, on := sessionOf(op, in...).AutocastDType()
	if !on {
		return nil
	}
	floating := func(i int, a *NDArray) bool {
		return a != nil && index&(1<<i) == 0 && (a.dtype == Float32 || a.dtype.IsHalf())
	}
	var to DType
	switch c {
	case castNeutral:
		return nil
	case castLow:
		to = dt
	case castFloat32:
		to = Float32
	case castWidest:
		first, mixed := DType(0), false
		seen := false
		for i, a := range in {
			if !floating(i, a) {
				continue
			}
			if seen && a.dtype != first {
				mixed = true
			}
			first, seen = a.dtype, true
		}
		if !mixed {
			return nil
		}
		to = Float32
	}
	var made []*NDArray
	for i, a := range in {
		if floating(i, a) && a.dtype != to {
			in[i] = a.AsType(to)
			made = append(made, in[i])
		}
	}
	return made
}

// castsDone releases the conversions autocast made for an op once the
// op's result out is known not to be recorded: nothing else refers to
// them then (a view of one keeps its storage).
func castsDone(out *NDArray, made []*NDArray) {
	if len(made) == 0 || (out != nil && out.requiresGrad()) {
		return
	}
	release(made...)
}

// dispatch applies the autocast policy of class c to in and runs f on the
// result: directly when no input is half precision, and otherwise on
// float32 copies, its result rounded back (viaFloat32). The bits of index
// mark index and mask operands, which keep their dtype and do not decide
// the result's. The data operands must share one dtype after autocast.
func dispatch(op string, c castClass, in []*NDArray, f func(w []*NDArray) *NDArray) *NDArray {
	return dispatchIx(op, c, in, 0, f)
}

// dispatchIx is dispatch with index operands (see dispatch).
func dispatchIx(op string, c castClass, in []*NDArray, index uint, f func(w []*NDArray) *NDArray) *NDArray {
	defer checkLive(op, nonNil(in)...).done()
	made := autocast(op, c, in, index)
	var data []*NDArray
	for i, a := range in {
		if a == nil {
			continue
		}
		if index&(1<<i) == 0 {
			data = append(data, a)
		} else if a.dtype.IsHalf() { // whole numbers: float32 holds them exactly
			// Like an autocast copy: the recorded backward pass may read
			// it (a Pick's indices), so castsDone frees it only when
			// nothing was recorded.
			in[i] = widened(a)
			made = append(made, in[i])
		}
	}
	dt, half := halfOf(data...)
	if half {
		for _, a := range data {
			if a.dtype != dt {
				castsDone(nil, made)
				fail(op, ErrDType, "%v and %v inputs (shapes %v and %v); convert with AsType, or use an autocast scope", dt, a.dtype, data[0].shape, a.shape)
			}
		}
		out := viaFloat32(dt, f, in...)
		castsDone(out, made)
		return out
	}
	out := f(in)
	castsDone(out, made)
	return out
}

// dispatchNative is dispatch for an op that computes on half-precision
// arrays itself (widening inside its forward and backward passes, so the
// tape keeps the half arrays): autocast, and no float32 wrapping; the op
// checks the dtypes.
func dispatchNative(op string, c castClass, in []*NDArray, f func(w []*NDArray) *NDArray) *NDArray {
	defer checkLive(op, nonNil(in)...).done()
	made := autocast(op, c, in, 0)
	out := f(in)
	castsDone(out, made)
	return out
}

// autocast1 converts x alone as autocast does.
func autocast1(op string, c castClass, x *NDArray) (*NDArray, []*NDArray) {
	if autocasting.Load() == 0 || x == nil {
		return x, nil
	}
	in := []*NDArray{x}
	made := autocast(op, c, in, 0)
	return in[0], made
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
// was converted, and the op is then called again with them (and passes
// its result and made to castsDone).
func autocast2(op string, c castClass, a, b *NDArray) (_, _ *NDArray, made []*NDArray, again bool) {
	if autocasting.Load() == 0 || a == nil || b == nil {
		return a, b, nil, false
	}
	in := []*NDArray{a, b}
	made = autocast(op, c, in, 0)
	return in[0], in[1], made, len(made) > 0
}

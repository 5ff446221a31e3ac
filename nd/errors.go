package nd

import (
	"fmt"

	"github.com/goluon/goluon/nd/backend"
)

// ErrorKind classifies an *Error.
type ErrorKind = backend.ErrorKind

// The kinds of programmer errors an op reports.
const (
	ErrContext  = backend.ErrContext  // inputs on different contexts
	ErrShape    = backend.ErrShape    // incompatible or invalid shapes
	ErrDType    = backend.ErrDType    // mixed element types
	ErrArgument = backend.ErrArgument // any other invalid argument
	ErrReleased = backend.ErrReleased // use of a released array
	ErrGraph    = backend.ErrGraph    // autograd misuse (no graph, graph freed)
	ErrDevice   = backend.ErrDevice   // the device failed (allocation, driver)
	ErrSession  = backend.ErrSession  // arrays of two sessions mixed (see Session)
	ErrTrace    = backend.ErrTrace    // a traced computation did what a replay cannot repeat (see Trace)
)

// Error is the value every op panics with when it is called wrongly. Its
// text names the op, and the contexts or shapes involved, for example:
//
//	nd.Add: context mismatch: cpu(0) vs cpu(1) (shapes [2 3] and [2 3]); copy one input with CopyTo or AsIn first
//
// Packages built on nd (gluon, kvstore) and backends (cuda) raise the same
// type with a qualified Op such as "gluon.Parameter.Data".
type Error = backend.Error

// Panicf panics with an *Error; packages built on nd use it for their own
// programmer errors so that one error style covers the whole project.
func Panicf(op string, kind ErrorKind, format string, args ...any) {
	fail(op, kind, format, args...)
}

func fail(op string, kind ErrorKind, format string, args ...any) {
	panic(&Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// Catch runs f and returns the *Error it panicked with, or nil. Panics that
// are not *Error values pass through unchanged. It lets callers that prefer
// error values (servers, tools) use the op API safely:
//
//	err := nd.Catch(func() { y = nd.Add(a, b) })
func Catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}

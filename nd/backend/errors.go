package backend

import (
	"errors"
	"strings"
)

// This file holds the error type of the whole op API. It lives at the
// seam, below nd, so that a backend (cuda) reports a device failure as the
// same *Error that nd raises, without importing nd; nd re-exports it as
// nd.Error.

// ErrorKind classifies an *Error.
type ErrorKind uint8

// The kinds of programmer errors an op reports.
const (
	ErrContext  ErrorKind = iota + 1 // inputs on different contexts
	ErrShape                         // incompatible or invalid shapes
	ErrDType                         // mixed element types
	ErrArgument                      // any other invalid argument
	ErrReleased                      // use of a released array
	ErrGraph                         // autograd misuse (no graph, graph freed)
	ErrDevice                        // the device failed (allocation, driver)
	ErrSession                       // arrays of two sessions mixed (see nd.Session)
	ErrTrace                         // a traced computation did what a replay cannot repeat (see nd.Trace)
)

var kindNames = map[ErrorKind]string{
	ErrContext: "context mismatch", ErrShape: "shape error", ErrDType: "dtype mismatch",
	ErrArgument: "invalid argument", ErrReleased: "released array", ErrGraph: "autograd error",
	ErrDevice: "device error", ErrSession: "session mismatch", ErrTrace: "trace error",
}

// String names the kind.
func (k ErrorKind) String() string { return kindNames[k] }

// Error is the value every op panics with when it is called wrongly. Its
// text names the op, and the contexts or shapes involved, for example:
//
//	nd.Add: context mismatch: cpu(0) vs cpu(1) (shapes [2 3] and [2 3]); copy one input with CopyTo or AsIn first
type Error struct {
	Op   string
	Kind ErrorKind
	Msg  string
}

// Error formats the error as "nd.<Op>: <kind>: <details>". Packages built
// on nd (gluon, kvstore) raise the same type with a qualified Op such as
// "gluon.Parameter.Data", which is printed as it is.
func (e *Error) Error() string {
	op := e.Op
	if !strings.Contains(op, ".") {
		op = "nd." + op
	}
	return op + ": " + e.Kind.String() + ": " + e.Msg
}

// Is reports whether target is an *Error of the same kind, so that
// errors.Is(err, &nd.Error{Kind: nd.ErrContext}) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Kind == e.Kind && t.Op == "" && t.Msg == ""
}

// Package autograd is Goluon's user-facing automatic differentiation API,
// with the semantics of MXNet Gluon's mx.autograd.
//
// Ops on NDArrays run eagerly. Inside Record, every op whose inputs need a
// gradient is also recorded on a tape (each output remembers its inputs and
// how to send gradients back); Backward walks that tape in reverse:
//
//	w.AttachGrad(nd.GradWrite)
//	autograd.Record(func() {
//		loss := nd.Sum(nd.Square(nd.Sub(nd.MatMul(x, w), y)))
//		autograd.Backward(loss)
//	})
//	fmt.Println(w.Grad())
//
// # Sessions: concurrent training and inference
//
// The recording state, the training/predict mode and the nd.Scope stack
// belong to a Session. The package-level functions here (Record, Pause,
// TrainMode, PredictMode, IsRecording, IsTraining) act on the default
// session, which is process-wide; the per-device goroutines of one loop
// (gluon.ForEachDevice) share it, and a program with one goroutine tree
// needs nothing more.
//
// Goroutine trees that must not see each other's state — a learner
// training while an HTTP handler predicts, an evaluator running beside its
// caller's training loop — each take their own Session. Go has no
// goroutine-local storage, so a session reaches the ops through the
// arrays: arrays a session makes (s.FromSlice, s.Zeros, ...) or adopts
// (s.Adopt) belong to it, every op on them runs in it and its results
// belong to it, and any goroutine handed those arrays works in that
// session without further ado. Parameters and other long-lived arrays are
// neutral and mix with any session:
//
//	s := autograd.NewSession("serve")
//	x := s.FromSlice(dev, pixels, 1, 1, 28, 28)
//	s.PredictMode(func() { y = net.Forward(x) }) // dropout off here, whatever others do
//
// An op that mixes arrays of two sessions panics with an *nd.Error of kind
// nd.ErrSession naming both. docs/ARCHITECTURE.md explains the design and
// the alternatives rejected.
//
// Programmer mistakes (backward without a graph, a graph already freed)
// panic with an *nd.Error of kind nd.ErrGraph; nd.Catch turns such a panic
// into an error.
package autograd

import "github.com/goluon/goluon/nd"

// Session is one goroutine tree's autograd state; see the package doc and
// nd.Session.
type Session = nd.Session

// NewSession returns a new session (not recording, predict mode, no open
// scope). name appears in error messages and seeds the session's random
// generators.
func NewSession(name string) *Session { return nd.NewSession(name) }

// Default returns the process-wide session the package-level functions
// use.
func Default() *Session { return nd.DefaultSession() }

// Record runs f with recording on and training mode set in the default
// session, like Gluon's `with autograd.record():`.
func Record(f func()) { nd.DefaultSession().Record(f) }

// RecordMode runs f with recording on in the default session; train
// selects training mode (as Gluon's record(train_mode=...)).
func RecordMode(train bool, f func()) { nd.DefaultSession().RecordMode(train, f) }

// Pause runs f with recording off and predict mode in the default session,
// like Gluon's `with autograd.pause():`.
func Pause(f func()) { nd.DefaultSession().Pause(f) }

// PauseMode runs f with recording off in the default session; train
// selects training mode.
func PauseMode(train bool, f func()) { nd.DefaultSession().PauseMode(train, f) }

// TrainMode runs f in training mode in the default session without
// changing recording.
func TrainMode(f func()) { nd.DefaultSession().TrainMode(f) }

// PredictMode runs f in predict mode in the default session without
// changing recording. Predict mode wins over training mode while it is
// open.
func PredictMode(f func()) { nd.DefaultSession().PredictMode(f) }

// IsRecording reports whether the default session records.
func IsRecording() bool { return nd.IsRecording() }

// IsTraining reports whether the default session is in training mode.
func IsTraining() bool { return nd.IsTraining() }

// Backward computes the gradient of head (a scalar loss, or any array
// whose head gradient is taken as ones) with respect to every array with an
// attached gradient, and frees the graph.
func Backward(head *nd.NDArray) { nd.Backward([]*nd.NDArray{head}, nil, false) }

// BackwardOpts configures BackwardHeads.
type BackwardOpts struct {
	// HeadGrads are the gradients of the heads (nil entries mean ones).
	HeadGrads []*nd.NDArray
	// RetainGraph keeps the graph so that Backward can run through it again.
	RetainGraph bool
}

// BackwardHeads backpropagates from several heads at once; their
// gradients are summed into the leaves. The heads must not belong to two
// different sessions.
func BackwardHeads(heads []*nd.NDArray, o BackwardOpts) {
	nd.Backward(heads, o.HeadGrads, o.RetainGraph)
}

// Grad returns the gradients of heads with respect to vars (leaves with
// AttachGrad, or recorded results the heads were computed from) without
// storing them in the vars' gradient buffers, as Gluon's autograd.grad
// and PyTorch's torch.autograd.grad: see nd.Grad. headGrads may be nil
// (ones). GradWith also keeps the graph or records the gradients for
// higher-order derivatives.
func Grad(heads, headGrads, vars []*nd.NDArray) []*nd.NDArray { return nd.Grad(heads, headGrads, vars) }

// MarkVariables attaches gradient buffers to arrays with the given request
// (Gluon's mark_variables / attach_grad).
func MarkVariables(req nd.GradReq, arrs ...*nd.NDArray) {
	for _, a := range arrs {
		a.AttachGrad(req)
	}
}

// GradOpts configures GradWith: head gradients, keeping the graph, and
// CreateGraph for higher-order derivatives; see nd.GradOpts.
type GradOpts = nd.GradOpts

// GradWith returns the gradients of heads with respect to vars (leaves
// with AttachGrad, or recorded results the heads were computed from),
// like Gluon's autograd.grad(heads, variables, head_grads, retain_graph,
// create_graph) and torch.autograd.grad. With CreateGraph the gradients
// are themselves recorded, so that a loss made from them (a gradient
// penalty, a Hessian-vector product, a meta-learning step) backpropagates
// to second order:
//
//	autograd.Record(func() {
//		score := nd.Sum(critic.Forward(x))
//		gx := autograd.GradWith([]*nd.NDArray{score}, []*nd.NDArray{x}, autograd.GradOpts{CreateGraph: true})[0]
//		penalty := nd.Mean(nd.Square(nd.AddScalar(nd.Norm(nd.Flatten(gx), 2, 1), -1)))
//		autograd.Backward(nd.Add(loss, nd.MulScalar(penalty, 10)))
//	})
func GradWith(heads, vars []*nd.NDArray, o GradOpts) []*nd.NDArray {
	return nd.GradWith(heads, vars, o)
}

// EnableGrad runs f with the default session recording even inside Pause
// scopes, keeping the training or predict mode (torch.enable_grad); see
// Session.EnableGrad.
func EnableGrad(f func()) { nd.DefaultSession().EnableGrad(f) }

package nd

import "github.com/goluon/goluon/nd/backend"

// Lgamma returns log |Γ(x)| (PyTorch's lgamma; +Inf at 0 and the negative
// integers). Its gradient is Digamma(x). Under autocast it runs in
// float32.
func Lgamma(x *NDArray) *NDArray {
	return unaryOp("Lgamma", backend.Lgamma, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.Digamma, 0)
	})
}

// Digamma returns ψ(x) = Γ'(x)/Γ(x), the derivative of log Γ (PyTorch's
// digamma: −Inf at 0, NaN at the negative integers). Its gradient is
// Trigamma(x). Under autocast it runs in float32.
func Digamma(x *NDArray) *NDArray {
	return unaryOp("Digamma", backend.Digamma, x, 0, 0, func(g, x, _ *NDArray) *NDArray {
		return scaleBy(g, x, backend.Trigamma, 0)
	})
}

// Trigamma returns ψ'(x), the derivative of Digamma (PyTorch's
// polygamma(1, x); +Inf at 0 and the negative integers). It has no
// gradient of its own: its result is not recorded.
func Trigamma(x *NDArray) *NDArray { return unaryRaw("Trigamma", backend.Trigamma, x, 0, 0) }

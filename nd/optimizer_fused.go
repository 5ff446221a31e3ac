package nd

import (
	"slices"

	"github.com/goluon/goluon/nd/backend"
)

// OptimizerParams are the scalars of a fused optimizer update (learning
// rate, weight decay, gradient rescale and clip, momentum); the backend's
// OptimizerKernels document each.
type OptimizerParams = backend.OptimizerParams

// SGDUpdateFused applies one SGD step to weight in place with the
// backend's fused kernel (backend.OptimizerKernels.SGDUpdate, which
// documents the update; mom is nil without momentum) and reports whether
// it could. It reports false, changing nothing, when the backend has no
// such kernel, fused kernels are off (SetFusedKernels) or the operands
// differ in context, element type or shape;
// gluon/optimizer then composes the same update from elementwise ops. It is
// not recorded.
func SGDUpdateFused(weight, grad, mom *NDArray, p OptimizerParams) bool {
	k, ok := fusedOptimizerKernels(weight, grad, mom)
	if !ok {
		return false
	}
	k.SGDUpdate(p, weight.arg(), grad.arg(), optArg(mom), weight.Size())
	return true
}

// RMSPropUpdateFused applies one (uncentred) RMSProp step to weight and
// its mean square state in place with the backend's fused kernel
// (backend.OptimizerKernels.RMSPropUpdate) and reports whether it could,
// as SGDUpdateFused does.
func RMSPropUpdateFused(weight, grad, state *NDArray, p OptimizerParams) bool {
	if state == nil {
		return false
	}
	k, ok := fusedOptimizerKernels(weight, grad, state)
	if !ok {
		return false
	}
	k.RMSPropUpdate(p, weight.arg(), grad.arg(), state.arg(), weight.Size())
	return true
}

// fusedOptimizerKernels returns weight's backend's optimizer kernels when
// it has them and weight, grad and state (unless nil) are live and share
// one context, element type and shape.
func fusedOptimizerKernels(weight, grad, state *NDArray) (backend.OptimizerKernels, bool) {
	if weight == nil || grad == nil || !weight.dtype.IsFloat() || !fusedKernels() {
		return nil, false
	}
	for _, a := range []*NDArray{weight, grad, state} {
		if a == nil {
			continue
		}
		if a.released.Load() || a.st.dev != weight.st.dev || a.dtype != weight.dtype || !slices.Equal(a.shape, weight.shape) {
			return nil, false
		}
	}
	k, ok := weight.be().(backend.OptimizerKernels)
	return k, ok
}

package optimizer

import "github.com/goluon/goluon/nd"

// Multi-precision. A Float16 or BFloat16 weight is not updated in its own
// dtype: a step smaller than half an ulp of the weight would vanish, and
// momentum or moment estimates in half precision lose most of their bits.
// As MXNet's multi_precision optimizers and PyTorch's AMP (whose
// parameters stay float32) do, the update runs on a float32 master copy of
// the weight with float32 state, and the weight takes the master's values
// rounded to its dtype after every step. NewState and Apply do this for
// any Optimizer; the Trainer calls them.

// NewState returns opt's state for weight. For a half-precision weight the
// state is a float32 master copy of the weight followed by opt's state for
// that copy (float32 too); for others it is opt.CreateState(weight).
func NewState(opt Optimizer, weight *nd.NDArray) State {
	if !weight.DType().IsHalf() {
		return opt.CreateState(weight)
	}
	master := nd.PersistentSession().Zeros(weight.Context(), nd.Float32, weight.Shape()...)
	nd.Assign(master, weight)
	return append(State{master}, opt.CreateState(master)...)
}

// Apply runs opt's update of weight with grad: directly, or for a
// half-precision weight on its float32 master copy (state[0], made by
// NewState) with the gradient converted to float32, writing the master's
// new values back into weight rounded to nearest even.
func Apply(opt Optimizer, p Param, weight, grad *nd.NDArray, state State) {
	if !weight.DType().IsHalf() {
		opt.Update(p, weight, grad, state)
		return
	}
	if len(state) == 0 || state[0] == nil || state[0].DType() != nd.Float32 {
		got := "no state"
		if len(state) > 0 && state[0] != nil {
			got = state[0].DType().String()
		}
		nd.Panicf("optimizer.Apply", nd.ErrDType, "parameter %s: the state of a %v weight starts with its float32 master copy (optimizer.NewState), got %s", p.Name, weight.DType(), got)
	}
	master := state[0]
	var t temps
	defer t.release()
	g := grad
	if g.DType() != nd.Float32 {
		g = t.add(t.view(grad).AsType(nd.Float32))
	}
	opt.Update(p, master, g, state[1:])
	nd.Assign(weight, master)
}

package gluon

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// ParamsToVector returns the values of params' replicas on dev, each
// flattened in row-major order, one after another in one 1-D array
// (PyTorch's torch.nn.utils.parameters_to_vector): for second-order
// methods, flat-parameter optimisers and weight averaging by hand. It is
// a composition of recorded ops, so gradients flow back to the
// parameters. The parameters must be initialised on dev and share a
// dtype; otherwise it panics (a context or dtype error naming them).
func ParamsToVector(params []*Parameter, dev ctx.Context) *nd.NDArray {
	if len(params) == 0 {
		nd.Panicf("gluon.ParamsToVector", nd.ErrArgument, "no parameters")
	}
	flat := make([]*nd.NDArray, len(params))
	for i, p := range params {
		flat[i] = nd.Reshape(p.Data(dev), -1)
	}
	if len(flat) == 1 {
		return flat[0]
	}
	return nd.Concat(flat, 0)
}

// VectorToParams copies consecutive pieces of vec, a 1-D array on any
// context, into params, in their order and shapes, on every replica
// (PyTorch's torch.nn.utils.vector_to_parameters); the copy is not
// recorded. vec's length must be the parameters' total size, and the
// parameters must be initialised; otherwise it returns an error and
// changes nothing.
func VectorToParams(vec *nd.NDArray, params []*Parameter) error {
	if vec.NDim() != 1 {
		return errorf("VectorToParams: want a 1-D vector, got shape %v", vec.Shape())
	}
	total := 0
	for _, p := range params {
		if !p.Initialized() {
			return errorf("VectorToParams: parameter %s is not initialised", p.Name())
		}
		total += p.ListData()[0].Size()
	}
	if total != vec.Size() {
		return errorf("VectorToParams: the vector has %d elements, the parameters %d", vec.Size(), total)
	}
	err := nd.Catch(func() {
		off := 0
		v := vec.Detach()
		for _, p := range params {
			shape := p.ListData()[0].Shape()
			n := p.ListData()[0].Size()
			piece := nd.Reshape(nd.SliceAxis(v, off, off+n, 0), shape...)
			p.SetData(piece)
			piece.Release()
			off += n
		}
	})
	if err != nil {
		return errorf("VectorToParams: %v", err)
	}
	return nil
}

// ClipGradValue clamps every element of arrays (gradients: ParamDict.Grads)
// into [−clip, clip] in place (PyTorch's torch.nn.utils.clip_grad_value_).
// NaNs stay NaN. A clip that is negative, NaN or infinite is an error and
// changes nothing. With several contexts, clip after Trainer.AllReduceGrads
// (see ClipGlobalNorm), so that every replica clips the summed gradient.
func ClipGradValue(arrays []*nd.NDArray, clip float64) error {
	if !(clip >= 0) || math.IsInf(clip, 1) {
		return fmt.Errorf("gluon: ClipGradValue: clip %g must be non-negative and finite", clip)
	}
	err := nd.Catch(func() {
		for _, a := range arrays {
			d := a.Detach()
			c := nd.Clip(d, -clip, clip)
			nd.Assign(a, c)
			c.Release()
			d.Release()
		}
	})
	if err != nil {
		return fmt.Errorf("gluon: ClipGradValue: %w", err)
	}
	return nil
}

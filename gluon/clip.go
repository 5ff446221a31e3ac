package gluon

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/nd"
)

// Grads returns the gradient buffers of every replica of every parameter
// that takes a gradient (GradReq not null), in the dictionary's order:
// what ClipGlobalNorm clips.
func (d *ParamDict) Grads() []*nd.NDArray {
	var out []*nd.NDArray
	for _, p := range d.List() {
		if p.GradReq() == nd.GradNull {
			continue
		}
		for _, g := range p.ListGrad() {
			if g != nil {
				out = append(out, g)
			}
		}
	}
	return out
}

// ClipGlobalNorm rescales arrays in place so that their joint L2 norm,
// √(Σ‖a‖²) over all of them, is at most maxNorm, and returns the norm
// before clipping (Gluon's gluon.utils.clip_global_norm; PyTorch's
// clip_grad_norm_). The arrays may live on different contexts: each
// squared norm is computed on its context (in float32 for half-precision
// arrays, whose squares overflow float16 above 256) and the sum is taken
// on the host in the order given, so the result does not depend on
// timing. When the
// norm exceeds maxNorm every array is multiplied by maxNorm/(norm + 1e-8),
// as in Gluon. A NaN or infinite norm is an error and leaves the arrays
// unchanged. With one context, call it between Backward and
// Trainer.Step on ParamDict.Grads. With several, a Trainer may have summed
// some gradients over the contexts during backward (when a core or device
// was free) and not others, so clip the batch gradient instead: call
// Trainer.AllReduceGrads, then ClipGlobalNorm on each context's gradients
// (each replica then holds the same sum and gets the same scale), then
// Trainer.Update, as tutorials/char-lm does.
func ClipGlobalNorm(arrays []*nd.NDArray, maxNorm float64) (float64, error) {
	if !(maxNorm > 0) || math.IsInf(maxNorm, 1) {
		return 0, fmt.Errorf("gluon: ClipGlobalNorm: max norm %g must be positive and finite", maxNorm)
	}
	var sq float64
	err := nd.Catch(func() {
		for _, a := range arrays {
			d := a.Detach()
			w := d
			if d.DType().IsHalf() { // squares above 65504 overflow float16
				w = d.AsType(nd.Float32)
			}
			sqr := nd.Square(w)
			s := nd.Sum(sqr)
			v := s.AsType(nd.Float64)
			sq += v.Scalar()
			for _, t := range []*nd.NDArray{d, w, sqr, s, v} {
				t.Release()
			}
		}
	})
	if err != nil {
		return 0, fmt.Errorf("gluon: ClipGlobalNorm: %w", err)
	}
	norm := math.Sqrt(sq)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm, fmt.Errorf("gluon: ClipGlobalNorm: the global norm is %g (a gradient holds NaN or infinity); nothing was clipped", norm)
	}
	if scale := maxNorm / (norm + 1e-8); scale < 1 {
		for _, a := range arrays {
			nd.ScaleInPlace(a, scale)
		}
	}
	return norm, nil
}

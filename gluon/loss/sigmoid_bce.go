package loss

import "github.com/goluon/goluon/nd"

// sigmoidEps keeps the logarithms of FromSigmoid finite, as Gluon's 1e-12.
const sigmoidEps = 1e-12

// SigmoidBCE is Gluon's SigmoidBinaryCrossEntropyLoss: the binary
// cross-entropy of targets z in [0, 1] (labels, reshaped like pred),
// averaged over every axis but the batch axis.
//
// By default pred holds logits x and the loss is computed stably as
// max(x, 0) − x·z + log(1 + exp(−|x|)), which never overflows and keeps
// full precision for confident predictions. Its gradient is
// sigmoid(x) − z everywhere, x = 0 included (as PyTorch's
// binary_cross_entropy_with_logits; MXNet's composition gives −z there).
//
// With FromSigmoid, pred holds probabilities p and the loss is
// −(z·log(p + 1e-12) + (1 − z)·log(1 − p + 1e-12)), as in Gluon.
//
// PosWeight, when set, multiplies the positive term (z·log p) of each
// element, as Gluon's pos_weight and PyTorch's pos_weight: an array that
// broadcasts against pred, usually one weight per class ([C] for pred
// [N, C]), to trade recall against precision on unbalanced labels. With
// logits the loss stays stable: (1 − z)·x + (1 + (w − 1)·z)·log(1 + e^−x).
type SigmoidBCE struct {
	// FromSigmoid says pred holds probabilities rather than logits.
	FromSigmoid bool
	// Weight scales the loss; 0 means 1.
	Weight float64
	// PosWeight weights the positive term; nil for none. It must be on
	// pred's context, of pred's dtype, and broadcast against pred.
	PosWeight *nd.NDArray
}

// NewSigmoidBCE returns a sigmoid binary cross-entropy loss with Gluon's
// defaults (no weighting); fromSigmoid says pred holds probabilities.
func NewSigmoidBCE(fromSigmoid bool) SigmoidBCE {
	return SigmoidBCE{FromSigmoid: fromSigmoid, Weight: 1}
}

// Name returns "SigmoidBinaryCrossEntropyLoss".
func (SigmoidBCE) Name() string { return "SigmoidBinaryCrossEntropyLoss" }

// Forward returns the per-sample binary cross-entropy, shape [N].
func (l SigmoidBCE) Forward(pred, label *nd.NDArray) *nd.NDArray {
	return l.ForwardWeighted(pred, label, nil)
}

// ForwardWeighted is Forward with per-sample weights (nil for none).
func (l SigmoidBCE) ForwardWeighted(pred, label, sampleWeight *nd.NDArray) *nd.NDArray {
	pw, p0 := l.PosWeight, pred
	pred, label, sampleWeight = autocastInputs(pred, label, sampleWeight)
	if pred != p0 && pw != nil && pw.DType().IsHalf() {
		pw = pw.AsType(pred.DType()) // autocast widened pred
	}
	const op = "loss.SigmoidBCE"
	check(op, pred, label, sampleWeight)
	z := reshapeLike(op, "labels", label, pred.Shape(), pred.Shape())
	if pw != nil {
		checkBroadcast(op, "pos weights", pred, pw)
	}
	var loss *nd.NDArray
	if l.FromSigmoid {
		p, zz, w := pred, z, pw
		if dt := pred.DType(); dt.IsHalf() {
			// 1e-12 is 0 in half precision, where p rounds to exactly 0
			// or 1: in float32 the logarithms stay finite.
			p, zz = pred.AsType(nd.Float32), z.AsType(nd.Float32)
			if w != nil {
				w = w.AsType(nd.Float32)
			}
		}
		pos := nd.Mul(nd.Log(nd.AddScalar(p, sigmoidEps)), zz)
		if w != nil {
			pos = nd.Mul(pos, w)
		}
		neg := nd.Mul(nd.Log(nd.AddScalar(nd.RSubScalar(1, p), sigmoidEps)), nd.RSubScalar(1, zz))
		loss = nd.Neg(nd.Add(pos, neg))
		if loss.DType() != pred.DType() {
			loss = loss.AsType(pred.DType())
		}
	} else {
		loss = bceLogits(pred, z, pw)
	}
	return finish(op, loss, sampleWeight, scale(l.Weight))
}

// bceLogits is the binary cross-entropy of logits x against targets z,
// with the positive term weighted by pw (nil for none), computed stably.
func bceLogits(x, z, pw *nd.NDArray) *nd.NDArray {
	if pw == nil {
		// −|x| is written min(x, −x): equal values, but at x = 0
		// nd.Minimum sends the gradient to its first operand, so the
		// softrelu term contributes sigmoid(0)·1 = 0.5 and the total
		// gradient is the exact sigmoid(x) − z (nd.Abs would give 0 there
		// and a gradient of −z).
		negAbs := nd.Minimum(x, nd.Neg(x))
		return nd.Add(nd.Sub(nd.Relu(x), nd.Mul(x, z)), nd.Softrelu(negAbs))
	}
	// log(1 + e^−x) = relu(−x) + softrelu(−|x|), with −|x| written
	// min(−x, x) so that at x = 0 the gradient is the exact −1/2.
	nx := nd.Neg(x)
	softplusNeg := nd.Add(nd.Relu(nx), nd.Softrelu(nd.Minimum(nx, x)))
	lw := nd.AddScalar(nd.Mul(nd.AddScalar(pw, -1), z), 1)
	return nd.Add(nd.Sub(x, nd.Mul(x, z)), nd.Mul(lw, softplusNeg))
}

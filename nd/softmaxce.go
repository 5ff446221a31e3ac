package nd

import "github.com/goluon/goluon/nd/backend"

// SoftmaxCrossEntropy returns −log softmax(x)[label] along axis for every
// position of labels: the cross-entropy of logits x against class
// indices, labels having x's shape without axis and an integer dtype (or a
// float one holding whole numbers), indices outside [0, C) clipped as Pick
// clips them. It equals Neg(Pick(LogSoftmax(x, axis), labels, axis)),
// which it computes where the backend has no fused kernels
// (backend.SoftmaxCEKernels) or they are off (SetFusedKernels); with them
// it makes one pass over x forward and one backward. The gradient flows to
// x only.
func SoftmaxCrossEntropy(x, labels *NDArray, axis int) *NDArray {
	return dispatchIx("SoftmaxCrossEntropy", castFloat32, []*NDArray{x, labels}, 0b10, func(in []*NDArray) *NDArray { return softmaxCrossEntropyOp(in[0], in[1], axis) })
}

func softmaxCrossEntropyOp(x, labels *NDArray, axis int) *NDArray {
	const op = "SoftmaxCrossEntropy"
	ax, outer, n, inner := pickDims(op, x, labels, axis)
	k, ok := kernelsOf[backend.SoftmaxCEKernels](x.be())
	if !ok || !fusedKernels() || n == 0 {
		if s := sessionOf(op, x, labels); s != defaultSession {
			l := s.lift(op, x, labels) // LogSoftmax(x) must be s's
			x, labels = l[0], l[1]
		}
		return Neg(Pick(LogSoftmax(x, ax), labels, ax))
	}
	sess := sessionOf(op, x, labels)
	dev, dt := x.st.dev, x.dtype
	p := backend.ChannelParams{Outer: outer, C: n, Inner: inner, DType: dt, Device: dev}
	loss := newArray(op, sess, dev, dt, labels.shape)
	lse := newArray(op, sess, dev, Float64, labels.shape)
	k.SoftmaxCE(p, loss.arg(), lse.arg(), x.arg(), labels.arg())
	RecordDiff(op, loss, []*NDArray{x, labels}, func(g *NDArray, need []bool) []*NDArray {
		if !need[0] {
			return nil
		}
		dx := newArray(op, g.Session(), dev, dt, x.shape)
		backwardKernels(g, k).SoftmaxCEBackward(p, dx.arg(), g.arg(), x.arg(), lse.arg(), labels.arg())
		return []*NDArray{dx, nil}
	}, func(g *NDArray, need []bool) []*NDArray { // g·(softmax(x) − onehot(labels))
		if !need[0] {
			return nil
		}
		picked := linearDiff("Pick", 0, 1, func(g *NDArray) *NDArray {
			gx := ZerosLike(x)
			if g.Size() > 0 {
				x.be().PickBackward(outer, n, inner, gx.arg(), g.arg(), labels.arg())
			}
			return gx
		}, func(h *NDArray) *NDArray { return Pick(h, labels, ax) })
		return []*NDArray{Sub(Mul(ExpandDims(g, ax), Softmax(x, ax)), picked(g, []bool{true})[0]), nil}
	})
	if !sess.IsRecording() {
		lse.Release()
	}
	return loss
}

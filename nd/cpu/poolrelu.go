package cpu

import "github.com/goluon/goluon/nd/backend"

// The backward passes of a pooling and of the bias + ReLU before it, fused
// (backend.PoolReluBackwardKernels): per plane, the pooling's gradient is
// routed into dx and masked by the ReLU at once, while the plane is in
// cache. The unfused kernels write the whole routed gradient, then read it
// back for the mask and the bias sums.

var _ backend.PoolReluBackwardKernels = (*Backend)(nil)

// FusesPoolReluBackward implements backend.PoolReluBackwardKernels: float
// operands whose channel runs are the pooling's input planes, long enough
// for biasReluBackward's per-channel sums (whose order this keeps).
func (*Backend) FusesPoolReluBackward(pp backend.PoolParams, cp backend.ChannelParams) bool {
	return (pp.DType == backend.Float32 || pp.DType == backend.Float64) && cp.DType == pp.DType &&
		cp.Outer == pp.N && cp.C == pp.C && cp.Inner == pp.InH*pp.InW && cp.Inner >= minRun
}

// PoolReluBackward implements backend.PoolReluBackwardKernels.
func (*Backend) PoolReluBackward(pp backend.PoolParams, cp backend.ChannelParams, dx, dbias, x, y, dy backend.Arg) {
	if isF64(x) {
		poolReluBackward(pp, cp, slice[float64](dx), optSlice[float64](dbias), slice[float64](x), slice[float64](y), slice[float64](dy))
	} else {
		poolReluBackward(pp, cp, slice[float32](dx), optSlice[float32](dbias), slice[float32](x), slice[float32](y), slice[float32](dy))
	}
}

// poolReluBackward runs each image's plane of each channel through the
// pooling's backward pass and then reluGradSum in place, the planes in
// memory order (planeSums), adding the bias sums in image order as
// biasReluBackward does.
func poolReluBackward[T Float](pp backend.PoolParams, cp backend.ChannelParams, dx, db, x, y, dy []T) {
	if db != nil {
		db = db[:cp.C] // its buffer may run on (a traced graph's planned buffers)
	}
	outPlane := pp.OutH * pp.OutW
	if _, ok := asF32(dx); ok && narrowPool2x2(pp) {
		// Narrow planes: a range of them through the narrow kernel
		// stacked, then each plane's mask and sum.
		in := cp.Inner
		planeRangeSums(cp, db, func(lo, hi int, sums []float64) {
			narrowPlanes(pp, dx, x, y, dy, lo, hi)
			for r := lo; r < hi; r++ {
				d := dx[r*in:][:in]
				sums[r] = reluGradSum(d, x[r*in:][:in], d)
			}
		})
		return
	}
	plane := poolBackwardPlaneFor[T](pp)
	planeSums(cp, db, func(o, c int) float64 {
		d, xp := channelRun(cp, dx, o, c), channelRun(cp, x, o, c)
		pl := o*cp.C + c
		plane(pp, d, xp, y[pl*outPlane:][:outPlane], dy[pl*outPlane:][:outPlane])
		return reluGradSum(d, xp, d)
	})
}

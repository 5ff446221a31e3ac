package backend

import "github.com/goluon/goluon/ctx"

// GraphCapturer is a backend that can record the work queued on a device
// into a graph and queue the whole graph again later in one call (CUDA
// graphs): the kernels' launches, operands and sizes are fixed at capture,
// so a launch runs them on the same memory. A backend may implement it.
type GraphCapturer interface {
	// BeginCapture starts recording the work that the calling goroutine
	// queues on dev, instead of running it. Until EndCapture, other
	// goroutines that queue work on dev wait, and buffers freed on dev
	// are kept for the graph (a later Alloc must not hand out memory the
	// graph's kernels use).
	BeginCapture(dev ctx.Context) error
	// EndCapture stops the recording and returns the graph. Nothing
	// recorded has run. On error the recording is discarded, and the
	// buffers kept for it are freed.
	EndCapture(dev ctx.Context) (CapturedGraph, error)
}

// CapturedGraph is the work a GraphCapturer recorded.
type CapturedGraph interface {
	// Launch queues the recorded work again, in its order, after the work
	// queued on the device before it.
	Launch()
	// Release frees the graph and the buffers kept for it, after the
	// launches queued so far.
	Release()
}

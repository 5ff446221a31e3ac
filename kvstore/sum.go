package kvstore

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// hostContext is where the local kind keeps its values.
var hostContext = ctx.CPU(0)

type contextLoad struct {
	dev   ctx.Context
	bytes int64
}

// SumOn adds values in the given order into a new array on dev:
// ((v0 + v1) + v2) + ... Values on other contexts are copied to dev first.
// Nothing is recorded on the autograd tape, and the sum and the copies are
// made with nd.Persistent, so no goroutine's scope can release them while
// the sum is computed; the caller releases the result. Every kind sums a
// key's per-device values this way, so all kinds give identical sums.
func SumOn(dev ctx.Context, values []*nd.NDArray) *nd.NDArray {
	acc := nd.PersistentSession().CopyOf(values[0], dev)
	for _, v := range values[1:] {
		if v.Context() == dev {
			nd.AddTo(acc, v)
			continue
		}
		moved := nd.PersistentSession().CopyOf(v, dev)
		nd.AddTo(acc, moved)
		moved.Release()
	}
	return acc
}

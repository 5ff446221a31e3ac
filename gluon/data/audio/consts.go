package audio

import (
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// constKey names one copy of a Block's constant: a context and a dtype.
type constKey struct {
	dev ctx.Context
	dt  nd.DType
}

// consts holds a Block's constant array (a window, a filter bank, a DCT
// matrix, a resampling kernel) once per context and dtype it has been
// used with, made on first use from float64 values. The copies are
// persistent arrays: no Scope releases them, and they live as long as
// the Block. A trace (gluon.Hybridize) that finds no copy makes its own,
// which its graph keeps.
type consts struct {
	mu     sync.Mutex
	shape  []int
	values []float64
	arrays map[constKey]*nd.NDArray
}

// newConsts returns the cache of the constant of the given values and
// shape.
func newConsts(values []float64, shape ...int) *consts {
	return &consts{shape: shape, values: values}
}

// get returns the constant on dev in dtype dt.
func (c *consts) get(dev ctx.Context, dt nd.DType) *nd.NDArray {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := constKey{dev, dt}
	if a, ok := c.arrays[k]; ok {
		return a
	}
	if nd.Tracing() {
		// Inside gluon.Hybridize's trace persistent state may not be
		// made: the constant becomes part of the traced graph instead.
		return fromFloat64s(false, dev, dt, c.values, c.shape...)
	}
	if c.arrays == nil {
		c.arrays = map[constKey]*nd.NDArray{}
	}
	a := fromFloat64s(true, dev, dt, c.values, c.shape...)
	c.arrays[k] = a
	return a
}

// checkSignal fails unless x is a floating-point array of at least
// minDims axes.
func checkSignal(op string, x *nd.NDArray, minDims int) {
	if x == nil {
		nd.Panicf(op, nd.ErrArgument, "nil input")
	}
	if !x.DType().IsFloat() {
		nd.Panicf(op, nd.ErrDType, "needs a floating-point array, got %v (shape %v)", x.DType(), x.Shape())
	}
	if x.NDim() < minDims {
		nd.Panicf(op, nd.ErrShape, "needs at least %d axes, got shape %v", minDims, x.Shape())
	}
}

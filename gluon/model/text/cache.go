package text

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Cache holds the attention keys and values of the positions a GPT2 has
// seen through ForwardCached, per layer, so that the next positions
// attend to them without recomputing them (Hugging Face's
// past_key_values). After ForwardCachedMasked it holds the attention
// mask of its positions too, which later ForwardCached calls extend by
// ones (the new tokens are not padding). Its arrays live until Release or
// the next ForwardCached replaces them, whatever scopes close meanwhile.
// A Cache is for one model, one batch and one context, used by one
// goroutine at a time.
type Cache struct {
	layers []layerCache
	n      int         // positions held
	batch  int         // the batch of the first call; 0 before it
	dev    ctx.Context // the context of the first call
	// keep is the Bool mask [batch, n] of the positions held that are
	// tokens (not padding), nil when no call gave a mask.
	keep *nd.NDArray
}

// layerCache is one layer's keys and values, [B·heads, positions,
// head dim] each (nil before the first call).
type layerCache struct{ k, v *nd.NDArray }

// NewCache returns an empty cache for m.
func (m *GPT2) NewCache() *Cache { return &Cache{layers: make([]layerCache, m.cfg.NLayer)} }

// Len returns the number of positions the cache holds.
func (c *Cache) Len() int { return c.n }

// Release frees the cache's arrays and empties it; the cache may be used
// again, for any batch.
func (c *Cache) Release() {
	for i := range c.layers {
		c.layers[i].k.Release()
		c.layers[i].v.Release()
		c.layers[i] = layerCache{}
	}
	c.keep.Release()
	c.keep = nil
	c.n, c.batch = 0, 0
}

// setMask makes keep [batch, n] (after the call's positions were added)
// the cache's mask: a persistent copy, the one it replaces released.
func (c *Cache) setMask(keep *nd.NDArray) {
	old := c.keep
	c.keep = keep.Copy().Persist()
	old.Release()
}

// check panics unless the cache fits a model of the given depth and a
// batch of bsz on dev, which it takes on when empty.
func (c *Cache) check(op string, layers, bsz int, dev ctx.Context) {
	if len(c.layers) != layers {
		nd.Panicf(op, nd.ErrArgument, "a cache for %d layers given to a model of %d (make it with the model's NewCache)", len(c.layers), layers)
	}
	if c.n == 0 {
		c.batch, c.dev = bsz, dev
	}
	if bsz != c.batch {
		nd.Panicf(op, nd.ErrShape, "batch of %d for a cache of a batch of %d", bsz, c.batch)
	}
	if dev != c.dev {
		nd.Panicf(op, nd.ErrContext, "token ids on %v for a cache on %v", dev, c.dev)
	}
}

// extend appends the new positions' keys and values to the layer's and
// returns all of them. The cache keeps the results (Persist: no scope
// releases them) and releases the arrays they replace.
func (l *layerCache) extend(k, v *nd.NDArray) (*nd.NDArray, *nd.NDArray) {
	if l.k != nil {
		oldK, oldV := l.k, l.v
		k, v = nd.Concat([]*nd.NDArray{oldK, k}, 1), nd.Concat([]*nd.NDArray{oldV, v}, 1)
		oldK.Release()
		oldV.Release()
	} else {
		// The new arrays themselves may be views the caller's scope
		// releases: keep copies.
		k, v = k.Copy(), v.Copy()
	}
	l.k, l.v = k.Persist(), v.Persist()
	return k, v
}

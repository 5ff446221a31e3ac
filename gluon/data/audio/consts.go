package audio

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// The Blocks' constants (windows, mel filter banks, DCT matrices,
// resampling filters) live in one process-wide cache of device arrays,
// constCache, keyed by what they hold: the SHA-256 digest of the
// constant's shape and float64 values, its context and its dtype. The
// values are a function of a Block's kind and options, so equal Blocks
// (two Resamples from 44100 to 16000 Hz, every default MFCC) share one
// copy per context and dtype, and making the same Block again, say one
// Resample per file, allocates nothing new. Two different options that
// give the same values share them too.
//
// A Block holds (through its consts) a handle on each entry it has used.
// The cache is an LRU list bounded in bytes (SetConstCacheLimit, 64 MiB
// by default): when an insertion takes it over its limit, the least
// recently acquired entries that no live Block holds are released
// (nd's Release, back to the context's pool) until it is under the
// limit again. An entry a Block still holds is never released: the
// arrays of live Blocks are outside the bound, as they must be. Whether
// a Block still holds an entry is known from a weak pointer to its handle
// (package weak), so a Block dropped counts as gone once the garbage
// collector has found it unreachable; the release itself happens at a
// definite point, an insertion or SetConstCacheLimit, not in a finaliser.
// An entry used within the last constGrace is not released either: the
// array of a Block dropped by a caller while its own Forward still runs
// (NewResample(a, b, o).Forward(x), after its last use of the receiver)
// stays valid for the op about to read it. What a dropped Block's
// constant is still needed for after that (the backward pass of a
// graph recorded long before, once the cache has moved on past it)
// fails loudly, with nd's ErrReleased, and never reads freed memory.

// defaultConstCacheLimit is the default bound, in bytes, of the
// constants no Block holds.
const defaultConstCacheLimit = 64 << 20

// constGrace is how long after its last use an entry no Block holds is
// kept whatever the limit (a variable for tests).
var constGrace = time.Second

// constKey names one cached array: a constant's content, context and
// dtype.
type constKey struct {
	digest [sha256.Size]byte
	dev    ctx.Context
	dt     nd.DType
}

// constEntry is one cached array.
type constEntry struct {
	key     constKey
	arr     *nd.NDArray
	bytes   int64
	elem    *list.Element
	user    weak.Pointer[constUser] // the handle the Blocks using it share
	lastUse atomic.Int64            // unix nanoseconds
}

// constUser is the handle on an entry that the Blocks using it hold:
// while one of them is reachable, the entry is not released.
type constUser struct{ e *constEntry }

// constCache is the process-wide cache.
var constCache = struct {
	mu      sync.Mutex
	entries map[constKey]*constEntry
	lru     list.List // of *constEntry, the most recently acquired first
	bytes   int64
	limit   int64
}{entries: map[constKey]*constEntry{}, limit: defaultConstCacheLimit}

// SetConstCacheLimit sets the bound, in bytes, on the memory of the
// Blocks' cached constants (windows, filter banks, DCT matrices,
// resampling filters) that no live Block uses, and returns the previous
// one (64 MiB at first). Lowering it releases such constants at once, to
// the new bound, and 0 releases all those the garbage collector has
// found unreferenced (run runtime.GC first to be thorough) and not used
// within the last second; a negative limit is 0. Constants that live
// Blocks use are never released and are not counted against the bound.
// It is safe for concurrent use.
func SetConstCacheLimit(bytes int64) int64 {
	c := &constCache
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.limit
	c.limit = max(bytes, 0)
	evictConsts()
	return old
}

// acquire returns the handle on the cached array of key, made by mk (on
// a miss; nil: return nil instead) and cached.
func acquire(key constKey, mk func() *nd.NDArray) *constUser {
	c := &constCache
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		if mk == nil {
			return nil
		}
		a := mk()
		e = &constEntry{key: key, arr: a, bytes: int64(a.Size()) * int64(a.DType().Size())}
		e.elem = c.lru.PushFront(e)
		c.entries[key] = e
		c.bytes += e.bytes
	} else {
		c.lru.MoveToFront(e.elem)
	}
	e.lastUse.Store(time.Now().UnixNano())
	u := e.user.Value()
	if u == nil {
		u = &constUser{e: e}
		e.user = weak.Make(u)
	}
	if !ok {
		evictConsts()
	}
	return u
}

// evictConsts releases the least recently acquired entries no Block
// holds, unused for constGrace, while the cache is over its limit. The
// caller holds the cache's lock.
func evictConsts() {
	c := &constCache
	now := time.Now().UnixNano()
	for el := c.lru.Back(); el != nil && c.bytes > c.limit; {
		prev := el.Prev()
		e := el.Value.(*constEntry)
		if e.user.Value() == nil && now-e.lastUse.Load() >= int64(constGrace) {
			c.lru.Remove(el)
			delete(c.entries, e.key)
			c.bytes -= e.bytes
			e.arr.Release()
		}
		el = prev
	}
}

// constKeyDevice names a consts' array on one context in one dtype.
type constKeyDevice struct {
	dev ctx.Context
	dt  nd.DType
}

// consts is a Block's constant (a window, a filter bank, a DCT matrix, a
// resampling kernel): its float64 values and shape, and the handles on
// the cached arrays it has used, one per context and dtype, made on
// first use (see constCache). The arrays are persistent: no Scope
// releases them. A trace (gluon.Hybridize) that finds no cached copy
// makes its own, which its graph keeps.
type consts struct {
	mu     sync.Mutex
	shape  []int
	values []float64
	digest [sha256.Size]byte
	held   map[constKeyDevice]*constUser
}

// newConsts returns the constant of the given values and shape.
func newConsts(values []float64, shape ...int) *consts {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(shape)))
	h.Write(b[:])
	for _, d := range shape {
		binary.LittleEndian.PutUint64(b[:], uint64(d))
		h.Write(b[:])
	}
	buf := make([]byte, 0, 8*min(len(values), 4096))
	for i, v := range values {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		if len(buf) == cap(buf) || i == len(values)-1 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	c := &consts{shape: shape, values: values}
	h.Sum(c.digest[:0])
	return c
}

// get returns the constant on dev in dtype dt.
func (c *consts) get(dev ctx.Context, dt nd.DType) *nd.NDArray {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := constKeyDevice{dev, dt}
	if u, ok := c.held[k]; ok {
		u.e.lastUse.Store(time.Now().UnixNano())
		return u.e.arr
	}
	key := constKey{c.digest, dev, dt}
	mk := func() *nd.NDArray { return fromFloat64s(true, dev, dt, c.values, c.shape...) }
	if nd.Tracing() {
		// Inside gluon.Hybridize's trace persistent state may not be
		// made: a constant not cached yet becomes part of the traced
		// graph instead.
		mk = nil
	}
	u := acquire(key, mk)
	if u == nil {
		return fromFloat64s(false, dev, dt, c.values, c.shape...)
	}
	if c.held == nil {
		c.held = map[constKeyDevice]*constUser{}
	}
	c.held[k] = u
	return u.e.arr
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

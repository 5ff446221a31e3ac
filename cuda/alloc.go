//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// pool is a device's caching allocator: freed blocks wait in free lists by
// size class and are handed out again without a driver call. Reuse is safe
// without events because a device's work is all on one stream: a block
// freed by the host may still be read by queued kernels, but any kernel
// that writes it after reuse is queued behind them.
type pool struct {
	mu    sync.Mutex
	free  map[int64][]dptr
	stats backend.MemStats
}

func (p *pool) init() { p.free = map[int64][]dptr{} }

// minBlock is the smallest block in bytes (and the alignment of sizes).
const minBlock = 512

// blockSize rounds a request up to its size class: at least minBlock, then
// steps of a quarter power of two, so that similar sizes share free lists
// and at most a fifth of a block is wasted.
func blockSize(bytes int64) int64 {
	if bytes <= minBlock {
		return minBlock
	}
	e := bits.Len64(uint64(bytes-1)) - 1 // 2^e < bytes <= 2^(e+1)
	step := int64(1) << (e - 2)
	return (bytes + step - 1) / step * step
}

// Alloc returns a buffer of n elements on dev from its pool, allocating
// from the driver on a miss. When the device is out of memory it frees the
// cached blocks of dev and of the other virtual GPUs on the same physical
// device and tries once more; then it fails with the sizes involved.
func (b *Backend) Alloc(dev ctx.Context, dt backend.DType, n int) (backend.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cuda: negative allocation size %d", n)
	}
	if !dt.Valid() {
		return nil, fmt.Errorf("cuda: invalid dtype %v", dt)
	}
	d, err := b.device(dev)
	if err != nil {
		return nil, err
	}
	if err := d.takeErr(); err != nil {
		return nil, fmt.Errorf("cuda: %v: an earlier asynchronous operation failed: %w", dev, err)
	}
	want := int64(n) * int64(dt.Size())
	size := blockSize(want)
	ptr, err := b.allocBlock(d, want, size)
	if err != nil {
		return nil, err
	}
	return &Buffer{dev: d, ptr: ptr, n: n, dt: dt, size: size}, nil
}

func (b *Backend) allocBlock(d *device, want, size int64) (dptr, error) {
	p := &d.mem
	p.mu.Lock()
	p.stats.Allocs++
	if l := p.free[size]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[size] = l[:len(l)-1]
		p.stats.Cached -= size
		p.stats.InUse += size
		p.stats.Peak = max(p.stats.Peak, p.stats.InUse)
		p.mu.Unlock()
		return ptr, nil
	}
	p.stats.Misses++
	p.mu.Unlock()

	ptr, err := d.driverAlloc(size)
	if isOOM(err) && !d.cap.active() { // a capturing stream cannot wait for the cache's release
		d.releaseCache()
		for _, s := range b.siblings(d) {
			if !s.cap.active() {
				s.releaseCache()
			}
		}
		ptr, err = d.driverAlloc(size)
	}
	if err != nil {
		if isOOM(err) {
			free, total, _ := d.memInfo()
			p.mu.Lock()
			inUse := p.stats.InUse
			p.mu.Unlock()
			return 0, fmt.Errorf("cuda: %v: out of memory: requested %d bytes (block of %d), %d bytes free of %d on %s; %d bytes in use by %v after its cache was released: %w",
				d.dev, want, size, free, total, d.phys.name, inUse, d.dev, err)
		}
		return 0, fmt.Errorf("cuda: %v: allocating %d bytes: %w", d.dev, size, err)
	}
	p.mu.Lock()
	p.stats.InUse += size
	p.stats.Peak = max(p.stats.Peak, p.stats.InUse)
	p.stats.Allocated += size
	p.mu.Unlock()
	return ptr, nil
}

func (d *device) driverAlloc(size int64) (dptr, error) {
	var ptr dptr
	err := d.call("Alloc", func() error {
		var e error
		ptr, e = driverAlloc(size)
		return e
	})
	return ptr, err
}

// Free returns buf's block to its device's pool.
func (b *Backend) Free(_ ctx.Context, buf backend.Buffer) {
	cb := buf.(*Buffer)
	if cb.dev.cap.hold(cb) { // a capture's kernels may use it: kept for the graph
		return
	}
	p := &cb.dev.mem
	p.mu.Lock()
	p.free[cb.size] = append(p.free[cb.size], cb.ptr)
	p.stats.InUse -= cb.size
	p.stats.Cached += cb.size
	p.mu.Unlock()
	cb.ptr = 0
}

// SyncStats reports how often the host waited on dev (backend.SyncCounter).
func (b *Backend) SyncStats(dev ctx.Context) backend.SyncStats {
	d := b.started(dev)
	if d == nil {
		return backend.SyncStats{}
	}
	return backend.SyncStats{HostSyncs: d.syncs.Load(), WorkerCalls: d.calls.Load()}
}

// Stats reports dev's memory use.
func (b *Backend) Stats(dev ctx.Context) backend.MemStats {
	d := b.started(dev)
	if d == nil {
		return backend.MemStats{}
	}
	d.mem.mu.Lock()
	defer d.mem.mu.Unlock()
	return d.mem.stats
}

// ReleaseCache gives dev's cached blocks back to the driver.
func (b *Backend) ReleaseCache(dev ctx.Context) {
	if d := b.started(dev); d != nil {
		if err := d.releaseCache(); err != nil {
			deviceFail("ReleaseCache", dev, err)
		}
	}
}

// releaseCache empties the pool's free lists and frees the blocks once the
// stream has finished the work that may still use them.
func (d *device) releaseCache() error {
	p := &d.mem
	p.mu.Lock()
	var blocks []dptr
	for size, l := range p.free {
		blocks = append(blocks, l...)
		p.stats.Cached -= size * int64(len(l))
	}
	p.free = map[int64][]dptr{}
	p.mu.Unlock()
	if len(blocks) == 0 {
		return nil
	}
	d.syncs.Add(1)
	return d.call("ReleaseCache", func() error {
		if err := streamSync(d.stream); err != nil {
			return err
		}
		var first error
		for _, ptr := range blocks {
			if err := driverFree(ptr); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
}

// Package cpu is the CPU backend of package nd. It is always built and is
// registered for ctx.KindCPU when package nd is imported.
//
// Every cpu(i) context shares the host's cores but keeps its own memory pool
// and statistics, so that per-device memory accounting works on machines
// without a GPU. Kernels split their work into at most GOMAXPROCS chunks
// run by the caller and long-lived helper goroutines (parallel.go);
// float32 matrix multiply is a packed, blocked GEMM with an AVX2/FMA
// assembly micro-kernel (sgemm.go; gonum's Sgemm on other CPUs), float64
// uses gonum's Dgemm, and convolution is im2col + GEMM, or Winograd
// F(2×2, 3×3) for wide float32 3×3 layers (winograd.go; small planes in
// batches of images, winobatch.go). Contiguous float32 elementwise ops,
// row copies, sums and 2×2 max pooling have AVX2 kernels
// (vec_amd64.s, pool_amd64.s), with plain Go loops for float64 and other
// CPUs. It also implements nd's optional fused kernels: batch
// normalisation, bias + ReLU, and the SGD and RMSProp updates
// (batchnorm.go, biasrelu.go, optimizer.go). Reductions that combine
// per-goroutine partial results do so in a fixed order, so results are
// bitwise reproducible for a fixed GOMAXPROCS.
package cpu

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// Buffer is host memory holding the elements of one dtype: exactly one of
// its slices is non-nil (U8 holds both Uint8 and Bool, whose elements are 0
// or 1; F16 and BF16 hold the half-precision storage types).
type Buffer struct {
	F32  []float32
	F64  []float64
	I32  []int32
	I64  []int64
	U8   []uint8
	F16  []backend.F16
	BF16 []backend.BF16
	dt   backend.DType
}

// Len returns the number of elements.
func (b *Buffer) Len() int {
	switch b.dt {
	case backend.Float64:
		return len(b.F64)
	case backend.Int32:
		return len(b.I32)
	case backend.Int64:
		return len(b.I64)
	case backend.Uint8, backend.Bool:
		return len(b.U8)
	case backend.Float16:
		return len(b.F16)
	case backend.BFloat16:
		return len(b.BF16)
	}
	return len(b.F32)
}

// DType returns the element type.
func (b *Buffer) DType() backend.DType { return b.dt }

func (b *Buffer) capacity() int {
	switch b.dt {
	case backend.Float64:
		return cap(b.F64)
	case backend.Int32:
		return cap(b.I32)
	case backend.Int64:
		return cap(b.I64)
	case backend.Uint8, backend.Bool:
		return cap(b.U8)
	case backend.Float16:
		return cap(b.F16)
	case backend.BFloat16:
		return cap(b.BF16)
	}
	return cap(b.F32)
}

// resize sets the buffer's length to n (at most its capacity), allocating
// the slice of its dtype with capacity c when it has none.
func (b *Buffer) resize(n, c int) {
	switch b.dt {
	case backend.Float64:
		b.F64 = resized(b.F64, n, c)
	case backend.Int32:
		b.I32 = resized(b.I32, n, c)
	case backend.Int64:
		b.I64 = resized(b.I64, n, c)
	case backend.Uint8, backend.Bool:
		b.U8 = resized(b.U8, n, c)
	case backend.Float16:
		b.F16 = resized(b.F16, n, c)
	case backend.BFloat16:
		b.BF16 = resized(b.BF16, n, c)
	default:
		b.F32 = resized(b.F32, n, c)
	}
}

func resized[T Storage](s []T, n, c int) []T {
	if s == nil {
		return make([]T, n, c)
	}
	return s[:n]
}

// host returns the buffer's elements as a typed slice (any of Elem).
func (b *Buffer) host() any {
	switch b.dt {
	case backend.Float64:
		return b.F64
	case backend.Int32:
		return b.I32
	case backend.Int64:
		return b.I64
	case backend.Uint8, backend.Bool:
		return b.U8
	case backend.Float16:
		return b.F16
	case backend.BFloat16:
		return b.BF16
	}
	return b.F32
}

// Backend is the CPU backend. The zero value is not usable; use New.
type Backend struct {
	mu    sync.Mutex
	pools map[ctx.Context]*pool
	// The last context's pool: most calls name the one before.
	lastDev  ctx.Context
	lastPool *pool
}

// pool is one context's buffers: the free ones per dtype and size class
// (indexed by classIndex; an eager op takes one and gives one back, so
// these lookups are on every op's path), and the statistics.
type pool struct {
	free  [][][]*Buffer
	stats backend.MemStats
}

// New returns a CPU backend with empty pools.
func New() *Backend { return &Backend{pools: map[ctx.Context]*pool{}} }

// Name returns "cpu".
func (*Backend) Name() string { return "cpu" }

// poolFor returns dev's pool (be.mu held).
func (be *Backend) poolFor(dev ctx.Context) *pool {
	if be.lastPool != nil && be.lastDev == dev {
		return be.lastPool
	}
	p := be.pools[dev]
	if p == nil {
		p = &pool{}
		be.pools[dev] = p
	}
	be.lastDev, be.lastPool = dev, p
	return p
}

// list returns the free list of dtype dt and size class class.
func (p *pool) list(dt backend.DType, class int) *[]*Buffer {
	if int(dt) >= len(p.free) {
		p.free = append(p.free, make([][][]*Buffer, int(dt)+1-len(p.free))...)
	}
	if p.free[dt] == nil {
		p.free[dt] = make([][]*Buffer, numClasses)
	}
	return &p.free[dt][classIndex(class)]
}

// sizeClass rounds n up so that buffers of similar sizes share free lists:
// at least 16 elements, then steps of a quarter power of two.
func sizeClass(n int) int {
	if n <= 16 {
		return 16
	}
	e := bits.Len(uint(n-1)) - 1 // 2^e < n <= 2^(e+1)
	step := 1 << max(e-2, 0)
	return (n + step - 1) / step * step
}

// numClasses is the number of size classes: 16, then four per power of
// two above it.
const numClasses = 1 + 4*(bits.UintSize-1-4)

// classIndex numbers the size class class (a value of sizeClass) from 0.
func classIndex(class int) int {
	if class <= 16 {
		return 0
	}
	e := bits.Len(uint(class-1)) - 1 // 2^e < class <= 2^(e+1), e >= 4
	return 1 + 4*(e-4) + class>>(e-2) - 5
}

// Alloc returns a buffer of n elements from dev's pool, allocating when the
// pool has none of the right size class.
func (be *Backend) Alloc(dev ctx.Context, dt backend.DType, n int) (backend.Buffer, error) {
	if n < 0 {
		return nil, fmt.Errorf("cpu: negative allocation size %d", n)
	}
	if !dt.Valid() {
		return nil, fmt.Errorf("cpu: unknown dtype %v", dt)
	}
	class := sizeClass(n)
	be.mu.Lock()
	p := be.poolFor(dev)
	p.stats.Allocs++
	bytes := int64(class * dt.Size())
	if l := p.list(dt, class); len(*l) > 0 {
		b := (*l)[len(*l)-1]
		*l = (*l)[:len(*l)-1]
		p.stats.Cached -= bytes
		p.stats.InUse += bytes
		p.stats.Peak = max(p.stats.Peak, p.stats.InUse)
		be.mu.Unlock()
		b.resize(n, class)
		return b, nil
	}
	p.stats.Misses++
	p.stats.InUse += bytes
	p.stats.Peak = max(p.stats.Peak, p.stats.InUse)
	p.stats.Allocated += bytes
	be.mu.Unlock()
	b := &Buffer{dt: dt}
	b.resize(n, class)
	return b, nil
}

// Free puts b back into dev's pool.
func (be *Backend) Free(dev ctx.Context, buf backend.Buffer) {
	b := buf.(*Buffer)
	class := b.capacity()
	be.mu.Lock()
	defer be.mu.Unlock()
	p := be.poolFor(dev)
	l := p.list(b.dt, class)
	*l = append(*l, b)
	bytes := int64(class * b.dt.Size())
	p.stats.InUse -= bytes
	p.stats.Cached += bytes
}

// Stats reports dev's pool statistics.
func (be *Backend) Stats(dev ctx.Context) backend.MemStats {
	be.mu.Lock()
	defer be.mu.Unlock()
	return be.poolFor(dev).stats
}

// ReleaseCache drops dev's cached buffers so the garbage collector can
// reclaim them.
func (be *Backend) ReleaseCache(dev ctx.Context) {
	be.mu.Lock()
	defer be.mu.Unlock()
	p := be.poolFor(dev)
	p.free = nil
	p.stats.Cached = 0
}

// Write copies host data into dst at element off, converting as Cast does.
func (*Backend) Write(dst backend.Buffer, off int, src any) {
	b := dst.(*Buffer)
	_, n, ok := backend.HostDType(src)
	if !ok {
		panic(fmt.Sprintf("cpu: Write: unsupported host type %T", src))
	}
	backend.ConvertHost(sliceFrom(b, off, n), b.dt == backend.Bool, src)
}

// Read copies elements starting at off into the host slice dst.
func (*Backend) Read(src backend.Buffer, off int, dst any) {
	b := src.(*Buffer)
	_, n, ok := backend.HostDType(dst)
	if !ok {
		panic(fmt.Sprintf("cpu: Read: unsupported host type %T", dst))
	}
	backend.ConvertHost(dst, false, sliceFrom(b, off, n))
}

// HostView returns n elements of buf from off as the slice that holds
// them (backend.HostMemory). Bool buffers, stored as bytes, have no slice
// of their host type ([]bool), and return false.
func (*Backend) HostView(buf backend.Buffer, off, n int) (any, bool) {
	b := buf.(*Buffer)
	if b.dt == backend.Bool {
		return nil, false
	}
	return sliceFrom(b, off, n), true
}

// Sync returns at once: CPU kernels complete before they return.
func (*Backend) Sync(ctx.Context) {}

// Float is the set of floating element types the float kernels are
// generic over.
type Float interface{ float32 | float64 }

// slice returns the typed elements of a backend.Arg starting at its offset.
func slice[T Elem](a backend.Arg) []T {
	return a.Buf.(*Buffer).host().([]T)[a.Off:]
}

// storageSlice is slice for every storage type, half precision included.
func storageSlice[T Storage](a backend.Arg) []T {
	return a.Buf.(*Buffer).host().([]T)[a.Off:]
}

func isF64(a backend.Arg) bool { return a.Buf.DType() == backend.Float64 }

var _ backend.Backend = (*Backend)(nil)

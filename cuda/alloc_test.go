//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestBlockSize checks the size classes: exact at powers of two, steps of
// a quarter power of two above, never more than a quarter wasted.
func TestBlockSize(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{
		{0, 512}, {1, 512}, {512, 512}, {513, 640}, {1024, 1024}, {1025, 1280},
		{4 << 20, 4 << 20}, {4<<20 + 1, 5 << 20},
	} {
		if got := blockSize(c.in); got != c.want {
			t.Errorf("blockSize(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	for n := int64(1); n < 1<<22; n = n*3/2 + 1 {
		if b := blockSize(n); b < n || float64(b) > 1.25*float64(max(n, 512))+1 {
			t.Errorf("blockSize(%d) = %d: too small or too wasteful", n, b)
		}
	}
}

// TestAllocReusesFreedBlocks checks that a freed block comes back for a
// request of the same size class without a driver call, and that
// ReleaseCache empties the cache.
func TestAllocReusesFreedBlocks(t *testing.T) {
	needGPUs(t, 1)
	b, dev := Default(), ctx.GPU(0)
	b.ReleaseCache(dev)
	x, err := b.Alloc(dev, backend.Float32, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ptr := x.(*Buffer).ptr
	b.Free(dev, x)
	before := b.Stats(dev)
	y, err := b.Alloc(dev, backend.Float32, 1001) // same size class
	if err != nil {
		t.Fatal(err)
	}
	after := b.Stats(dev)
	if y.(*Buffer).ptr != ptr {
		t.Errorf("freed block not reused: got %v, want %v", y.(*Buffer).ptr, ptr)
	}
	if after.Misses != before.Misses || after.Allocated != before.Allocated {
		t.Errorf("reuse went to the driver: before %+v after %+v", before, after)
	}
	if after.Cached != before.Cached-blockSize(4004) || after.InUse != before.InUse+blockSize(4004) {
		t.Errorf("accounting: before %+v after %+v", before, after)
	}
	b.Free(dev, y)
	b.ReleaseCache(dev)
	if s := b.Stats(dev); s.Cached != 0 {
		t.Errorf("after ReleaseCache: %+v, want Cached 0", s)
	}
}

// trainStep is one SGD step of a small conv net on dev's arrays.
func trainStep(x, labels *nd.NDArray, params []*nd.NDArray) float64 {
	w1, b1, w2, b2 := params[0], params[1], params[2], params[3]
	var loss *nd.NDArray
	autograd.Record(func() {
		h := nd.Relu(nd.Conv2D(x, w1, b1, nd.ConvOpts{Pad: [2]int{1, 1}}))
		h = nd.MaxPool2D(h, [2]int{2, 2}, [2]int{}, [2]int{})
		logits := nd.FullyConnected(nd.Flatten(h), w2, b2)
		loss = nd.Neg(nd.Mean(nd.Pick(nd.LogSoftmax(logits, 1), labels, 1)))
		autograd.Backward(loss)
	})
	for _, p := range params {
		nd.AddTo(p, nd.MulScalar(p.Grad(), -0.05))
	}
	return loss.Scalar()
}

// TestMemoryFlat trains for 1,000 steps (100 with -short) and checks that
// after 10 steps of warm-up the pool asks the driver for nothing more and
// nothing more stays in use.
func TestMemoryFlat(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	nd.Seed(1)
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 16, 3, 12, 12)
	labels := nd.FromSlice(dev, []float32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, 16)
	params := []*nd.NDArray{
		nd.RandomNormal(dev, nd.Float32, 0, 0.1, 8, 3, 3, 3), nd.Zeros(dev, nd.Float32, 8),
		nd.RandomNormal(dev, nd.Float32, 0, 0.1, 4, 8*6*6), nd.Zeros(dev, nd.Float32, 4),
	}
	for _, p := range params {
		p.AttachGrad(nd.GradWrite)
	}
	step := func() float64 {
		s := nd.NewScope()
		defer s.Close()
		return trainStep(x, labels, params)
	}
	first := step()
	for range 9 {
		step()
	}
	at10 := nd.MemoryStats(dev)
	steps := 1000
	if testing.Short() {
		steps = 100
	}
	var last float64
	for range steps - 10 {
		last = step()
	}
	atEnd := nd.MemoryStats(dev)
	if atEnd.Allocated != at10.Allocated || atEnd.InUse != at10.InUse {
		t.Errorf("memory grew: after 10 steps %+v, after %d %+v", at10, steps, atEnd)
	}
	if !(last < first) {
		t.Errorf("loss did not fall: first %g, last %g", first, last)
	}
	t.Logf("after 10 steps %+v; after %d %+v; loss %g -> %g", at10, steps, atEnd, first, last)
}

// TestAllocOutOfMemoryRetry makes the driver report out-of-memory once:
// the pool must release its cache and succeed on the retry; when the
// driver keeps failing the error names the sizes.
func TestAllocOutOfMemoryRetry(t *testing.T) {
	needGPUs(t, 1)
	b, dev := Default(), ctx.GPU(0)
	real := driverAlloc
	defer func() { driverAlloc = real }()

	cached, err := b.Alloc(dev, backend.Float32, 3000)
	if err != nil {
		t.Fatal(err)
	}
	b.Free(dev, cached)
	if s := b.Stats(dev); s.Cached == 0 {
		t.Fatalf("no cached block to release: %+v", s)
	}
	fails := 1
	driverAlloc = func(n int64) (dptr, error) {
		if fails > 0 {
			fails--
			return 0, errOOM
		}
		return real(n)
	}
	x, err := b.Alloc(dev, backend.Float32, 77777)
	if err != nil {
		t.Fatalf("retry after releasing the cache failed: %v", err)
	}
	if s := b.Stats(dev); s.Cached != 0 {
		t.Errorf("cache not released before the retry: %+v", s)
	}
	b.Free(dev, x)

	driverAlloc = func(int64) (dptr, error) { return 0, errOOM }
	_, err = b.Alloc(dev, backend.Float32, 1<<20+5)
	if err == nil || !errors.Is(err, errOOM) || !strings.Contains(err.Error(), "requested 4194324 bytes") ||
		!strings.Contains(err.Error(), "free") {
		t.Errorf("got error %v, want an out-of-memory error naming the requested and free bytes", err)
	}
	driverAlloc = real
	b.ReleaseCache(dev)
}

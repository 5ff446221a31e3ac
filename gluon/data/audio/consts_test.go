package audio

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// constTestDev is a context no other test of the package uses, so that
// its memory counts only what these tests make.
var constTestDev = ctx.CPU(7)

// inUse returns the bytes in use on dev after a garbage collection (which
// lets the cache see the Blocks dropped).
func inUse(dev ctx.Context) int64 {
	runtime.GC()
	runtime.GC()
	return nd.MemoryStats(dev).InUse
}

// withConstCache runs f with the cache's grace period off and its limit
// set to limit, and restores both.
func withConstCache(t *testing.T, limit int64, f func()) {
	t.Helper()
	grace := constGrace
	constGrace = 0
	old := SetConstCacheLimit(limit)
	defer func() {
		constGrace = grace
		SetConstCacheLimit(old)
	}()
	f()
}

// TestConstsShared: equal Blocks share their constants, so a Block made,
// used and dropped per file (a Resample of each file's rate, an MFCC)
// costs its constants once, not once per Block; lowering the limit to 0
// then releases them all.
func TestConstsShared(t *testing.T) {
	dev := constTestDev
	withConstCache(t, defaultConstCacheLimit, func() {
		x := nd.PersistentSession().Zeros(dev, nd.Float32, 1, 4410)
		defer x.Release()
		base := inUse(dev)
		for _, c := range []struct {
			name string
			make func() gluon1
		}{
			{"Resample(44100→16000)", func() gluon1 { return NewResample(44100, 16000, ResampleOpts{}) }},
			{"MFCC", func() gluon1 { return NewMFCC(MFCCOpts{}) }},
			{"Spectrogram", func() gluon1 { return NewSpectrogram(SpectrogramOpts{NFFT: 512}) }},
		} {
			use := func() {
				b := c.make()
				nd.WithScope(func() []*nd.NDArray { b.Forward(x); return nil })
			}
			before := inUse(dev)
			use()
			first := inUse(dev) - before
			if first <= 0 {
				t.Fatalf("%s: its constants took %d bytes", c.name, first)
			}
			for range 50 {
				use()
			}
			if grown := inUse(dev) - before - first; grown != 0 {
				t.Errorf("%s: the first Block's constants take %d bytes; 50 more Blocks made, used and dropped %d more", c.name, first, grown)
			}
		}
		// Two live Blocks of the same options hold the same arrays.
		a, b := NewResample(48000, 16000, ResampleOpts{}), NewResample(48000, 16000, ResampleOpts{})
		if ka, kb := a.kernel.get(dev, nd.Float32), b.kernel.get(dev, nd.Float32); ka != kb {
			t.Error("two equal Resamples hold two copies of their filters")
		}
		if ka, kb := a.kernel.get(dev, nd.Float32), a.kernel.get(dev, nd.Float64); ka == kb || kb.DType() != nd.Float64 {
			t.Error("one copy for two dtypes")
		}
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		a, b = nil, nil
		if used := inUse(dev) - base; used <= 0 {
			t.Fatalf("%d bytes cached", used)
		}
		SetConstCacheLimit(0)
		if left := inUse(dev) - base; left != 0 {
			t.Errorf("with every Block dropped and the limit 0, %d bytes of constants are left", left)
		}
	})
}

// cacheBytes returns the bytes of the cached constants.
func cacheBytes() int64 {
	constCache.mu.Lock()
	defer constCache.mu.Unlock()
	return constCache.bytes
}

// gluon1 is what TestConstsShared needs of a Block.
type gluon1 interface{ Forward(*nd.NDArray) *nd.NDArray }

// TestConstsBounded: Blocks of ever new options (a Resample per rate
// pair) keep at most the cache's limit of constants nobody uses, and a
// live Block's constants are never released, whatever the limit.
func TestConstsBounded(t *testing.T) {
	dev := constTestDev
	const limit = 1 << 20
	withConstCache(t, limit, func() {
		x := nd.PersistentSession().Ones(dev, nd.Float32, 1, 800)
		defer x.Release()
		base := inUse(dev)
		live := NewResample(16000, 12000, ResampleOpts{})
		want := nd.WithScope(func() []*nd.NDArray { return []*nd.NDArray{live.Forward(x)} })[0]
		defer want.Release()
		liveUse := inUse(dev) - base
		liveK := int64(live.kernel.get(dev, nd.Float32).Size() * 4)
		peak := int64(0)
		for i := range 40 {
			r := NewResample(16000, 16100+100*i, ResampleOpts{}) // 161+i filters of 174 taps: ~110 KiB each
			nd.WithScope(func() []*nd.NDArray { r.Forward(x); return nil })
			// At r's insertion the Blocks before it were unreachable
			// (inUse collects them): the cache keeps the two live
			// Blocks' filters and at most limit bytes of the rest.
			cached := cacheBytes()
			if k := int64(r.kernel.get(dev, nd.Float32).Size() * 4); cached > limit+liveK+k {
				t.Fatalf("step %d: %d bytes cached, over the limit %d and the live filters %d and %d", i, cached, limit, liveK, k)
			}
			r = nil
			peak = max(peak, inUse(dev)-base)
		}
		if bound := liveUse + 2*limit; peak > bound {
			t.Errorf("40 Resamples of new rates, each dropped after use: %d bytes in use at the peak, over %d", peak, bound)
		}
		k := live.kernel.get(dev, nd.Float32)
		SetConstCacheLimit(0)
		if k.Released() {
			t.Fatal("the live Resample's filters were released")
		}
		got := nd.WithScope(func() []*nd.NDArray { return []*nd.NDArray{live.Forward(x)} })[0]
		defer got.Release()
		if g, w := got.Float32s(), want.Float32s(); len(g) != len(w) || g[10] != w[10] {
			t.Error("the live Resample's output changed")
		}
		runtime.KeepAlive(live)
	})
}

// TestConstsGrace: a constant used within the grace period is not
// released even when no Block holds it (the Block of a call such as
// NewResample(a, b, o).Forward(x) is unreachable while its product
// runs).
func TestConstsGrace(t *testing.T) {
	dev := constTestDev
	withConstCache(t, 0, func() {
		constGrace = time.Hour
		r := NewResample(22050, 16000, ResampleOpts{})
		k := r.kernel.get(dev, nd.Float32)
		r = nil
		runtime.GC()
		runtime.GC()
		SetConstCacheLimit(0)
		if k.Released() {
			t.Fatal("a constant used a moment ago was released")
		}
		constGrace = 0
		SetConstCacheLimit(0)
		if !k.Released() {
			t.Fatal("a constant nobody holds, past the grace period, is kept over the limit 0")
		}
	})
}

// TestResampleArray: the function form gives Resample's output, and
// calls of the same rates and options reuse one set of filters.
func TestResampleArray(t *testing.T) {
	dev := constTestDev
	withConstCache(t, defaultConstCacheLimit, func() {
		x := nd.PersistentSession().FromSlice(dev, []float32{0.5, -1, 0.25, 0.75, -0.5, 0.125, 1, -0.25, 0, 0.5, 0.3}, 1, 11)
		defer x.Release()
		o := ResampleOpts{Method: SincKaiser, ZeroBeta: true, Rolloff: 1.2}
		var want, got []float32
		nd.WithScope(func() []*nd.NDArray {
			want = NewResample(11025, 8000, o).Forward(x).Float32s()
			got = ResampleArray(x, 11025, 8000, o).Float32s()
			return nil
		})
		if len(got) != len(want) {
			t.Fatalf("%d samples, Resample %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("sample %d = %g, Resample %g", i, got[i], want[i])
			}
		}
		call := func() {
			nd.WithScope(func() []*nd.NDArray { ResampleArray(x, 44100, 16000, ResampleOpts{}); return nil })
		}
		before := inUse(dev)
		call()
		one := inUse(dev) - before
		for range 20 {
			call()
		}
		if grown := inUse(dev) - before; grown != one {
			t.Errorf("the first call took %d bytes, 20 more calls %d more", one, grown-one)
		}
		first := recentResample(44100, 16000, ResampleOpts{})
		if again := recentResample(88200, 32000, ResampleOpts{}); again != first {
			t.Error("the same reduced rates made new filters")
		}
		if y := ResampleArray(x, 8000, 8000, ResampleOpts{}); y != x {
			t.Error("equal rates: not the input")
		}
	})
}

// TestConstsConcurrent: goroutines making, using and dropping Resamples
// of a few rate pairs, with a cache too small to keep them and no grace
// period, share and release constants without a race (go test -race) and
// get the same outputs as one Block kept aside.
func TestConstsConcurrent(t *testing.T) {
	dev := constTestDev
	withConstCache(t, 64<<10, func() {
		x := nd.PersistentSession().FromSlice(dev, []float32{0.5, -1, 0.25, 0.75, -0.5, 0.125, 1, -0.25, 0, 0.5, 0.3, -0.7}, 1, 12)
		defer x.Release()
		rates := [][2]int{{16000, 8000}, {44100, 16000}, {8000, 11025}, {22050, 16000}}
		want := make([][]float32, len(rates))
		for i, r := range rates {
			nd.WithScope(func() []*nd.NDArray {
				want[i] = NewResample(r[0], r[1], ResampleOpts{}).Forward(x).Float32s()
				return nil
			})
		}
		errs := make(chan error, 8)
		for g := range 8 {
			go func() {
				var err error
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("goroutine %d: %v", g, p)
					}
					errs <- err
				}()
				func() {
					for i := range 30 {
						k := (g + i) % len(rates)
						var got []float32
						nd.WithScope(func() []*nd.NDArray {
							got = NewResample(rates[k][0], rates[k][1], ResampleOpts{}).Forward(x).Float32s()
							return nil
						})
						if !slices.Equal(got, want[k]) {
							err = fmt.Errorf("goroutine %d, step %d: %v, want %v", g, i, got, want[k])
							return
						}
						if i%10 == 0 {
							runtime.GC()
						}
					}
				}()
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}

package kvstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// TestAllReduceOrder: every way of summing buffers in place — the device
// store (the backend's one-pass collective on CPU contexts), the local
// store (through the host) and AllReduceOn with the buffers' own contexts
// as owners (reduce-scatter and all-gather by copies) — leaves in every
// buffer the sum ((b0 + b1) + b2) + ..., bitwise, and touches nothing
// outside the buffers (views at an offset).
func TestAllReduceOrder(t *testing.T) {
	type way struct {
		name string
		run  func(bufs []*nd.NDArray) error
	}
	var ways []way
	for _, kind := range []string{"device", "local"} {
		kv, err := kvstore.Create(kind)
		if err != nil {
			t.Fatal(err)
		}
		ways = append(ways, way{kind, kv.(kvstore.AllReducer).AllReduce})
	}
	ways = append(ways, way{"copies", func(bufs []*nd.NDArray) error {
		owners := make([]ctx.Context, len(bufs))
		for i, b := range bufs {
			owners[i] = b.Context()
		}
		return kvstore.AllReduceOn(bufs, owners)
	}})
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range ways {
		for _, tc := range []struct {
			n, off, devs int
			f64          bool
		}{{1, 0, 2, false}, {1000, 3, 3, false}, {100003, 0, 4, false}, {5001, 7, 2, true}} {
			t.Run(fmt.Sprintf("%s/n%d_off%d_ctx%d_f64=%v", w.name, tc.n, tc.off, tc.devs, tc.f64), func(t *testing.T) {
				data := make([][]float64, tc.devs)
				whole := make([]*nd.NDArray, tc.devs)
				bufs := make([]*nd.NDArray, tc.devs)
				for d := range data {
					data[d] = make([]float64, tc.off+tc.n+2)
					for i := range data[d] {
						data[d][i] = rng.NormFloat64() * float64(1+i%5)
					}
					whole[d] = nd.FromSlice(ctx.CPU(d), data[d])
					if !tc.f64 {
						whole[d] = whole[d].AsType(nd.Float32)
					}
					bufs[d] = whole[d].Span(tc.off, tc.off+tc.n)
				}
				if err := w.run(bufs); err != nil {
					t.Fatal(err)
				}
				for d := range whole {
					got := whole[d].AsType(nd.Float64).Float64s()
					for i, g := range got {
						want := data[d][i]
						if !tc.f64 {
							want = float64(float32(want))
						}
						if i >= tc.off && i < tc.off+tc.n {
							if tc.f64 {
								want = 0
								for k := range data {
									want += data[k][i]
								}
							} else {
								var s float32
								for k := range data {
									s += float32(data[k][i])
								}
								want = float64(s)
							}
						}
						if g != want {
							t.Fatalf("cpu(%d) element %d: %v, want %v", d, i, g, want)
						}
					}
				}
			})
		}
	}
}

// TestAllReduceOnBytes: the reduction by copies (reduce-scatter, then
// all-gather) moves into each context at most 2(N−1)/N of a buffer.
func TestAllReduceOnBytes(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		const size = 10007
		bufs := make([]*nd.NDArray, n)
		owners := make([]ctx.Context, n)
		for d := range bufs {
			owners[d] = ctx.CPU(d)
			bufs[d] = nd.Ones(owners[d], nd.Float32, size)
		}
		before := make([]nd.DeviceStats, n)
		for d := range bufs {
			before[d] = nd.Counters(owners[d])
		}
		if err := kvstore.AllReduceOn(bufs, owners); err != nil {
			t.Fatal(err)
		}
		limit := 2*(n-1)*size*4/n + 2*(n-1)*4 // parts may be one element longer
		for d := range bufs {
			got := int(nd.Counters(owners[d]).Sub(before[d]).BytesIn)
			if got > limit || got <= 0 {
				t.Errorf("%d contexts: cpu(%d) received %d bytes, want 1 to %d", n, d, got, limit)
			}
			if v := bufs[d].Float32s(); v[0] != float32(n) || v[size-1] != float32(n) {
				t.Errorf("%d contexts: cpu(%d) holds %v…%v, want %d", n, d, v[0], v[size-1], n)
			}
		}
	}
}

// TestAllReduceRejectsSharedContexts: two buffers on one context (two
// arrays, or two views of one) are an error, not a sum.
func TestAllReduceRejectsSharedContexts(t *testing.T) {
	kv, err := kvstore.Create("device")
	if err != nil {
		t.Fatal(err)
	}
	a := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4})
	b := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, 4})
	for name, bufs := range map[string][]*nd.NDArray{
		"two arrays": {a, b}, "one array twice": {a, a}, "overlapping views": {a.Span(0, 3), a.Span(1, 4)},
	} {
		if err := kv.(kvstore.AllReducer).AllReduce(bufs); err == nil {
			t.Errorf("%s on cpu(0): no error", name)
		}
	}
	if got := a.Float32s(); got[0] != 1 || got[3] != 4 {
		t.Errorf("a refused reduction changed the buffer: %v", got)
	}
}

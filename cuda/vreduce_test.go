//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// virtualGPUs returns the GPU contexts that are virtual GPUs of gpu(0)'s
// card, gpu(0) first.
func virtualGPUs() []ctx.Context {
	if ctx.NumGPUs() == 0 {
		return nil
	}
	var out []ctx.Context
	for i := range ctx.NumGPUs() {
		if physicalOf(ctx.GPU(i)) == physicalOf(ctx.GPU(0)) {
			out = append(out, ctx.GPU(i))
		}
	}
	return out
}

// TestVirtualAllReduce: buffers on virtual GPUs of one card are summed by
// one kernel, in the order given, bitwise as a fixed-order float sum on
// the host, into every buffer (views at an offset included); work queued
// on each GPU afterwards sees the sum. Sets the kernel does not take are
// declined.
func TestVirtualAllReduce(t *testing.T) {
	gpus := virtualGPUs()
	if len(gpus) < 2 {
		t.Skip("needs 2 virtual GPUs of one card (GOLUON_VIRTUAL_GPUS=2 or more)")
	}
	if vreduceOff {
		t.Skipf("%s=0", VReduceEnv)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		n, off, devs int
		f64          bool
	}{
		{1, 0, 2, false}, {1000, 0, len(gpus), false}, {777, 13, min(3, len(gpus)), false},
		{4099, 5, len(gpus), true}, {70000, 0, len(gpus), false},
	} {
		t.Run(fmt.Sprintf("n%d_off%d_gpus%d_f64=%v", tc.n, tc.off, tc.devs, tc.f64), func(t *testing.T) {
			data := make([][]float64, tc.devs)
			bufs := make([]*nd.NDArray, tc.devs)
			whole := make([]*nd.NDArray, tc.devs)
			for d := range data {
				data[d] = make([]float64, tc.off+tc.n)
				for i := range data[d] {
					data[d][i] = rng.NormFloat64() * float64(1+i%7)
				}
				if tc.f64 {
					whole[d] = nd.FromSlice(gpus[d], data[d])
				} else {
					f := make([]float32, len(data[d]))
					for i, v := range data[d] {
						f[i] = float32(v)
					}
					whole[d] = nd.FromSlice(gpus[d], f)
				}
				bufs[d] = whole[d].Span(tc.off, tc.off+tc.n)
			}
			done, err := nd.LibraryAllReduce(bufs)
			if err != nil || !done {
				t.Fatalf("done %v, error %v; want the kernel's sum", done, err)
			}
			// Work queued on each GPU after the sum must see it.
			doubled := make([]*nd.NDArray, tc.devs)
			for d := range bufs {
				doubled[d] = nd.MulScalar(whole[d], 2)
			}
			for d := range bufs {
				var got []float64
				if tc.f64 {
					got = doubled[d].Float64s()
				} else {
					for _, v := range doubled[d].Float32s() {
						got = append(got, float64(v))
					}
				}
				for i := range tc.off + tc.n {
					var want float64
					switch {
					case i < tc.off:
						want = data[d][i]
						if !tc.f64 {
							want = float64(float32(want))
						}
					case tc.f64:
						for k := range data {
							want += data[k][i]
						}
					default:
						var s float32
						for k := range data {
							s += float32(data[k][i])
						}
						want = float64(s)
					}
					if got[i] != 2*want {
						t.Fatalf("gpu %d element %d: %v, want %v (bitwise)", d, i, got[i]/2, want)
					}
				}
			}
			for d := range bufs {
				bufs[d].Release()
				whole[d].Release()
				doubled[d].Release()
			}
		})
	}
	a := nd.Ones(gpus[0], nd.Float32, 4)
	c := nd.Ones(gpus[0], nd.Float32, 4)
	ai := nd.FromSlice(gpus[0], []int32{1, 1, 1, 1})
	i := nd.FromSlice(gpus[1], []int32{1, 1, 1, 1})
	for name, set := range map[string][]*nd.NDArray{"one context twice": {a, c}, "int32": {ai, i}} {
		if done, err := nd.LibraryAllReduce(set); done || err != nil {
			t.Errorf("%s: done %v, error %v; want declined", name, done, err)
		}
	}
	if got := a.Float32s(); !slices.Equal(got, []float32{1, 1, 1, 1}) {
		t.Errorf("a declined set changed its buffers: %v", got)
	}
}

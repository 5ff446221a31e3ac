//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func ramp(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%1000) * 0.25
	}
	return v
}

// TestCopyBetweenContexts moves an array host -> gpu(0) -> gpu(1) -> host
// (gpu(1) when there are two GPUs), with and without dtype changes and
// with strided views, and checks the values survive.
func TestCopyBetweenContexts(t *testing.T) {
	needGPUs(t, 1)
	s := nd.NewScope()
	defer s.Close()
	want := ramp(100003)
	a := nd.FromSlice(ctx.GPU(0), want, 100003)
	other := ctx.CPU(0)
	if ctx.NumGPUs() >= 2 {
		other = ctx.GPU(1)
	}
	b := a.CopyTo(other)
	if got := b.Float32s(); !slices.Equal(got, want) {
		t.Fatalf("gpu(0) -> %v: values differ", other)
	}
	c := b.CopyTo(ctx.GPU(0))
	if got := c.Float32s(); !slices.Equal(got, want) {
		t.Fatalf("%v -> gpu(0): values differ", other)
	}
	d := nd.Full(other, nd.Float64, 0, 100003)
	nd.Assign(d, a) // across contexts and dtypes
	for i, v := range d.Float64s() {
		if v != float64(want[i]) {
			t.Fatalf("Assign float32 gpu(0) -> float64 %v: [%d] = %g, want %g", other, i, v, want[i])
		}
	}
	tr := nd.Transpose(nd.Reshape(nd.SliceAxis(a, 0, 600, 0), 20, 30), 1, 0).CopyTo(other)
	got := tr.Float32s()
	for i := 0; i < 30; i++ {
		for j := 0; j < 20; j++ {
			if got[i*20+j] != want[j*30+i] {
				t.Fatalf("transpose copied to %v: [%d,%d] = %g, want %g", other, i, j, got[i*20+j], want[j*30+i])
			}
		}
	}
}

// TestVirtualGPUsCannotMix checks that an op on arrays of two GPU contexts
// fails up front with a context error, even when both are virtual GPUs on
// one physical device.
func TestVirtualGPUsCannotMix(t *testing.T) {
	needGPUs(t, 2)
	s := nd.NewScope()
	defer s.Close()
	a := nd.Ones(ctx.GPU(0), nd.Float32, 4)
	b := nd.Ones(ctx.GPU(1), nd.Float32, 4)
	err := nd.Catch(func() { nd.Add(a, b) })
	if err == nil || !errors.Is(err, &nd.Error{Kind: nd.ErrContext}) {
		t.Fatalf("Add(gpu(0), gpu(1)) gave %v, want a context mismatch error", err)
	}
	if got := nd.Add(a, b.CopyTo(ctx.GPU(0))).Float32s(); !slices.Equal(got, []float32{2, 2, 2, 2}) {
		t.Errorf("after CopyTo: %v", got)
	}
}

// TestStreamOrder queues many dependent in-place ops and reads the result:
// the read must wait for all of them.
func TestStreamOrder(t *testing.T) {
	needGPUs(t, 1)
	s := nd.NewScope()
	defer s.Close()
	x := nd.Zeros(ctx.GPU(0), nd.Float32, 1<<20)
	one := nd.Ones(ctx.GPU(0), nd.Float32, 1<<20)
	for range 500 {
		nd.AddTo(x, one)
	}
	for i, v := range x.Float32s() {
		if v != 500 {
			t.Fatalf("[%d] = %g, want 500", i, v)
		}
	}
}

// TestDevicesConcurrently runs independent work on every GPU context from
// its own goroutine, as a multi-device training step does.
func TestDevicesConcurrently(t *testing.T) {
	needGPUs(t, 1)
	n := min(ctx.NumGPUs(), 4)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nd.Catch(func() {
				dev := ctx.GPU(i)
				x := nd.Full(dev, nd.Float32, float64(i+1), 256, 256)
				defer x.Release()
				var y *nd.NDArray
				for range 20 {
					y = nd.MatMul(x, x)
					y.Release()
				}
				y = nd.Sum(nd.MatMul(x, x))
				defer y.Release()
				want := float64((i+1)*(i+1)) * 256 * 256 * 256
				if got := y.Scalar(); got != want {
					panic(&nd.Error{Op: "test", Kind: nd.ErrArgument, Msg: "wrong sum"})
				}
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("gpu(%d): %v", i, err)
		}
	}
}

// TestWriteStaging writes several large arrays back to back (through the
// two page-locked staging buffers, each reused before the GPU may have
// read it) and a small one between, then reads them all back.
func TestWriteStaging(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	s := nd.NewScope()
	defer s.Close()
	const n = 100_000 // 400 KB: above pinnedMin
	var arrays []*nd.NDArray
	host := make([]float32, n)
	for i := range 8 {
		for j := range host {
			host[j] = float32(i*n + j)
		}
		arrays = append(arrays, nd.FromSlice(dev, host, n)) // host is reused at once
		if i == 3 {
			arrays = append(arrays, nd.FromSlice(dev, []float32{-1, -2}, 2))
		}
	}
	for i, a := range arrays {
		got := a.Float32s()
		if len(got) == 2 {
			if got[0] != -1 || got[1] != -2 {
				t.Errorf("small array = %v", got)
			}
			continue
		}
		k := i
		if i > 3 {
			k = i - 1
		}
		for j, v := range got {
			if v != float32(k*n+j) {
				t.Fatalf("array %d [%d] = %v, want %v", k, j, v, float32(k*n+j))
			}
		}
	}
}

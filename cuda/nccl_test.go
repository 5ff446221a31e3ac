//go:build cuda || cudaemu

package cuda

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestNCCLSmoke: where NCCL loads, a one-rank communicator on gpu(0) sums
// a buffer with itself alone (the values stay).
func TestNCCLSmoke(t *testing.T) {
	if ctx.NumGPUs() < 1 {
		t.Skip("no GPU context")
	}
	path, version, err := NCCLPath()
	if err != nil {
		t.Skipf("NCCL not available: %v", err)
	}
	t.Logf("NCCL %d from %s", version, path)
	want := []float32{1, -2, 3.5, 4}
	a := nd.FromSlice(ctx.GPU(0), want)
	ok, err := nd.LibraryAllReduce([]*nd.NDArray{a})
	if err != nil || !ok {
		t.Fatalf("one-rank all-reduce: done %v, error %v", ok, err)
	}
	if got := a.Float32s(); !slices.Equal(got, want) {
		t.Fatalf("one-rank all-reduce changed the values: %v, want %v", got, want)
	}
}

// physicalOf returns the physical device behind dev.
func physicalOf(dev ctx.Context) *physical {
	d, err := defaultBackend.device(dev)
	if err != nil {
		return nil
	}
	return d.phys
}

//go:build cuda || cudaemu

package cuda

import (
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// TestMemoryFlatLeNet trains LeNet with a Trainer on gpu(0) for 1,000 steps
// (100 with -short) and checks that the allocator's in-use and allocated
// bytes after the last step equal those after step 10: no step leaks a
// block or grows the pool.
func TestMemoryFlatLeNet(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	run, err := traintest.NewStep(modelzoo.LeNet(), optimizer.NewSGD(0.05), []int{32, 1, 28, 28}, []ctx.Context{dev})
	if err != nil {
		t.Fatal(err)
	}
	step := func() {
		if err := run(); err != nil {
			t.Fatal(err)
		}
	}
	steps := 1000
	if testing.Short() {
		steps = 100
	}
	for range 10 {
		step()
	}
	if err := Synchronize(dev); err != nil {
		t.Fatal(err)
	}
	at10 := nd.MemoryStats(dev)
	for range steps - 10 {
		step()
	}
	if err := Synchronize(dev); err != nil {
		t.Fatal(err)
	}
	atEnd := nd.MemoryStats(dev)
	if atEnd.InUse != at10.InUse || atEnd.Allocated != at10.Allocated {
		t.Errorf("memory grew: after 10 steps %+v, after %d %+v", at10, steps, atEnd)
	}
	t.Logf("after 10 steps %+v; after %d %+v", at10, steps, atEnd)
}

// TestAllocLargerThanDevice asks for 1 TiB, more than any GPU has: the
// error names the requested and free bytes, nothing stays allocated, and
// the next op on the device works.
func TestAllocLargerThanDevice(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	before := nd.MemoryStats(dev)
	err := nd.Catch(func() { nd.Empty(dev, nd.Float32, 1<<38) })
	if err == nil {
		t.Fatal("a 1 TiB array was allocated")
	}
	for _, want := range []string{"out of memory", "requested 1099511627776 bytes", "bytes free of"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	t.Logf("error: %v", err)
	if after := nd.MemoryStats(dev); after.InUse != before.InUse {
		t.Errorf("in-use bytes %d before, %d after the failed allocation", before.InUse, after.InUse)
	}
	s := nd.NewScope()
	defer s.Close()
	x := nd.FromSlice(dev, []float32{1, 2, 3}, 3)
	if got := nd.Add(x, x).Float32s(); !slices.Equal(got, []float32{2, 4, 6}) {
		t.Errorf("after the failed allocation x+x = %v", got)
	}
	if err := Synchronize(dev); err != nil {
		t.Errorf("device error after the failed allocation: %v", err)
	}
}

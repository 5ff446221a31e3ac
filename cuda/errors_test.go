//go:build cuda || cudaemu

package cuda

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/backend"
)

// TestLaunchErrors checks how failures surface: a launch whose parameters
// do not match the kernel's PTX signature fails at once, and a launch the
// driver rejects (2048 threads per block) is reported by the next call on
// the device as an ErrDevice error, after which the device still works.
func TestLaunchErrors(t *testing.T) {
	needGPUs(t, 1)
	dev := ctx.GPU(0)
	b := Default()
	d, err := b.device(dev)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := b.Alloc(dev, backend.Float32, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free(dev, buf)

	var short args
	short.ptr(backend.Arg{Buf: buf})
	err = nd.Catch(func() { d.launch("Test", "fill_f32", 16, 0, 0, 0, &short) })
	if err == nil || !errors.Is(err, &nd.Error{Kind: nd.ErrDevice}) || !strings.Contains(err.Error(), "takes 3 parameters") {
		t.Errorf("launch with a missing parameter: %v", err)
	}

	var a args
	a.ptr(backend.Arg{Buf: buf})
	a.i64(16)
	a.f64(1)
	err = nd.Catch(func() { d.launch("Test", "fill_f32", 0, 1, 2048, 0, &a) })
	if err == nil { // queued: the failure comes with the next call
		err = Synchronize(dev)
	}
	if err == nil {
		t.Fatal("a launch of 2048 threads per block did not fail")
	}
	t.Logf("reported: %v", err)
	if got := nd.Ones(dev, nd.Float32, 3).Float32s(); !slices.Equal(got, []float32{1, 1, 1}) {
		t.Errorf("device after a failed launch: %v", got)
	}
}

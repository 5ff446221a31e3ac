//go:build mpi

package dist_test

import (
	"os"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi/mpitest"
	"github.com/goluon/goluon/nd"
)

// TestStore runs the store checks on 4 workers with 2 contexts each.
func TestStore(t *testing.T) {
	mpitest.Run(t, 4, "TestStoreWorker", nil).Check(t, 4, "TestStoreWorker")
}

func TestStoreWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestStore")
	}
	defer dist.Finalize()
	kv, err := dist.New(dist.Options{FusionBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	rank, size := kv.Rank(), kv.NumWorkers()
	if size != 4 || kv.Type() != "dist_sync" {
		t.Fatalf("rank %d of %d, kind %s", rank, size, kv.Type())
	}
	var _ kvstore.Distributed = kv
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	r := float32(rank)
	// Keys a, c, e, f are float32 and b float64. With a 64-byte fusion
	// cap the buffers are [a] (then the dtype changes), [b], [c e] (32+32
	// bytes) and [f] (a third 32-byte key would pass the cap).
	keys := []string{"a", "b", "c", "e", "f"}
	shapes := [][]int{{2, 4}, {3}, {8}, {8}, {1}}
	var init []*nd.NDArray
	for i, k := range keys {
		dt := nd.Float32
		if k == "b" {
			dt = nd.Float64
		}
		init = append(init, nd.Full(devs[0], dt, float64(10*(i+1)+rank), shapes[i]...))
	}
	if err := kv.Init(keys, init); err != nil {
		t.Fatal(err)
	}
	t.Run("init broadcasts rank 0", func(t *testing.T) {
		for i, k := range keys {
			out := nd.ZerosLike(init[i])
			if err := kv.Pull(k, []*nd.NDArray{out}); err != nil {
				t.Fatal(err)
			}
			want := float64(10 * (i + 1)) // rank 0's value
			for _, v := range out.Float64s() {
				if v != want {
					t.Fatalf("key %s pulled %v, want rank 0's %v", k, v, want)
				}
			}
		}
	})
	t.Run("push sums devices and workers", func(t *testing.T) {
		values := make([][]*nd.NDArray, len(keys))
		outs := make([][]*nd.NDArray, len(keys))
		for i := range keys {
			for d, dev := range devs {
				v := nd.Full(dev, init[i].DType(), float64(r+1)*float64(d+1)*float64(i+1), init[i].Shape()...)
				values[i] = append(values[i], v)
				outs[i] = append(outs[i], nd.ZerosLike(v))
			}
		}
		before := kv.Stats()
		global, err := kv.BeginStep(keys, 5+rank)
		if err != nil {
			t.Fatal(err)
		}
		if global != 5*4+6 {
			t.Errorf("global batch %d, want 26", global)
		}
		if err := kv.PushPullList(keys, values, outs); err != nil {
			t.Fatal(err)
		}
		after := kv.Stats()
		// Σ_rank Σ_dev (rank+1)(dev+1)(i+1) = 10 · 3 · (i+1).
		for i := range keys {
			for d, o := range outs[i] {
				for _, v := range o.Float64s() {
					if want := float64(30 * (i + 1)); v != want {
						t.Fatalf("key %s device %d: %v, want %v", keys[i], d, v, want)
					}
				}
			}
		}
		if got := after.Controls - before.Controls; got != 1 {
			t.Errorf("%d control exchanges for BeginStep+PushPullList, want 1", got)
		}
		if got := after.Allreduces - before.Allreduces; got != 4 {
			t.Errorf("%d allreduces for 5 keys in fusion buffers [a] [b] [c e] [f], want 4", got)
		}
	})
	t.Run("updater", func(t *testing.T) {
		kv.SetUpdater(func(key string, merged, stored *nd.NDArray) {
			nd.AddTo(stored, merged) // stored += Σ
		})
		defer kv.SetUpdater(nil)
		v := nd.Full(devs[1], nd.Float32, 1, 8)
		if err := kv.Push("c", []*nd.NDArray{v}); err != nil {
			t.Fatal(err)
		}
		out := nd.ZerosLike(v)
		if err := kv.Pull("c", []*nd.NDArray{out}); err != nil {
			t.Fatal(err)
		}
		if got := out.Float32s()[0]; got != 90+4 { // 30·3 from the last push, + 4 workers × 1
			t.Errorf("c after updater: %v, want 94", got)
		}
	})
	t.Run("workers disagreeing on keys fail everywhere", func(t *testing.T) {
		ks := []string{"a", "c"}
		if rank == 1 {
			ks = []string{"c", "a"}
		}
		_, err := kv.BeginStep(ks, 1)
		if err == nil || !strings.Contains(err.Error(), "workers disagree") {
			t.Fatalf("mismatched keys: %v", err)
		}
		// The store is still usable afterwards.
		if _, err := kv.BeginStep([]string{"a"}, 1); err != nil {
			t.Fatal(err)
		}
		if err := kv.Push("a", []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 2, 4)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("mismatched shapes fail everywhere", func(t *testing.T) {
		shape := []int{4}
		if rank == 3 {
			shape = []int{5}
		}
		err := kv.Init([]string{"d"}, []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, shape...)})
		if err == nil || !strings.Contains(err.Error(), "workers disagree") {
			t.Fatalf("mismatched shapes: %v", err)
		}
	})
	t.Run("local errors", func(t *testing.T) {
		if err := kv.Push("nope", []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 1)}); err == nil {
			t.Error("push of an unknown key succeeded")
		}
		if err := kv.Push("a", []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 3)}); err == nil || !strings.Contains(err.Error(), "shape") {
			t.Errorf("push of a wrong shape: %v", err)
		}
	})
	t.Run("dist_device_sync sums on the device", func(t *testing.T) {
		dkv, err := kvstore.Create(dist.DeviceKind)
		if err != nil {
			t.Fatal(err)
		}
		if dkv.Type() != dist.DeviceKind {
			t.Fatalf("type %q", dkv.Type())
		}
		if err := dkv.Init([]string{"w"}, []*nd.NDArray{nd.Zeros(devs[1], nd.Float32, 3)}); err != nil {
			t.Fatal(err)
		}
		out := nd.Zeros(devs[0], nd.Float32, 3)
		vals := []*nd.NDArray{nd.Full(devs[1], nd.Float32, float64(rank), 3), nd.Ones(devs[0], nd.Float32, 3)}
		if err := dkv.PushPull("w", vals, []*nd.NDArray{out}); err != nil {
			t.Fatal(err)
		}
		if got := out.Float32s(); got[0] != 6+4 || got[2] != 10 { // Σ rank + 4 × 1
			t.Errorf("dist_device_sync sum %v, want 10s", got)
		}
	})
	if err := kv.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestSingleProcess: started without mpirun, dist_sync is a world of one
// and behaves like local.
func TestSingleProcess(t *testing.T) {
	if mpitest.Worker() {
		t.Skip("not under mpirun")
	}
	if os.Getenv("GOLUON_TEST_SINGLETON") == "" {
		// MPI can be initialised once per process: run in a child.
		r := mpitest.RunSingle(t, "TestSingleProcess", []string{"GOLUON_TEST_SINGLETON=1"})
		if r.Err != nil || !strings.Contains(r.Output, "--- PASS: TestSingleProcess (") {
			t.Fatalf("singleton run failed: %v\n%s", r.Err, r.Output)
		}
		return
	}
	kv, err := kvstore.Create("dist_sync")
	if err != nil {
		t.Fatal(err)
	}
	defer dist.Finalize()
	if kv.Rank() != 0 || kv.NumWorkers() != 1 {
		t.Fatalf("rank %d of %d", kv.Rank(), kv.NumWorkers())
	}
	if err := kv.Init([]string{"w"}, []*nd.NDArray{nd.Ones(ctx.CPU(0), nd.Float32, 3)}); err != nil {
		t.Fatal(err)
	}
	out := nd.Zeros(ctx.CPU(1), nd.Float32, 3)
	if err := kv.PushPull("w", []*nd.NDArray{nd.Ones(ctx.CPU(0), nd.Float32, 3), nd.Ones(ctx.CPU(1), nd.Float32, 3)}, []*nd.NDArray{out}); err != nil {
		t.Fatal(err)
	}
	if got := out.Float32s(); got[0] != 2 || got[2] != 2 {
		t.Errorf("pushpull: %v, want 2s", got)
	}
}

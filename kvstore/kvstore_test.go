package kvstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

func devices(n int) []ctx.Context {
	out := make([]ctx.Context, n)
	for i := range out {
		out[i] = ctx.CPU(i)
	}
	return out
}

// perDevice returns one array per device, value i+1 everywhere on device i
// plus a small ramp so that element order matters.
func perDevice(devs []ctx.Context, n int) []*nd.NDArray {
	out := make([]*nd.NDArray, len(devs))
	for i, d := range devs {
		v := make([]float32, n)
		for j := range v {
			v[j] = float32(i+1) + float32(j)*0.001
		}
		out[i] = nd.FromSlice(d, v)
	}
	return out
}

func TestPushPullSums(t *testing.T) {
	for _, kind := range []string{"local", "device"} {
		for _, ndev := range []int{1, 2, 4} {
			t.Run(kind+"/"+string(rune('0'+ndev)), func(t *testing.T) {
				kv, err := kvstore.Create(kind)
				if err != nil {
					t.Fatal(err)
				}
				devs := devices(ndev)
				vals := perDevice(devs, 5)
				if err := kv.Init([]string{"w"}, []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 5)}); err != nil {
					t.Fatal(err)
				}
				outs := make([]*nd.NDArray, ndev)
				for i, d := range devs {
					outs[i] = nd.Zeros(d, nd.Float32, 5)
				}
				if err := kv.PushPull("w", vals, outs); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, 5)
				for i := range devs {
					for j := range want {
						want[j] += float32(i+1) + float32(j)*0.001
					}
				}
				for i, o := range outs {
					if o.Context() != devs[i] {
						t.Errorf("output %d moved to %v", i, o.Context())
					}
					if got := o.Float32s(); !slices.Equal(got, want) {
						t.Errorf("device %d: got %v, want %v", i, got, want)
					}
				}
			})
		}
	}
}

// TestSumOrderIsFixed checks that sums are bitwise identical across runs
// and between the local and device kinds, with values chosen so that a
// different order gives a different float32 result.
func TestSumOrderIsFixed(t *testing.T) {
	devs := devices(3)
	vals := []*nd.NDArray{
		nd.FromSlice(devs[0], []float32{1e8}),
		nd.FromSlice(devs[1], []float32{1}),
		nd.FromSlice(devs[2], []float32{-1e8}),
	}
	// (1e8 + 1) - 1e8 = 0 in float32; 1e8 + (1 - 1e8) = 0 too, but
	// (1e8 - 1e8) + 1 = 1: the fixed order must give 0 every time.
	var results []float32
	for _, kind := range []string{"local", "device", "local", "device"} {
		kv, _ := kvstore.Create(kind)
		if err := kv.Init([]string{"k"}, []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 1)}); err != nil {
			t.Fatal(err)
		}
		out := []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 1)}
		if err := kv.PushPull("k", vals, out); err != nil {
			t.Fatal(err)
		}
		results = append(results, out[0].Float32s()[0])
	}
	for _, r := range results {
		if r != 0 {
			t.Fatalf("sums %v: want ((v0+v1)+v2) = 0 for every run and kind", results)
		}
	}
}

// TestDevicePlacementBalances checks that the device kind spreads merge
// buffers over the devices, largest keys first, each to the least-loaded
// device, by watching where memory is taken.
func TestDevicePlacementBalances(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(20), ctx.CPU(21)} // contexts no other test uses
	kv, _ := kvstore.Create("device")
	sizes := map[string]int{"a": 128, "b": 64, "c": 56, "d": 16}
	keys := []string{"d", "c", "b", "a"}
	var init []*nd.NDArray
	for _, k := range keys {
		init = append(init, nd.Zeros(devs[0], nd.Float32, sizes[k]))
	}
	if err := kv.Init(keys, init); err != nil {
		t.Fatal(err)
	}
	vals := map[string][]*nd.NDArray{}
	for _, k := range keys {
		vals[k] = []*nd.NDArray{nd.Ones(devs[0], nd.Float32, sizes[k]), nd.Ones(devs[1], nd.Float32, sizes[k])}
	}
	before := nd.MemoryStats(devs[1]).InUse
	if err := kv.Push("a", vals["a"]); err != nil { // the first push places every key
		t.Fatal(err)
	}
	// Largest first onto the least-loaded device: a→0 (128), b→1 (64),
	// c→1 (56; 64 < 128), d→1 (16; 120 < 128). cpu(21) gains b, c and d.
	if got, want := nd.MemoryStats(devs[1]).InUse-before, int64(4*(64+56+16)); got != want {
		t.Errorf("device 1 took %d bytes of merge buffers, want %d (b, c and d)", got, want)
	}
	for _, k := range keys {
		if err := kv.Push(k, vals[k]); err != nil {
			t.Fatal(err)
		}
		out := []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, sizes[k])}
		if err := kv.Pull(k, out); err != nil {
			t.Fatal(err)
		}
		if got := out[0].Float32s(); got[0] != 2 || got[sizes[k]-1] != 2 {
			t.Errorf("%s: got %v…, want 2", k, got[:1])
		}
	}
}

func TestUpdater(t *testing.T) {
	kv, _ := kvstore.Create("local")
	dev := ctx.CPU(0)
	if err := kv.Init([]string{"w"}, []*nd.NDArray{nd.FromSlice(dev, []float32{10, 20})}); err != nil {
		t.Fatal(err)
	}
	kv.SetUpdater(func(key string, merged, stored *nd.NDArray) {
		nd.AddTo(stored, nd.MulScalar(merged, -0.5)) // stored -= 0.5·merged
	})
	grads := []*nd.NDArray{nd.FromSlice(dev, []float32{1, 2}), nd.FromSlice(ctx.CPU(1), []float32{3, 4})}
	out := []*nd.NDArray{nd.Zeros(dev, nd.Float32, 2), nd.Zeros(ctx.CPU(1), nd.Float32, 2)}
	if err := kv.PushPull("w", grads, out); err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if got := o.Float32s(); !slices.Equal(got, []float32{8, 17}) {
			t.Errorf("out %d = %v, want [8 17]", i, got)
		}
	}
}

func TestErrors(t *testing.T) {
	dev := ctx.CPU(0)
	kv, _ := kvstore.Create("device")
	if err := kv.Init([]string{"w"}, []*nd.NDArray{nd.Zeros(dev, nd.Float32, 3)}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, want string
		err        error
	}{
		{"unknown kind", "unknown kind", func() error { _, err := kvstore.Create("nccl-ish"); return err }()},
		{"init twice", "twice", kv.Init([]string{"w"}, []*nd.NDArray{nd.Zeros(dev, nd.Float32, 3)})},
		{"keys vs values", "2 keys but 1 values", kv.Init([]string{"x", "y"}, []*nd.NDArray{nd.Zeros(dev, nd.Float32, 3)})},
		{"push unknown", "never initialised", kv.Push("nope", []*nd.NDArray{nd.Zeros(dev, nd.Float32, 3)})},
		{"push shape", "shape [4]", kv.Push("w", []*nd.NDArray{nd.Zeros(dev, nd.Float32, 4)})},
		{"push nothing", "no values", kv.Push("w", nil)},
		{"pull shape", "shape [2]", kv.Pull("w", []*nd.NDArray{nd.Zeros(dev, nd.Float32, 2)})},
		{"push dtype", "float64 shape [3]", kv.Push("w", []*nd.NDArray{nd.Zeros(dev, nd.Float64, 3)})},
		{"push nil", "value 1 is nil", kv.Push("w", []*nd.NDArray{nd.Zeros(dev, nd.Float32, 3), nil})},
		{"init nil", "nil value", kv.Init([]string{"v"}, []*nd.NDArray{nil})},
		{"pull nil", "output 0 is nil", kv.Pull("w", []*nd.NDArray{nil})},
		{"all-reduce 2-D", "one-dimensional", kv.(kvstore.AllReducer).AllReduce([]*nd.NDArray{nd.Zeros(dev, nd.Float32, 2, 2), nd.Zeros(ctx.CPU(1), nd.Float32, 2, 2)})},
		{"all-reduce dtypes", "buffer 1 is float64", kv.(kvstore.AllReducer).AllReduce([]*nd.NDArray{nd.Zeros(dev, nd.Float32, 4), nd.Zeros(ctx.CPU(1), nd.Float64, 4)})},
		{"all-reduce nothing", "no buffers", kv.(kvstore.AllReducer).AllReduce(nil)},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", c.name, c.err, c.want)
		}
	}
	if k := kvstore.Kinds(); !slices.Contains(k, "local") || !slices.Contains(k, "device") {
		t.Errorf("Kinds() = %v", k)
	}
}

func TestUnknownDistKindSaysWhatToImport(t *testing.T) {
	_, err := kvstore.Create("dist_async")
	if err == nil || !strings.Contains(err.Error(), "kvstore/dist") {
		t.Fatalf("Create(dist_async): %v", err)
	}
}

// TestBeginStepSingleProcess: the single-process kinds take part in the
// step handshake and return the batch as the global batch.
func TestBeginStepSingleProcess(t *testing.T) {
	for _, kind := range []string{"local", "device"} {
		kv, err := kvstore.Create(kind)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := kv.BeginStep([]string{"w"}, 32); err != nil || g != 32 {
			t.Errorf("%s: BeginStep(32) = %d, %v; want 32", kind, g, err)
		}
		if kvstore.InitDiffered(kv) {
			t.Errorf("%s: InitDiffered on a single-process kind", kind)
		}
	}
}

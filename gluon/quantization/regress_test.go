package quantization_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// Regression tests from the review of dynamic quantization: corrupt
// files, shared layers with Skip, hybridized Dense layers.

// TestQuantizeReviewLoadCorrupt: a saved quantized network (per-channel, a
// LayerNorm's float parameters between the layers) with one thing wrong in
// the file: Load returns an error, and the network computes exactly what
// it did before (nothing half-loaded).
func TestQuantizeReviewLoadCorrupt(t *testing.T) {
	build := func(seed uint64) *nn.Sequential {
		net := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 10, Act: "relu"}),
			nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 16}), nn.NewDense(4, nn.DenseOpts{InUnits: 16}))
		initNet(t, net, seed)
		if _, err := quantization.QuantizeDynamic(net, quantization.Opts{PerChannel: true}); err != nil {
			t.Fatal(err)
		}
		return net
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "q.safetensors")
	if err := quantization.Save(build(1), path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	good, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tensors: %v", good.Names())
	f32 := func(v ...float32) safetensors.Tensor { return safetensors.FromFloat32([]int{len(v)}, v) }
	edit := func(f func(m map[string]safetensors.Tensor)) func() string {
		return func() string {
			m := map[string]safetensors.Tensor{}
			for k, v := range good.Tensors {
				m[k] = v
			}
			f(m)
			p := filepath.Join(dir, fmt.Sprintf("bad%d.safetensors", len(m)+int(time.Now().UnixNano()%1000000)))
			if err := safetensors.WriteFile(p, &safetensors.File{Tensors: m}); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	nan := float32(math.NaN())
	cases := map[string]func() string{
		"truncated": func() string {
			p := filepath.Join(dir, "trunc.safetensors")
			os.WriteFile(p, raw[:len(raw)-7], 0o644)
			return p
		},
		"header-garbage": func() string {
			p := filepath.Join(dir, "garbage.safetensors")
			b := append([]byte(nil), raw...)
			copy(b[8:], "{{{{")
			os.WriteFile(p, b, 0o644)
			return p
		},
		"weight-u8": edit(func(m map[string]safetensors.Tensor) {
			w := m["dense0.weight"]
			w.DType = "U8"
			m["dense0.weight"] = w
		}),
		"weight-flat": edit(func(m map[string]safetensors.Tensor) {
			w := m["dense0.weight"]
			w.Shape = []int{w.Shape[0] * w.Shape[1]}
			m["dense0.weight"] = w
		}),
		"weight-transposed": edit(func(m map[string]safetensors.Tensor) {
			w := m["dense1.weight"]
			w.Shape = []int{w.Shape[1], w.Shape[0]}
			m["dense1.weight"] = w
		}),
		"weight-missing": edit(func(m map[string]safetensors.Tensor) { delete(m, "dense1.weight") }),
		"scale-missing":  edit(func(m map[string]safetensors.Tensor) { delete(m, "dense1.weight_scale") }),
		"bias-missing":   edit(func(m map[string]safetensors.Tensor) { delete(m, "dense1.bias") }),
		"scale-count":    edit(func(m map[string]safetensors.Tensor) { m["dense1.weight_scale"] = f32(1, 2) }),
		"scale-zero":     edit(func(m map[string]safetensors.Tensor) { m["dense1.weight_scale"] = f32(0.1, 0, 0.1, 0.1) }),
		"scale-nan":      edit(func(m map[string]safetensors.Tensor) { m["dense1.weight_scale"] = f32(nan) }),
		"scale-negative": edit(func(m map[string]safetensors.Tensor) { m["dense1.weight_scale"] = f32(-0.1) }),
		"scale-inf":      edit(func(m map[string]safetensors.Tensor) { m["dense1.weight_scale"] = f32(float32(math.Inf(1))) }),
		"scale-f64": edit(func(m map[string]safetensors.Tensor) {
			m["dense1.weight_scale"] = safetensors.FromFloat64([]int{1}, []float64{0.1})
		}),
		"scale-0d": edit(func(m map[string]safetensors.Tensor) {
			m["dense1.weight_scale"] = safetensors.FromFloat32(nil, []float32{0.1})
		}),
		"bias-short": edit(func(m map[string]safetensors.Tensor) { m["dense1.bias"] = f32(1, 2, 3) }),
		"bias-f16": edit(func(m map[string]safetensors.Tensor) {
			b := m["dense1.bias"]
			b.DType = "F16"
			b.Shape = []int{8}
			m["dense1.bias"] = b
		}),
		"extra-tensor":    edit(func(m map[string]safetensors.Tensor) { m["dense7.weight"] = f32(1) }),
		"layernorm-shape": edit(func(m map[string]safetensors.Tensor) { m["layernorm0.gamma"] = f32(1, 2, 3) }),
		"layernorm-i8": edit(func(m map[string]safetensors.Tensor) {
			g := m["layernorm0.gamma"]
			g.DType = "I8"
			g.Shape = []int{64}
			m["layernorm0.gamma"] = g
		}),
	}
	x := randInput(13, 3, 10)
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			dst := build(2)
			before := dst.Forward(x).Float32s()
			var err error
			if perr := nd.Catch(func() { err = quantization.Load(dst, mk()) }); perr != nil {
				t.Fatalf("Load panicked: %v", perr)
			}
			if err == nil {
				t.Errorf("loaded")
			} else {
				t.Logf("%v", err)
			}
			if got := dst.Forward(x).Float32s(); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Error("a failed Load changed the network")
			}
		})
	}
}

// TestQuantizeReviewSkipSharedLayer: a Dense shared by two parents with
// one of its paths skipped (Opts.Skip) is refused: a shared layer is
// quantized at all its paths or none.
func TestQuantizeReviewSkipSharedLayer(t *testing.T) {
	shared := nn.NewDense(8, nn.DenseOpts{InUnits: 8})
	a, b := nn.NewSequential(shared), nn.NewSequential(shared)
	net := nn.NewSequential(a, b)
	initNet(t, net, 3)
	x := randInput(4, 3, 8)
	float := a.Forward(x).Float32s()
	paths, err := quantization.QuantizeDynamic(net, quantization.Opts{Skip: func(p string) bool { return p == "sequential0.dense0" }})
	if err != nil {
		return // refused: fine
	}
	if _, ok := a.Children()[0].(*nn.Dense); !ok {
		t.Fatalf("the skipped path holds %T", a.Children()[0])
	}
	if got := a.Forward(x).Float32s(); fmt.Sprint(got) != fmt.Sprint(float) {
		t.Errorf("paths quantized %v; the skipped path sequential0.dense0 (a float nn.Dense, its parameters %v still collected) runs int8: differs from float32 by %.3g",
			paths, gluon.CollectParams(net).Names(), maxRel(got, float))
	}
}

// TestQuantizeReviewHybridizedDenseChild: a Dense hybridized on its own
// (gluon.Hybridize) is quantized like a plain one, and a hybridized Dense
// as the whole network is the "use NewDense" error.
func TestQuantizeReviewHybridizedDenseChild(t *testing.T) {
	d0 := nn.NewDense(8, nn.DenseOpts{InUnits: 6, Act: "relu"})
	net := nn.NewSequential(gluon.Hybridize(d0, gluon.HybridOpts{}), nn.NewDense(3, nn.DenseOpts{InUnits: 8}))
	initNet(t, net, 1)
	paths, err := quantization.QuantizeDynamic(net, quantization.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(paths) != "[dense0 dense1]" {
		t.Errorf("paths %v, want [dense0 dense1]; float parameters left %v", paths, gluon.CollectParams(net).Names())
	}
	d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
	initNet(t, d, 2)
	if paths, err := quantization.QuantizeDynamic(gluon.Hybridize(d, gluon.HybridOpts{}), quantization.Opts{}); err == nil {
		t.Errorf("QuantizeDynamic(gluon.Hybridize(dense)): paths %v, no error (QuantizeDynamic(dense) says to use NewDense)", paths)
	}
}

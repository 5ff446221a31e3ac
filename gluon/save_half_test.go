package gluon_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// TestLoadEmptyDimension: a file whose tensor has a zero dimension, for a
// parameter whose shape is still deferred, is refused before anything
// changes (it used to panic after loading the earlier parameters).
func TestLoadEmptyDimension(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.safetensors")
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2}), nn.NewDense(4, nn.DenseOpts{}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.One(), cpus(1), false); err != nil {
		t.Fatal(err)
	}
	err := safetensors.WriteFile(path, &safetensors.File{Tensors: map[string]safetensors.Tensor{
		"dense0.weight": safetensors.FromFloat32([]int{3, 2}, []float32{7, 7, 7, 7, 7, 7}),
		"dense0.bias":   safetensors.FromFloat32([]int{3}, []float32{7, 7, 7}),
		"dense1.weight": safetensors.FromFloat32([]int{4, 0}, nil),
		"dense1.bias":   safetensors.FromFloat32([]int{4}, []float32{7, 7, 7, 7}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	first := func() []float32 { return params.Get("dense0.weight").ListData()[0].Float32s() }
	before := first()
	err = params.Load(path, cpus(1), gluon.LoadOpts{})
	if err == nil || !strings.Contains(err.Error(), "dense1.weight") || !strings.Contains(err.Error(), "[4 0]") {
		t.Fatalf("got %v, want an error naming dense1.weight and its shape [4 0]", err)
	}
	if !slices.Equal(first(), before) {
		t.Errorf("dense0.weight changed from %v to %v although the load failed", before, first())
	}
}

// TestLoadHalfConverts: half-precision parameters load a file of another
// dtype by value (rounded), never by reinterpreting its bits.
func TestLoadHalfConverts(t *testing.T) {
	dir := t.TempDir()
	vals := []float32{1, -2.5, 0.1, 3}
	files := map[string]safetensors.Tensor{
		"F32":  safetensors.FromFloat32([]int{2, 2}, vals),
		"BF16": {DType: "BF16", Shape: []int{2, 2}, Data: halfBytes(vals, func(f float32) uint16 { return uint16(nd.BF16From(f)) })},
		"F16":  {DType: "F16", Shape: []int{2, 2}, Data: halfBytes(vals, func(f float32) uint16 { return uint16(nd.F16From(f)) })},
		"I16":  {DType: "I16", Shape: []int{2, 2}, Data: []byte{1, 0, 0xfe, 0xff, 0, 0, 3, 0}},
	}
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		for name, tensor := range files {
			t.Run(dt.String()+"/"+name, func(t *testing.T) {
				path := filepath.Join(dir, name+".safetensors")
				if err := safetensors.WriteFile(path, &safetensors.File{Tensors: map[string]safetensors.Tensor{"dense0.weight": tensor}}); err != nil {
					t.Fatal(err)
				}
				net := nn.NewSequential(nn.NewDense(2, nn.DenseOpts{InUnits: 2}))
				d := gluon.CollectParams(net)
				if err := d.Initialize(initializer.Zero(), []ctx.Context{ctx.CPU(0)}, false); err != nil {
					t.Fatal(err)
				}
				if err := gluon.Cast(net, dt); err != nil {
					t.Fatal(err)
				}
				p := d.Get("dense0.weight")
				if err := d.Load(path, []ctx.Context{ctx.CPU(0)}, gluon.LoadOpts{AllowMissing: true}); err != nil {
					t.Fatal(err)
				}
				got := p.ListData()[0].AsType(nd.Float32).Float32s()
				want, _ := tensor.Float32s()
				for i := range want {
					r := nd.BF16From(want[i]).Float32()
					if dt == nd.Float16 {
						r = nd.F16From(want[i]).Float32()
					}
					if got[i] != r {
						t.Fatalf("element %d: %v, want %v (%v rounded to %v)", i, got[i], r, want[i], dt)
					}
				}
			})
		}
	}
}

func halfBytes(v []float32, bits func(float32) uint16) []byte {
	out := make([]byte, 2*len(v))
	for i, f := range v {
		b := bits(f)
		out[2*i], out[2*i+1] = byte(b), byte(b>>8)
	}
	return out
}

package gluon_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/safetensors"
)

// writeTensors writes name → float32 values (shape [len]) as safetensors.
func writeTensors(t *testing.T, path string, tensors map[string][]float32) {
	t.Helper()
	f := &safetensors.File{Tensors: map[string]safetensors.Tensor{}}
	for name, v := range tensors {
		f.Tensors[name] = safetensors.FromFloat32([]int{len(v)}, v)
	}
	if err := safetensors.WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
}

// TestLoadByAlias loads a file that names a LayerNorm's and a BatchNorm's
// scale and shift the way a PyTorch state_dict does (weight, bias).
func TestLoadByAlias(t *testing.T) {
	dir := t.TempDir()
	net := nn.NewSequential(nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 2}), nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 2}))
	params := gluon.CollectParams(net)
	torchNames := map[string][]float32{
		"layernorm0.weight": {1, 2}, "layernorm0.bias": {3, 4},
		"batchnorm0.weight": {5, 6}, "batchnorm0.bias": {7, 8},
		"batchnorm0.running_mean": {9, 10}, "batchnorm0.running_var": {11, 12},
	}
	tests := []struct {
		name    string
		file    map[string][]float32
		opts    gluon.LoadOpts
		wantErr string
		want    map[string][]float32 // parameter → values after the load
	}{
		{"torch names", torchNames, gluon.LoadOpts{}, "", map[string][]float32{
			"layernorm0.gamma": {1, 2}, "layernorm0.beta": {3, 4},
			"batchnorm0.gamma": {5, 6}, "batchnorm0.beta": {7, 8}, "batchnorm0.running_var": {11, 12}}},
		{"own name wins", map[string][]float32{"layernorm0.gamma": {-1, -2}, "layernorm0.weight": {1, 2}},
			gluon.LoadOpts{AllowMissing: true, IgnoreExtra: true}, "", map[string][]float32{"layernorm0.gamma": {-1, -2}}},
		{"alias left over is extra", map[string][]float32{"layernorm0.gamma": {-1, -2}, "layernorm0.weight": {1, 2}},
			gluon.LoadOpts{AllowMissing: true}, "unknown parameters layernorm0.weight", nil},
		{"torch extra needs IgnoreExtra", map[string][]float32{"batchnorm0.num_batches_tracked": {1}},
			gluon.LoadOpts{AllowMissing: true}, "unknown parameters batchnorm0.num_batches_tracked", nil},
		{"missing", map[string][]float32{"layernorm0.weight": {1, 2}}, gluon.LoadOpts{}, "no values for layernorm0.beta", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".safetensors")
			writeTensors(t, path, tc.file)
			err := params.Load(path, []ctx.Context{ctx.CPU(0)}, tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				if got := params.Get(name).Data(ctx.CPU(0)).Float32s(); !slices.Equal(got, want) {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
		})
	}
}

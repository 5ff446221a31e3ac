package gluon

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/gluon/safetensors"
)

// readStateFile reads the tensors of a safetensors file, or of a file
// torch.save wrote (a zip archive; see package pytorch): its state dict
// (pytorch.LoadStateDict) when stateDict is set, else every tensor under
// its dotted name (pytorch.LoadTensors).
func readStateFile(path string, stateDict bool) (*safetensors.File, error) {
	if !pytorch.IsTorchFile(path) {
		return safetensors.ReadFile(path)
	}
	load := pytorch.LoadTensors
	if stateDict {
		load = pytorch.LoadStateDict
	}
	arrays, err := load(path, ctx.CPU(0))
	if err != nil {
		return nil, err
	}
	f := &safetensors.File{Tensors: map[string]safetensors.Tensor{}}
	for name, a := range arrays {
		f.Tensors[name] = toTensor(a)
		a.Release()
	}
	return f, nil
}

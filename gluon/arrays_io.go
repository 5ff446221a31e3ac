package gluon

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// fileDTypes maps the safetensors dtypes that have an nd dtype of their
// own onto it (F16 and BF16 onto the half-precision storage types);
// LoadArrays reads the other integer dtypes as Int64.
var fileDTypes = map[string]nd.DType{
	"F32": nd.Float32, "F64": nd.Float64, "I32": nd.Int32, "I64": nd.Int64,
	"U8": nd.Uint8, "BOOL": nd.Bool,
	"F16": nd.Float16, "BF16": nd.BFloat16,
	"I8": nd.Int64, "I16": nd.Int64, "U16": nd.Int64, "U32": nd.Int64, "U64": nd.Int64,
}

// SaveArrays writes named arrays of any dtype to path in the safetensors
// format (MXNet's nd.save with a dict; PyTorch's safetensors.torch
// save_file reads it as torch tensors of the same dtypes). The file is
// replaced atomically.
func SaveArrays(path string, arrays map[string]*nd.NDArray) error {
	f := &safetensors.File{Tensors: map[string]safetensors.Tensor{}}
	for name, a := range arrays {
		if a == nil || a.Released() {
			return errorf("save %s: array %q is nil or released", path, name)
		}
		f.Tensors[name] = toTensor(a)
	}
	if err := safetensors.WriteFile(path, f); err != nil {
		return errorf("save: %v", err)
	}
	return nil
}

// LoadArrays reads every tensor of a safetensors file onto dev (or of a
// file torch.save wrote, each under its dotted path of keys, as package
// gluon/pytorch's LoadTensors names them), each as an array of the
// matching dtype (F32, F64, I32, I64, U8, BOOL, F16 and BF16
// exactly, the last two as the half-precision storage types; the other
// integer types as Int64). A corrupt
// file, or a tensor whose dtype has no array form (F8, C64), is an error
// and no arrays are returned.
func LoadArrays(path string, dev ctx.Context) (map[string]*nd.NDArray, error) {
	f, err := readStateFile(path, false)
	if err != nil {
		return nil, errorf("load: %v", err)
	}
	if err := ctx.Check(dev); err != nil {
		return nil, errorf("load %s: %v", path, err)
	}
	hosts := map[string]any{}
	for _, name := range f.Names() {
		t := f.Tensors[name]
		dt, ok := fileDTypes[t.DType]
		if !ok {
			return nil, errorf("load %s: tensor %s has dtype %s, which has no array form", path, name, t.DType)
		}
		h, err := fromTensor(t, dt)
		if err != nil {
			return nil, errorf("load %s: tensor %s: %v", path, name, err)
		}
		hosts[name] = h
	}
	out := map[string]*nd.NDArray{}
	for name, h := range hosts {
		shape := f.Tensors[name].Shape
		if err := nd.Catch(func() {
			out[name] = nd.FromSliceShaped(dev, h, shape) // 0-d stays 0-d
		}); err != nil {
			for _, a := range out {
				a.Release()
			}
			return nil, errorf("load %s: tensor %s: %v", path, name, err)
		}
	}
	return out, nil
}

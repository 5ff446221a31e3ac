package gluon

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// toTensor reads a to the host as a safetensors tensor of its dtype.
func toTensor(a *nd.NDArray) safetensors.Tensor {
	switch a.DType() {
	case nd.Float64:
		return safetensors.FromFloat64(a.Shape(), a.Float64s())
	case nd.Int32:
		return safetensors.FromInt32(a.Shape(), a.Int32s())
	case nd.Int64:
		return safetensors.FromInt64(a.Shape(), a.Int64s())
	case nd.Uint8:
		return safetensors.FromUint8(a.Shape(), a.Uint8s())
	case nd.Bool:
		return safetensors.FromBool(a.Shape(), a.Bools())
	case nd.Float16, nd.BFloat16:
		return halfTensor(a)
	}
	return safetensors.FromFloat32(a.Shape(), a.Float32s())
}

// halfTensor stores a Float16 or BFloat16 array's bits as F16 or BF16.
func halfTensor(a *nd.NDArray) safetensors.Tensor {
	data := make([]byte, 2*a.Size())
	dtype := "F16"
	if a.DType() == nd.Float16 {
		v := make([]nd.F16, a.Size())
		a.ReadInto(v)
		for i, h := range v {
			binary.LittleEndian.PutUint16(data[2*i:], uint16(h))
		}
	} else {
		dtype = "BF16"
		v := make([]nd.BF16, a.Size())
		a.ReadInto(v)
		for i, h := range v {
			binary.LittleEndian.PutUint16(data[2*i:], uint16(h))
		}
	}
	return safetensors.Tensor{DType: dtype, Shape: slices.Clone(a.Shape()), Data: data}
}

// halfHost returns a tensor's elements as []nd.F16 or []nd.BF16 (dt;
// FromSlice's input): the bits themselves when the file holds that type,
// otherwise the values converted through float32 and rounded to nearest.
func halfHost(t safetensors.Tensor, dt nd.DType) (any, error) {
	if (dt == nd.Float16 && t.DType == "F16") || (dt == nd.BFloat16 && t.DType == "BF16") {
		n := 1
		for _, d := range t.Shape {
			n *= d
		}
		if len(t.Data) != 2*n {
			return nil, fmt.Errorf("%d bytes for %d %s elements", len(t.Data), n, t.DType)
		}
		if dt == nd.Float16 {
			v := make([]nd.F16, n)
			for i := range v {
				v[i] = nd.F16(binary.LittleEndian.Uint16(t.Data[2*i:]))
			}
			return v, nil
		}
		v := make([]nd.BF16, n)
		for i := range v {
			v[i] = nd.BF16(binary.LittleEndian.Uint16(t.Data[2*i:]))
		}
		return v, nil
	}
	f, err := t.Float32s()
	if err != nil {
		return nil, err
	}
	if dt == nd.Float16 {
		v := make([]nd.F16, len(f))
		for i, x := range f {
			v[i] = nd.F16From(x)
		}
		return v, nil
	}
	v := make([]nd.BF16, len(f))
	for i, x := range f {
		v[i] = nd.BF16From(x)
	}
	return v, nil
}

// fromTensor converts a tensor to a host slice of dt (FromSlice's input).
func fromTensor(t safetensors.Tensor, dt nd.DType) (any, error) {
	switch dt {
	case nd.Float64:
		return t.Float64s()
	case nd.Int32:
		return t.Int32s()
	case nd.Int64:
		return t.Int64s()
	case nd.Uint8:
		return t.Uint8s()
	case nd.Bool:
		return t.Bools()
	case nd.Float16, nd.BFloat16:
		return halfHost(t, dt)
	}
	return t.Float32s()
}

// Save writes the parameters' values (each parameter's first replica; all
// replicas are equal after a Trainer step) to path in the safetensors
// format, under their full names. The file is replaced atomically: a
// failed save leaves any earlier file intact. Running statistics (batch
// norm) are saved too.
func (d *ParamDict) Save(path string) error { return d.SaveWith(path, nil) }

// SaveWith is Save with extra tensors in the file, under their own names
// (another framework's buffers: PyTorch's num_batches_tracked, say); a
// name that is also a parameter's is an error.
func (d *ParamDict) SaveWith(path string, extra map[string]safetensors.Tensor) error {
	f := &safetensors.File{
		Tensors:  map[string]safetensors.Tensor{},
		Metadata: map[string]string{"format": "goluon.parameters"},
	}
	for _, name := range d.names {
		p := d.params[name]
		if !p.Initialized() {
			return errorf("save %s: parameter %s is not initialised", path, name)
		}
		f.Tensors[name] = toTensor(p.ListData()[0])
	}
	for name, t := range extra {
		if _, dup := f.Tensors[name]; dup {
			return errorf("save %s: extra tensor %s is also a parameter", path, name)
		}
		f.Tensors[name] = t
	}
	if err := safetensors.WriteFile(path, f); err != nil {
		return errorf("save: %v", err)
	}
	return nil
}

// LoadOpts relaxes Load's checks.
type LoadOpts struct {
	// AllowMissing leaves parameters that the file lacks as they are.
	AllowMissing bool
	// IgnoreExtra skips tensors in the file that match no parameter.
	IgnoreExtra bool
	// Skip, when set, names tensors of the file to ignore even though no
	// parameter takes them (PyTorch's num_batches_tracked buffers).
	Skip func(name string) bool
	// Rename, when set, maps each of the file's tensor names to the name
	// it is matched under (older layouts' names, a "module." prefix);
	// two tensors that map to one name are an error.
	Rename func(name string) string
}

// Load reads parameters saved by Save (or any safetensors file with the
// same names, or a state dict that torch.save wrote: see package
// gluon/pytorch's LoadStateDict) onto devs, which need not be the contexts they were saved
// from: parameters not yet initialised are created on devs, the others
// keep their contexts and get the loaded values in every replica.
// Everything is checked before any parameter changes: a missing or extra
// name, a shape that does not fit, a truncated or corrupt file is an error
// and leaves the parameters untouched.
func (d *ParamDict) Load(path string, devs []ctx.Context, o LoadOpts) error {
	f, err := readStateFile(path, true)
	if err != nil {
		return errorf("load: %v", err)
	}
	if o.Rename != nil {
		renamed := map[string]safetensors.Tensor{}
		from := map[string]string{}
		for _, name := range f.Names() {
			to := o.Rename(name)
			if other, ok := from[to]; ok {
				return errorf("load %s: tensors %s and %s both load as %s", path, other, name, to)
			}
			from[to], renamed[to] = name, f.Tensors[name]
		}
		f = &safetensors.File{Metadata: f.Metadata, Tensors: renamed}
	}
	key := fileKeys(d, f)
	var missing, extra []string
	used := map[string]bool{}
	for _, name := range d.names {
		if k, ok := key[name]; ok {
			used[k] = true
		} else {
			missing = append(missing, name)
		}
	}
	for _, name := range f.Names() {
		if !used[name] && (o.Skip == nil || !o.Skip(name)) {
			extra = append(extra, name)
		}
	}
	if len(missing) > 0 && !o.AllowMissing {
		return errorf("load %s: the file has no values for %s", path, strings.Join(missing, ", "))
	}
	if len(extra) > 0 && !o.IgnoreExtra {
		return errorf("load %s: the file has values for unknown parameters %s", path, strings.Join(extra, ", "))
	}
	type item struct {
		p     *Parameter
		shape []int
		host  any
	}
	var items []item
	for _, name := range d.names {
		k, ok := key[name]
		if !ok {
			continue
		}
		t := f.Tensors[k]
		p := d.params[name]
		if !known(t.Shape) {
			return errorf("load %s: parameter %s: the file holds shape %v, which has an empty dimension", path, name, t.Shape)
		}
		if !shapeFits(p.Shape(), t.Shape) {
			return errorf("load %s: parameter %s has shape %v but the file holds %v", path, name, p.Shape(), t.Shape)
		}
		host, err := fromTensor(t, p.DType())
		if err != nil {
			return errorf("load %s: parameter %s: %v", path, name, err)
		}
		items = append(items, item{p, t.Shape, host})
	}
	if len(devs) == 0 {
		return errorf("load %s: no contexts to load onto", path)
	}
	if err := ctx.Check(devs...); err != nil {
		return errorf("load %s: %v", path, err)
	}
	err = nil
	// Everything was checked above; a panic here is a defect, reported as
	// an error rather than crashing the caller.
	if cerr := nd.Catch(func() {
		for _, it := range items {
			if !it.p.Initialized() {
				if len(it.p.Contexts()) == 0 { // never initialised: create it on devs
					if err = it.p.Initialize(nil, devs, true); err != nil {
						return
					}
				}
				it.p.InferShape(it.shape...) // completes a deferred parameter
			}
			src := nd.FromSliceShaped(ctx.CPU(0), it.host, it.shape) // 0-d stays 0-d
			it.p.SetData(src)
			src.Release()
		}
	}); cerr != nil {
		return errorf("load %s: %v", path, cerr)
	}
	return err
}

// fileKeys maps each parameter of d to the file's tensor that holds it:
// its full name, or else its name with the local part replaced by its
// Alias (PyTorch's "norm1.weight" for "norm1.gamma").
func fileKeys(d *ParamDict, f *safetensors.File) map[string]string {
	key := map[string]string{}
	for _, name := range d.names {
		if _, ok := f.Tensors[name]; ok {
			key[name] = name
			continue
		}
		p := d.params[name]
		if p.Alias == "" {
			continue
		}
		alias := strings.TrimSuffix(name, p.local) + p.Alias
		if _, ok := f.Tensors[alias]; ok && d.params[alias] == nil {
			key[name] = alias
		}
	}
	return key
}

// shapeFits reports whether a loaded shape matches a parameter's shape,
// where the parameter's unknown (0) dimensions match anything.
func shapeFits(param, file []int) bool {
	if len(param) != len(file) {
		return false
	}
	for i, s := range param {
		if s > 0 && s != file[i] {
			return false
		}
	}
	return true
}

// SaveParameters saves every parameter of b to path (Gluon's
// save_parameters).
func SaveParameters(b Component, path string) error { return CollectParams(b).Save(path) }

// LoadParameters loads b's parameters from path onto devs (Gluon's
// load_parameters with ctx).
func LoadParameters(b Component, path string, devs ...ctx.Context) error {
	return CollectParams(b).Load(path, devs, LoadOpts{})
}

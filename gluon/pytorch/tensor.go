package pytorch

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// storageType describes one of torch's typed storages.
type storageType struct {
	size    int // bytes an element
	dtype   nd.DType
	complex bool // two components of size/2 bytes each
	signed  bool // an integer type read as Int64 (int8, int16)
}

var storageTypes = map[string]storageType{
	"FloatStorage":         {4, nd.Float32, false, false},
	"DoubleStorage":        {8, nd.Float64, false, false},
	"HalfStorage":          {2, nd.Float16, false, false},
	"BFloat16Storage":      {2, nd.BFloat16, false, false},
	"LongStorage":          {8, nd.Int64, false, false},
	"IntStorage":           {4, nd.Int32, false, false},
	"ShortStorage":         {2, nd.Int64, false, true},
	"CharStorage":          {1, nd.Int64, false, true},
	"ByteStorage":          {1, nd.Uint8, false, false},
	"BoolStorage":          {1, nd.Bool, false, false},
	"ComplexFloatStorage":  {8, nd.Float32, true, false},
	"ComplexDoubleStorage": {16, nd.Float64, true, false},
}

// storage is one tensor storage of the archive, read when a tensor first
// uses it.
type storage struct {
	typ   storageType
	name  string // the storage class, for messages
	file  *zip.File
	numel int
	words []uint64 // the elements (complex: components) as bits, once read
}

// reader resolves the archive's storages and the torch calls of its pickle.
type reader struct {
	members  map[string]*zip.File
	prefix   string // of the storage members
	big      bool   // storages are big-endian
	storages map[string]*storage
}

// persistentLoad resolves torch's persistent id of a storage:
// ('storage', class, key, location, numel).
func (r *reader) persistentLoad(id any) (any, error) {
	t, ok := id.(Tuple)
	if !ok || len(t) < 5 || t[0] != "storage" {
		return nil, fmt.Errorf("persistent id %v is not a torch storage", id)
	}
	g, ok1 := t[1].(Global)
	key, ok2 := t[2].(string)
	numel, ok3 := t[4].(int64)
	if !ok1 || !ok2 || !ok3 || numel < 0 {
		return nil, fmt.Errorf("malformed storage id %v", id)
	}
	if s, ok := r.storages[key]; ok {
		return s, nil
	}
	typ, ok := storageTypes[g.Name]
	if !ok {
		return nil, fmt.Errorf("storages of type %s.%s have no array form", g.Module, g.Name)
	}
	f := r.members[r.prefix+key]
	if f == nil {
		return nil, fmt.Errorf("storage %s has no member %s%s", key, r.prefix, key)
	}
	if numel > math.MaxInt32*int64(64) || f.UncompressedSize64 < uint64(numel)*uint64(typ.size) {
		return nil, fmt.Errorf("storage %s holds %d bytes, fewer than its %d elements of %s need", key, f.UncompressedSize64, numel, g.Name)
	}
	s := &storage{typ: typ, name: g.Name, file: f, numel: int(numel)}
	r.storages[key] = s
	return s, nil
}

// read decodes the storage's elements once.
func (s *storage) read(big bool) error {
	if s.words != nil {
		return nil
	}
	b, err := readMember(s.file, s.file.UncompressedSize64)
	if err != nil {
		return err
	}
	part := s.typ.size
	n := s.numel
	if s.typ.complex {
		part /= 2
		n *= 2
	}
	var order binary.ByteOrder = binary.LittleEndian
	if big {
		order = binary.BigEndian
	}
	s.words = make([]uint64, n)
	for i := range s.words {
		w := b[i*part : (i+1)*part]
		switch part {
		case 1:
			s.words[i] = uint64(w[0])
		case 2:
			s.words[i] = uint64(order.Uint16(w))
		case 4:
			s.words[i] = uint64(order.Uint32(w))
		default:
			s.words[i] = order.Uint64(w)
		}
	}
	return nil
}

// hostTensor is a tensor read from the archive, before it becomes an
// array on the caller's context.
type hostTensor struct {
	shape []int
	data  any // the slice FromSlice takes
}

// reduce builds the values of the torch and Python calls a state dict's
// pickle makes.
func (r *reader) reduce(g Global, args []any) (any, bool, error) {
	switch g.Module + "." + g.Name {
	case "collections.OrderedDict", "builtins.dict", "__builtin__.dict":
		d := &Dict{}
		if len(args) > 0 {
			return nil, false, nil // built from items: leave it an Object
		}
		return d, true, nil
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		t, err := r.rebuild(args)
		return t, err == nil, err
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		if len(args) == 0 {
			return nil, false, errors.New("no data")
		}
		return args[0], true, nil
	case "torch._tensor._rebuild_from_type_v2":
		if len(args) < 3 {
			return nil, false, errors.New("too few arguments")
		}
		f, ok1 := args[0].(Global)
		inner, ok2 := args[2].(Tuple)
		if !ok1 || !ok2 {
			return nil, false, errors.New("malformed arguments")
		}
		return r.reduce(f, inner)
	case "builtins.set", "__builtin__.set", "builtins.frozenset", "__builtin__.frozenset":
		switch {
		case len(args) == 0:
			return &List{}, true, nil
		case len(args) == 1:
			switch x := args[0].(type) {
			case *List:
				return &List{Items: x.Items}, true, nil
			case Tuple:
				return &List{Items: x}, true, nil
			}
		}
	case "torch.Size":
		if len(args) == 1 {
			if t, ok := args[0].(Tuple); ok {
				return t, true, nil
			}
		}
	case "torch._utils._rebuild_qtensor", "torch._utils._rebuild_sparse_tensor",
		"torch._utils._rebuild_sparse_csr_tensor", "torch._utils._rebuild_meta_tensor_no_storage",
		"torch._utils._rebuild_wrapper_subclass", "torch._utils._rebuild_device_tensor_from_numpy",
		"torch._utils._rebuild_nested_tensor":
		return nil, false, errors.New("this kind of tensor (quantized, sparse, meta, nested or a subclass) has no array form")
	}
	return nil, false, nil
}

// rebuild gathers a tensor from (storage, offset, size, stride, ...).
func (r *reader) rebuild(args []any) (*hostTensor, error) {
	if len(args) < 4 {
		return nil, errors.New("too few arguments")
	}
	s, ok := args[0].(*storage)
	off, ok2 := args[1].(int64)
	size, ok3 := ints(args[2])
	stride, ok4 := ints(args[3])
	if !ok || !ok2 || !ok3 || !ok4 || len(size) != len(stride) || off < 0 {
		return nil, fmt.Errorf("malformed tensor arguments %v", args[1:4])
	}
	count := 1
	last := int(off) // the largest storage index read
	for i, d := range size {
		if d != 0 && count > math.MaxInt32/d {
			return nil, fmt.Errorf("size %v is too large", size)
		}
		count *= d
		if d > 0 {
			last += (d - 1) * stride[i]
		}
	}
	if count > s.numel+1<<24 {
		return nil, fmt.Errorf("a %v tensor expands its storage of %d elements more than this reader accepts", size, s.numel)
	}
	if count > 0 && last >= s.numel {
		return nil, fmt.Errorf("a %v tensor with strides %v at offset %d reads past its storage of %d elements", size, stride, off, s.numel)
	}
	if err := s.read(r.big); err != nil {
		return nil, err
	}
	comps := 1
	if s.typ.complex {
		comps = 2
	}
	words := make([]uint64, 0, count*comps)
	idx := make([]int, len(size))
	for range count {
		at := int(off)
		for i, v := range idx {
			at += v * stride[i]
		}
		words = append(words, s.words[at*comps:(at+1)*comps]...)
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < size[i] {
				break
			}
			idx[i] = 0
		}
	}
	shape := size
	if s.typ.complex {
		shape = append(shape, 2)
	}
	return &hostTensor{shape: shape, data: decode(s.typ, words)}, nil
}

// ints reads a tuple of non-negative integers.
func ints(v any) ([]int, bool) {
	t, ok := v.(Tuple)
	if !ok {
		return nil, false
	}
	out := make([]int, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok || n < 0 || n > math.MaxInt32 {
			return nil, false
		}
		out[i] = int(n)
	}
	return out, true
}

// decode turns element bits into FromSlice's slice for the dtype.
func decode(t storageType, w []uint64) any {
	switch {
	case t.dtype == nd.Float32:
		return conv(w, func(b uint64) float32 { return math.Float32frombits(uint32(b)) })
	case t.dtype == nd.Float64:
		return conv(w, math.Float64frombits)
	case t.dtype == nd.Float16:
		return conv(w, func(b uint64) nd.F16 { return nd.F16(b) })
	case t.dtype == nd.BFloat16:
		return conv(w, func(b uint64) nd.BF16 { return nd.BF16(b) })
	case t.dtype == nd.Int32:
		return conv(w, func(b uint64) int32 { return int32(uint32(b)) })
	case t.dtype == nd.Uint8:
		return conv(w, func(b uint64) uint8 { return uint8(b) })
	case t.dtype == nd.Bool:
		return conv(w, func(b uint64) bool { return b != 0 })
	case t.signed && t.size == 1:
		return conv(w, func(b uint64) int64 { return int64(int8(b)) })
	case t.signed:
		return conv(w, func(b uint64) int64 { return int64(int16(b)) })
	}
	return conv(w, func(b uint64) int64 { return int64(b) })
}

func conv[T any](w []uint64, f func(uint64) T) []T {
	out := make([]T, len(w))
	for i, b := range w {
		out[i] = f(b)
	}
	return out
}

// materialize replaces the host tensors in v by arrays on dev, recording
// each in made (a tensor that appears twice becomes one array).
func materialize(v any, dev ctx.Context, made map[*hostTensor]*nd.NDArray) any {
	seen := map[any]bool{}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case *hostTensor:
			if a, ok := made[x]; ok {
				return a
			}
			var a *nd.NDArray
			if len(x.shape) > 0 {
				a = nd.FromSlice(dev, x.data, x.shape...)
			} else {
				one := nd.FromSlice(dev, x.data, 1)
				a = nd.Reshape(one)
				one.Release()
			}
			made[x] = a
			return a
		case *Dict:
			if !seen[x] {
				seen[x] = true
				for i := range x.Values {
					x.Keys[i] = walk(x.Keys[i])
					x.Values[i] = walk(x.Values[i])
				}
			}
		case *List:
			if !seen[x] {
				seen[x] = true
				for i := range x.Items {
					x.Items[i] = walk(x.Items[i])
				}
			}
		case Tuple:
			out := make(Tuple, len(x))
			for i := range x {
				out[i] = walk(x[i])
			}
			return out
		case *Object:
			if !seen[x] {
				seen[x] = true
				for i := range x.Args {
					x.Args[i] = walk(x.Args[i])
				}
				x.State = walk(x.State)
			}
		case *storage:
			return &Object{Module: "torch", Name: x.name}
		}
		return v
	}
	return walk(v)
}

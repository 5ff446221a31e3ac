package pytorch

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

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

// storage is one tensor storage of the archive. Its bytes are read when
// the first tensor that uses it becomes an array and dropped after the
// last, so a load holds one storage's bytes at a time beside the arrays.
type storage struct {
	typ   storageType
	name  string // the storage class, for messages
	file  *zip.File
	numel int
	raw   []byte // the member's bytes while tensors still need them
	uses  int    // tensors rebuilt from it and not yet made arrays
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

// hostTensor is a tensor read from the archive's pickle, before it
// becomes an array on the caller's context: where its elements are in
// its storage.
type hostTensor struct {
	st     *storage
	off    int
	size   []int
	stride []int
	big    bool
}

// reduce builds the values of the torch and Python calls a state dict's
// pickle makes.
func (r *reader) reduce(g Global, args []any) (any, bool, error) {
	switch g.Module + "." + g.Name {
	case "collections.OrderedDict", "builtins.dict", "__builtin__.dict", "collections.defaultdict":
		if len(args) > 0 && g.Name != "defaultdict" {
			return nil, false, nil // built from items: leave it an Object
		}
		return &Dict{}, true, nil
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
	case "torch._utils._rebuild_tensor_v3":
		return nil, false, errors.New("this tensor's dtype (an untyped storage of PyTorch 2.3 or later: uint16/32/64, float8) has no array form")
	}
	return nil, false, nil
}

// rebuild checks a tensor's (storage, offset, size, stride, ...) against
// its storage; its elements are read when it becomes an array.
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
	for _, d := range size {
		if d != 0 && count > math.MaxInt32/d {
			return nil, fmt.Errorf("size %v is too large", size)
		}
		count *= d
	}
	if count > 0 {
		last := off // the largest storage index read, in int64: no overflow for int32 sizes and strides
		for i, d := range size {
			last += int64(d-1) * int64(stride[i])
		}
		if off >= int64(s.numel) || last >= int64(s.numel) {
			return nil, fmt.Errorf("a %v tensor with strides %v at offset %d reads past its storage of %d elements", size, stride, off, s.numel)
		}
	}
	if count > s.numel+1<<24 {
		return nil, fmt.Errorf("a %v tensor expands its storage of %d elements more than this reader accepts", size, s.numel)
	}
	s.uses++
	return &hostTensor{st: s, off: int(off), size: size, stride: stride, big: r.big}, nil
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

// array makes t an array on dev: its elements gathered from the storage's
// bytes (one copy of a contiguous range), decoded into the slice FromSlice
// takes. The storage's bytes are dropped after its last tensor.
func (t *hostTensor) array(dev ctx.Context) (*nd.NDArray, error) {
	s := t.st
	if s.raw == nil {
		b, err := readMember(s.file, s.file.UncompressedSize64)
		if err != nil {
			return nil, err
		}
		s.raw = b
	}
	es := s.typ.size
	count := 1
	for _, d := range t.size {
		count *= d
	}
	var b []byte
	if contiguous(t.size, t.stride) {
		b = s.raw[t.off*es : (t.off+count)*es]
	} else {
		b = make([]byte, 0, count*es)
		idx := make([]int, len(t.size))
		for range count {
			at := t.off
			for i, v := range idx {
				at += v * t.stride[i]
			}
			b = append(b, s.raw[at*es:(at+1)*es]...)
			for i := len(idx) - 1; i >= 0; i-- {
				if idx[i]++; idx[i] < t.size[i] {
					break
				}
				idx[i] = 0
			}
		}
	}
	host := decode(s.typ, b, t.big)
	if s.uses--; s.uses == 0 {
		s.raw = nil
	}
	shape := t.size
	if s.typ.complex {
		shape = append(slices.Clone(shape), 2)
	}
	var a *nd.NDArray
	err := nd.Catch(func() {
		if len(shape) > 0 {
			a = nd.FromSlice(dev, host, shape...)
			return
		}
		one := nd.FromSlice(dev, host, 1)
		a = nd.Reshape(one)
		one.Release()
	})
	return a, err
}

// contiguous reports whether strides are size's row-major ones (axes of
// length 1 may have any stride).
func contiguous(size, stride []int) bool {
	want := 1
	for i := len(size) - 1; i >= 0; i-- {
		if size[i] != 1 && stride[i] != want {
			return false
		}
		want *= size[i]
	}
	return true
}

// decode turns little- or big-endian element bytes into FromSlice's slice
// for the storage's dtype (complex numbers as pairs of parts).
func decode(t storageType, b []byte, big bool) any {
	var o binary.ByteOrder = binary.LittleEndian
	if big {
		o = binary.BigEndian
	}
	switch {
	case t.dtype == nd.Float32:
		return conv(len(b)/4, func(i int) float32 { return math.Float32frombits(o.Uint32(b[4*i:])) })
	case t.dtype == nd.Float64:
		return conv(len(b)/8, func(i int) float64 { return math.Float64frombits(o.Uint64(b[8*i:])) })
	case t.dtype == nd.Float16:
		return conv(len(b)/2, func(i int) nd.F16 { return nd.F16(o.Uint16(b[2*i:])) })
	case t.dtype == nd.BFloat16:
		return conv(len(b)/2, func(i int) nd.BF16 { return nd.BF16(o.Uint16(b[2*i:])) })
	case t.dtype == nd.Int32:
		return conv(len(b)/4, func(i int) int32 { return int32(o.Uint32(b[4*i:])) })
	case t.dtype == nd.Uint8:
		return slices.Clone(b)
	case t.dtype == nd.Bool:
		return conv(len(b), func(i int) bool { return b[i] != 0 })
	case t.signed && t.size == 1:
		return conv(len(b), func(i int) int64 { return int64(int8(b[i])) })
	case t.signed:
		return conv(len(b)/2, func(i int) int64 { return int64(int16(o.Uint16(b[2*i:]))) })
	}
	return conv(len(b)/8, func(i int) int64 { return int64(o.Uint64(b[8*i:])) })
}

func conv[T any](n int, f func(int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// Limits on the structure of a loaded value: torch.save writes nothing
// near them, and they keep a crafted pickle (shared containers nested in
// each other, a tuple of a tuple of ...) from exhausting the stack or
// taking exponential time.
const (
	maxNesting = 1000     // containers within containers
	maxVisits  = 10000000 // values visited walking a loaded value
)

// walker visits a loaded value's containers once each (shared ones are
// visited once), within maxNesting and maxVisits.
type walker struct {
	visits int
	err    error
}

func (w *walker) enter(depth int) bool {
	if w.err != nil {
		return false
	}
	if w.visits++; w.visits > maxVisits {
		w.err = fmt.Errorf("the value has more than %d parts", maxVisits)
		return false
	}
	if depth > maxNesting {
		w.err = fmt.Errorf("the value is nested more than %d deep", maxNesting)
		return false
	}
	return true
}

// tupleKey identifies a non-empty tuple by its first element's address:
// tuples read from a pickle share their backing array when the pickle
// shares them.
func tupleKey(t Tuple) *any { return &t[0] }

// materialize replaces the host tensors in v by arrays on dev, recording
// each in made (a tensor that appears twice becomes one array).
func materialize(v any, dev ctx.Context, made map[*hostTensor]*nd.NDArray) (any, error) {
	w := &walker{}
	seen := map[any]bool{}
	tuples := map[*any]Tuple{}
	var walk func(v any, depth int) any
	walk = func(v any, depth int) any {
		if !w.enter(depth) {
			return nil
		}
		switch x := v.(type) {
		case *hostTensor:
			if a, ok := made[x]; ok {
				return a
			}
			a, err := x.array(dev)
			if err != nil {
				w.err = err
				return nil
			}
			made[x] = a
			return a
		case *Dict:
			if !seen[x] {
				seen[x] = true
				for i := range x.Values {
					x.Keys[i] = walk(x.Keys[i], depth+1)
					x.Values[i] = walk(x.Values[i], depth+1)
				}
			}
		case *List:
			if !seen[x] {
				seen[x] = true
				for i := range x.Items {
					x.Items[i] = walk(x.Items[i], depth+1)
				}
			}
		case Tuple:
			if len(x) == 0 {
				return x
			}
			if t, ok := tuples[tupleKey(x)]; ok {
				return t
			}
			out := make(Tuple, len(x))
			tuples[tupleKey(x)] = out
			for i := range x {
				out[i] = walk(x[i], depth+1)
			}
			return out
		case *Object:
			if !seen[x] {
				seen[x] = true
				for i := range x.Args {
					x.Args[i] = walk(x.Args[i], depth+1)
				}
				x.State = walk(x.State, depth+1)
				for i := range x.Items {
					x.Items[i] = walk(x.Items[i], depth+1)
				}
				if x.Entries != nil {
					walk(x.Entries, depth+1)
				}
			}
		case *storage:
			return &Object{Module: "torch", Name: x.name}
		}
		return v
	}
	out := walk(v, 0)
	return out, w.err
}

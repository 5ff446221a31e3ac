package pytorch

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/goluon/goluon/internal/atomicfile"
	"github.com/goluon/goluon/nd"
)

// saveStorage names each writable dtype's torch storage class and its
// element size.
var saveStorage = map[nd.DType]struct {
	class string
	size  int
}{
	nd.Float32: {"FloatStorage", 4}, nd.Float64: {"DoubleStorage", 8},
	nd.Float16: {"HalfStorage", 2}, nd.BFloat16: {"BFloat16Storage", 2},
	nd.Int32: {"IntStorage", 4}, nd.Int64: {"LongStorage", 8},
	nd.Uint8: {"ByteStorage", 1}, nd.Bool: {"BoolStorage", 1},
}

// SaveStateDict writes tensors to path as torch.save writes a state dict
// (an OrderedDict of contiguous tensors, in PyTorch's zip format), so
// that torch.load reads it and a module's load_state_dict takes it. The
// entries are in the order of names, or of the sorted keys when names is
// nil; every name must have a tensor. Arrays of any context and dtype are
// written with their own dtype. The file is replaced atomically, and a
// nil or released array fails the save before anything is written.
func SaveStateDict(path string, names []string, tensors map[string]*nd.NDArray) error {
	return SaveStateDictVersions(path, names, tensors, nil)
}

// SaveStateDictVersions is SaveStateDict with the state dict's _metadata
// as torch.save keeps it: the version of each module, by its prefix ("" for
// the root, "features.0" for a submodule), which some modules'
// load_state_dict requires (torchvision's MNASNet refuses a state dict
// without its version). versions may be nil (no _metadata).
func SaveStateDictVersions(path string, names []string, tensors map[string]*nd.NDArray, versions map[string]int) error {
	if names == nil {
		for k := range tensors {
			names = append(names, k)
		}
		slices.Sort(names)
	}
	seen := map[string]bool{}
	var pkl bytes.Buffer
	p := &pickler{w: &pkl}
	p.raw(0x80, 2)
	p.global("collections", "OrderedDict")
	p.raw(')', 'R', '(')
	storages := make([][]byte, 0, len(names))
	for _, name := range names {
		a := tensors[name]
		if a == nil || a.Released() {
			return fmt.Errorf("pytorch: save %s: tensor %q is nil or released", path, name)
		}
		if seen[name] {
			return fmt.Errorf("pytorch: save %s: name %q twice", path, name)
		}
		seen[name] = true
		st := saveStorage[a.DType()]
		var data []byte
		if err := nd.Catch(func() { data = hostBytes(a) }); err != nil {
			return fmt.Errorf("pytorch: save %s: tensor %q: %w", path, name, err)
		}
		key := strconv.Itoa(len(storages))
		storages = append(storages, data)

		p.str(name)
		p.global("torch._utils", "_rebuild_tensor_v2")
		p.raw('(', '(')
		p.str("storage")
		p.global("torch", st.class)
		p.str(key)
		p.str("cpu")
		p.int(int64(a.Size()))
		p.raw('t', 'Q')
		p.int(0)
		shape := a.Shape()
		p.raw('(')
		for _, d := range shape {
			p.int(int64(d))
		}
		p.raw('t', '(')
		stride := 1
		strides := make([]int, len(shape))
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = stride
			stride *= shape[i]
		}
		for _, s := range strides {
			p.int(int64(s))
		}
		p.raw('t', 0x89)
		p.global("collections", "OrderedDict")
		p.raw(')', 'R', 't', 'R')
	}
	p.raw('u')
	if versions != nil { // BUILD with the OrderedDict's state {'_metadata': OrderedDict(prefix: {'version': v})}
		prefixes := make([]string, 0, len(versions))
		for k := range versions {
			prefixes = append(prefixes, k)
		}
		slices.Sort(prefixes)
		p.raw('}', '(')
		p.str("_metadata")
		p.global("collections", "OrderedDict")
		p.raw(')', 'R', '(')
		for _, k := range prefixes {
			p.str(k)
			p.raw('}', '(')
			p.str("version")
			p.int(int64(versions[k]))
			p.raw('u')
		}
		p.raw('u', 'u', 'b')
	}
	p.raw('.')

	return atomicfile.Write(path, func(w io.Writer) error {
		z := zip.NewWriter(w)
		put := func(name string, data []byte) error {
			m, err := z.CreateHeader(&zip.FileHeader{Name: "archive/" + name, Method: zip.Store})
			if err != nil {
				return err
			}
			_, err = m.Write(data)
			return err
		}
		if err := put("data.pkl", pkl.Bytes()); err != nil {
			return err
		}
		if err := put("byteorder", []byte("little")); err != nil {
			return err
		}
		for i, data := range storages {
			if err := put("data/"+strconv.Itoa(i), data); err != nil {
				return err
			}
		}
		if err := put("version", []byte("3\n")); err != nil {
			return err
		}
		return z.Close()
	})
}

// hostBytes reads a's elements as little-endian bytes of its dtype.
func hostBytes(a *nd.NDArray) []byte {
	n := a.Size()
	out := make([]byte, n*saveStorage[a.DType()].size)
	switch a.DType() {
	case nd.Float32:
		for i, v := range a.Float32s() {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
	case nd.Float64:
		for i, v := range a.Float64s() {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
		}
	case nd.Int32:
		for i, v := range a.Int32s() {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
	case nd.Int64:
		for i, v := range a.Int64s() {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		}
	case nd.Uint8:
		copy(out, a.Uint8s())
	case nd.Bool:
		for i, v := range a.Bools() {
			if v {
				out[i] = 1
			}
		}
	case nd.Float16:
		v := make([]nd.F16, n)
		a.ReadInto(v)
		for i, h := range v {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(h))
		}
	case nd.BFloat16:
		v := make([]nd.BF16, n)
		a.ReadInto(v)
		for i, h := range v {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(h))
		}
	}
	return out
}

// pickler writes the pickle opcodes a state dict needs (protocol 2).
type pickler struct{ w *bytes.Buffer }

func (p *pickler) raw(ops ...byte) { p.w.Write(ops) }

func (p *pickler) global(module, name string) {
	p.w.WriteByte('c')
	p.w.WriteString(module + "\n" + name + "\n")
}

// str writes a BINUNICODE string.
func (p *pickler) str(s string) {
	p.w.WriteByte('X')
	p.w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(s))))
	p.w.WriteString(s)
}

// int writes BININT, or LONG1 for values outside int32.
func (p *pickler) int(v int64) {
	if v >= math.MinInt32 && v <= math.MaxInt32 {
		p.w.WriteByte('J')
		p.w.Write(binary.LittleEndian.AppendUint32(nil, uint32(int32(v))))
		return
	}
	p.w.Write([]byte{0x8a, 8})
	p.w.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

// IsTorchName reports whether a file name ends as the files torch.save
// writes are usually named: .pt, .pth, .bin (Hugging Face's
// pytorch_model.bin), .ckpt (Lightning), .pth.tar or .pt.tar, in any case.
// Savers that write either format choose this package's for them.
func IsTorchName(path string) bool {
	p := strings.ToLower(path)
	for _, ext := range []string{".pt", ".pth", ".bin", ".ckpt", ".pth.tar", ".pt.tar"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

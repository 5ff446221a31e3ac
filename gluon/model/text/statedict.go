package text

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// This file holds what the models' loaders and savers share: the check
// of a state dict's keys and shapes against a model, its error, and the
// writing of a model's parameters.

// LoadError lists everything that keeps a state dict from loading into a
// model: the parameters the file lacks, the tensors it holds that are no
// parameter, the tensors whose shape is not the parameter's, and tied
// tensors (an output layer tied to the embedding) that differ.
type LoadError struct {
	// Path is the file.
	Path string
	// Missing names the model's parameters the file has no tensor for.
	Missing []string
	// Unexpected names the file's tensors that match no parameter.
	Unexpected []string
	// Shapes describes each tensor of the wrong shape: "name: the file
	// holds [a b], the model wants [c d]".
	Shapes []string
	// Untied says that a tensor the model ties to another (GPT-2's
	// lm_head.weight, BERT's cls.predictions.decoder.weight and .bias)
	// differs from it in the file; UntiedKeys says which, "a differs
	// from b" for each.
	Untied     bool
	UntiedKeys []string
}

// Error lists the problems, each kind on one line.
func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "text: load %s: the state dict does not fit the model", e.Path)
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, "\n  missing (%d): %s", len(e.Missing), strings.Join(e.Missing, ", "))
	}
	if len(e.Unexpected) > 0 {
		fmt.Fprintf(&b, "\n  unexpected (%d): %s", len(e.Unexpected), strings.Join(e.Unexpected, ", "))
	}
	if len(e.Shapes) > 0 {
		fmt.Fprintf(&b, "\n  wrong shapes (%d): %s", len(e.Shapes), strings.Join(e.Shapes, "; "))
	}
	for _, u := range e.UntiedKeys {
		fmt.Fprintf(&b, "\n  %s: the model ties them", u)
	}
	return b.String()
}

// tie is a tensor of a file that the model does not hold as a parameter
// of its own because it is another one: it must equal that one, and it is
// skipped.
type tie struct{ key, target string }

// layout says how a model's state-dict files map onto its parameters.
type layout struct {
	// rename maps a key of the file to the name it loads as.
	rename func(key string) string
	// skip reports the (renamed) keys that are buffers, not parameters.
	skip func(name string) bool
	// ties are the (renamed) keys of tied tensors.
	ties []tie
	// transposed explains a weight that the file holds transposed.
	transposed string
}

// skipped reports whether the layout passes over name without loading it.
func (l layout) skipped(name string) bool {
	if l.skip != nil && l.skip(name) {
		return true
	}
	return slices.ContainsFunc(l.ties, func(t tie) bool { return t.key == name })
}

// checkFile compares the file's header with params under l and returns a
// *LoadError listing every problem, or an error reading the file, or nil.
func checkFile(params *gluon.ParamDict, path string, l layout) error {
	entries, same, done, err := fileEntries(path)
	if err != nil {
		return err
	}
	defer done()
	e := &LoadError{Path: path}
	byName := map[string]headerEntry{}
	for _, key := range sortedKeys(entries) {
		name := l.rename(key)
		if other, dup := byName[name]; dup {
			return fmt.Errorf("text: load %s: tensors %s and %s both load as %s", path, other.key, key, name)
		}
		ent := entries[key]
		ent.key = key
		byName[name] = ent
	}
	for _, name := range params.Names() {
		ent, ok := byName[name]
		if !ok {
			e.Missing = append(e.Missing, name)
			continue
		}
		if want := params.Get(name).Shape(); !slices.Equal(ent.Shape, want) {
			msg := fmt.Sprintf("%s: the file holds %v, the model wants %v", ent.key, ent.Shape, want)
			if len(want) == 2 && slices.Equal(ent.Shape, []int{want[1], want[0]}) && l.transposed != "" {
				msg += " (transposed: " + l.transposed + ")"
			}
			e.Shapes = append(e.Shapes, msg)
		}
	}
	for _, name := range sortedKeys(byName) {
		if params.Get(name) == nil && !l.skipped(name) {
			e.Unexpected = append(e.Unexpected, byName[name].key)
		}
	}
	sort.Strings(e.Unexpected)
	for _, t := range l.ties {
		a, ok := byName[t.key]
		if !ok {
			continue
		}
		b, ok := byName[t.target]
		if !ok {
			e.Unexpected = append(e.Unexpected, a.key+" (without "+t.target+")")
			continue
		}
		tied, err := same(a, b)
		if err != nil {
			return fmt.Errorf("text: load %s: %w", path, err)
		}
		if !tied {
			e.Untied = true
			e.UntiedKeys = append(e.UntiedKeys, a.key+" differs from "+b.key)
		}
	}
	if len(e.Missing)+len(e.Unexpected)+len(e.Shapes) > 0 || e.Untied {
		return e
	}
	return nil
}

// saveParams writes params to path as a state dict: in torch.save's
// format (gluon/pytorch) for the names pytorch.IsTorchName accepts (.bin,
// .pt, .pth, ...),
// otherwise as safetensors with metadata format "pt". Float64 parameters
// are saved as F64, others as F32; the file is replaced atomically.
func saveParams(params *gluon.ParamDict, path string) error {
	for _, name := range params.Names() {
		if !params.Get(name).Initialized() {
			return fmt.Errorf("text: save %s: parameter %s is not initialised", path, name)
		}
	}
	if pytorch.IsTorchName(path) {
		arrays := map[string]*nd.NDArray{}
		for _, name := range params.Names() {
			a := params.Get(name).ListData()[0]
			if a.DType() != nd.Float64 {
				a = a.AsType(nd.Float32)
			}
			arrays[name] = a
		}
		if err := pytorch.SaveStateDict(path, params.Names(), arrays); err != nil {
			return fmt.Errorf("text: save: %w", err)
		}
		return nil
	}
	f := &safetensors.File{Tensors: map[string]safetensors.Tensor{}, Metadata: map[string]string{"format": "pt"}}
	for _, name := range params.Names() {
		a := params.Get(name).ListData()[0]
		if a.DType() == nd.Float64 {
			f.Tensors[name] = safetensors.FromFloat64(a.Shape(), a.Float64s())
		} else {
			f.Tensors[name] = safetensors.FromFloat32(a.Shape(), a.Float32s())
		}
	}
	if err := safetensors.WriteFile(path, f); err != nil {
		return fmt.Errorf("text: save: %w", err)
	}
	return nil
}

// fileEntries returns the tensors of the state dict at path (their keys
// and shapes), a function that reports whether two of them hold the same
// values, and one to call when done with them. A safetensors file is read
// in its header only; a file torch.save wrote (Hugging Face's
// pytorch_model.bin) is read whole.
func fileEntries(path string) (map[string]headerEntry, func(a, b headerEntry) (bool, error), func(), error) {
	if pytorch.IsTorchFile(path) {
		sd, err := pytorch.LoadStateDict(path, ctx.CPU(0))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("text: %w", err)
		}
		entries := map[string]headerEntry{}
		for k, a := range sd {
			entries[k] = headerEntry{Shape: a.Shape(), key: k}
		}
		same := func(a, b headerEntry) (bool, error) {
			x, y := sd[a.key], sd[b.key]
			return x.DType() == y.DType() && slices.Equal(x.Shape(), y.Shape()) &&
				slices.Equal(x.Float64s(), y.Float64s()), nil
		}
		done := func() {
			for _, a := range sd {
				a.Release()
			}
		}
		return entries, same, done, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("text: %w", err)
	}
	entries, base, err := readHeader(fh, path)
	if err != nil {
		fh.Close()
		return nil, nil, nil, err
	}
	for k, ent := range entries {
		ent.key = k
		entries[k] = ent
	}
	same := func(a, b headerEntry) (bool, error) { return sameData(fh, base, a, b) }
	return entries, same, func() { fh.Close() }, nil
}

// headerEntry is one tensor of a safetensors header.
type headerEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
	key     string
}

// maxHeader bounds the header's length, as the safetensors format does
// (100 MB).
const maxHeader = 100 << 20

// readHeader reads the tensors' entries of a safetensors file and the
// offset of its data, without reading the data.
func readHeader(r io.ReaderAt, path string) (map[string]headerEntry, int64, error) {
	var lenBuf [8]byte
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, 0, fmt.Errorf("text: load %s: reading the header length: %w", path, err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n == 0 || n > maxHeader {
		return nil, 0, fmt.Errorf("text: load %s: header length %d: not a safetensors file", path, n)
	}
	raw := make([]byte, n)
	if _, err := r.ReadAt(raw, 8); err != nil {
		return nil, 0, fmt.Errorf("text: load %s: reading the header: %w", path, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, 0, fmt.Errorf("text: load %s: header: %w", path, err)
	}
	out := map[string]headerEntry{}
	for name, v := range fields {
		if name == "__metadata__" {
			continue
		}
		var ent headerEntry
		if err := json.Unmarshal(v, &ent); err != nil {
			return nil, 0, fmt.Errorf("text: load %s: header entry %s: %w", path, name, err)
		}
		if ent.Shape == nil {
			ent.Shape = []int{}
		}
		out[name] = ent
	}
	return out, 8 + int64(n), nil
}

// sameData reports whether two tensors of the file hold the same dtype,
// shape and bytes.
func sameData(r io.ReaderAt, base int64, a, b headerEntry) (bool, error) {
	if a.DType != b.DType || !slices.Equal(a.Shape, b.Shape) {
		return false, nil
	}
	la, lb := a.Offsets[1]-a.Offsets[0], b.Offsets[1]-b.Offsets[0]
	if la != lb || la < 0 {
		return false, nil
	}
	read := func(e headerEntry) ([]byte, error) {
		buf := make([]byte, la)
		if _, err := r.ReadAt(buf, base+e.Offsets[0]); err != nil {
			return nil, fmt.Errorf("reading %s: %w", e.key, err)
		}
		return buf, nil
	}
	da, err := read(a)
	if err != nil {
		return false, err
	}
	db, err := read(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(da, db), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

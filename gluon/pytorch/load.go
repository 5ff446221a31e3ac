// Package pytorch reads the files torch.save writes: state dicts, whole
// checkpoints (model and optimizer state, epoch counters) and any nesting
// of dicts, lists and tuples of tensors, without Python. LoadStateDict
// gives the tensors under their dotted names, ready for a ParamDict or the
// model zoo's LoadStateDict; Load gives the whole saved value.
//
// The file is PyTorch's zip format (torch.save since PyTorch 1.6): a
// pickle of the value and one member per tensor storage. The pickle is
// read as data, never run: tensors are rebuilt from their storages (with
// their offsets and strides, so views and tensors that share a storage
// read correctly), dicts and OrderedDicts become *Dict, lists *List,
// tuples Tuple, and any other Python object an *Object recording its
// class and arguments, which is what torch.load(weights_only=True)
// accepts and more. The files of torch.jit.save and the legacy format of
// PyTorch before 1.6 are errors that say so.
//
// Tensor dtypes map onto nd's: float32, float64, float16, bfloat16, int32,
// int64, uint8 and bool as the nd dtype of that name; int8 and int16 as
// Int64; complex64 and complex128 as Float32 and Float64 arrays with a
// trailing axis of 2 (the layout of torch.view_as_real). Quantized and
// sparse tensors are errors naming the tensor's rebuild function.
package pytorch

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Load reads the value saved at path by torch.save, with every tensor an
// *nd.NDArray on dev. A value that fails to read returns no arrays.
func Load(path string, dev ctx.Context) (any, error) {
	if err := ctx.Check(dev); err != nil {
		return nil, fmt.Errorf("pytorch: %w", err)
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("pytorch: %s: %w", path, notZip(path, err))
	}
	defer z.Close()
	v, err := load(&z.Reader)
	if err != nil {
		return nil, fmt.Errorf("pytorch: %s: %w", path, err)
	}
	made := map[*hostTensor]*nd.NDArray{}
	out, err := materialize(v, dev, made)
	if err != nil {
		for _, a := range made {
			a.Release()
		}
		return nil, fmt.Errorf("pytorch: %s: %w", path, err)
	}
	return out, nil
}

// notZip explains a file that is not a readable zip archive.
func notZip(path string, err error) error {
	if !errors.Is(err, zip.ErrFormat) {
		return err
	}
	switch kind(path) {
	case legacyFile:
		return errors.New("this is PyTorch's legacy format (before 1.6): load it in PyTorch and save it again with torch.save")
	case zipFile:
		return fmt.Errorf("a zip archive that is truncated or corrupt (an interrupted download?): %w", err)
	}
	return errors.New("not a torch.save file (not a zip archive)")
}

// The kinds of file a path may hold, by its first bytes.
const (
	otherFile  = iota
	zipFile    // torch.save's format since PyTorch 1.6
	legacyFile // a pickle: torch.save's format before 1.6
)

// kind tells a file's kind from its first bytes.
func kind(path string) int {
	b := make([]byte, 4)
	n, _ := openHead(path, b)
	switch {
	case n == 4 && string(b) == "PK\x03\x04":
		return zipFile
	case n >= 3 && b[0] == 0x80 && b[1] <= 5 && b[2] == 0x8a: // a pickle that starts with torch's magic number
		return legacyFile
	}
	return otherFile
}

// IsTorchFile reports whether the file at path starts as a file torch.save
// writes does: a zip archive (PyTorch 1.6 and later) or a pickle with
// torch's legacy magic number (earlier versions, which Load names in its
// error). Loaders that take several formats use it to choose this package.
func IsTorchFile(path string) bool { return kind(path) != otherFile }

// load unpickles the archive's data.pkl with its storages.
func load(z *zip.Reader) (any, error) {
	var pkl *zip.File
	prefix := ""
	for _, f := range z.File {
		dir, base := path.Split(f.Name)
		switch {
		case base == "constants.pkl" || strings.HasSuffix(dir, "/code/"):
			return nil, errors.New("this is a TorchScript archive (torch.jit.save): save the model's state_dict with torch.save instead")
		case base == "data.pkl" && strings.Count(f.Name, "/") <= 1:
			if pkl != nil {
				return nil, errors.New("the archive has two data.pkl members")
			}
			pkl, prefix = f, dir
		}
	}
	if pkl == nil {
		return nil, errors.New("the archive has no data.pkl: not a torch.save file")
	}
	members := map[string]*zip.File{}
	for _, f := range z.File {
		members[f.Name] = f
	}
	bigEndian := false
	if f := members[prefix+"byteorder"]; f != nil {
		b, err := readMember(f, 16)
		if err != nil {
			return nil, err
		}
		switch strings.TrimSpace(string(b)) {
		case "little":
		case "big":
			bigEndian = true
		default:
			return nil, fmt.Errorf("unknown byte order %q", b)
		}
	}
	data, err := readMember(pkl, pkl.UncompressedSize64)
	if err != nil {
		return nil, err
	}
	r := &reader{members: members, prefix: prefix + "data/", big: bigEndian, storages: map[string]*storage{}}
	u := &unpickler{data: data, reduce: r.reduce, persistentLoad: r.persistentLoad}
	return u.run()
}

// readMember reads a whole archive member of at most limit bytes.
func readMember(f *zip.File, limit uint64) ([]byte, error) {
	if f.UncompressedSize64 > limit {
		return nil, fmt.Errorf("member %s has %d bytes, more than the %d expected", f.Name, f.UncompressedSize64, limit)
	}
	// The size is allocated up front: it must be one the member's
	// compressed bytes can hold (stored, or deflate's ratio at most).
	if (f.Method == zip.Store && f.UncompressedSize64 != f.CompressedSize64) ||
		f.UncompressedSize64 > 1100*f.CompressedSize64+1024 {
		return nil, fmt.Errorf("member %s claims %d bytes from %d compressed ones: a corrupt archive", f.Name, f.UncompressedSize64, f.CompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", f.Name, err)
	}
	defer rc.Close()
	b := make([]byte, f.UncompressedSize64)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, fmt.Errorf("member %s: %w", f.Name, noEOF(err))
	}
	// Reading past the end checks the member's CRC.
	if n, err := rc.Read(make([]byte, 1)); n > 0 || (err != nil && err != io.EOF) {
		if err == nil {
			err = fmt.Errorf("has more than the %d bytes its header says", len(b))
		}
		return nil, fmt.Errorf("member %s: %w", f.Name, err)
	}
	return b, nil
}

// noEOF turns io.EOF into io.ErrUnexpectedEOF: a member that ends early
// is truncated.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// openHead reads the first bytes of a file into b.
func openHead(path string, b []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.ReadFull(f, b)
}

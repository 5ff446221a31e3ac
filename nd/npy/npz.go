package npy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/atomicfile"
	"github.com/goluon/goluon/nd"
)

// SaveZ writes arrays to path as an uncompressed .npz archive
// (numpy.savez with keyword arguments): one member name.npy for each,
// in the names' sorted order. The file is replaced atomically, and any
// array that cannot be written (nil, released, BFloat16) fails the whole
// save before anything is written.
func SaveZ(path string, arrays map[string]*nd.NDArray) error {
	return saveZ(path, arrays, zip.Store)
}

// SaveZCompressed is SaveZ with each member deflated
// (numpy.savez_compressed).
func SaveZCompressed(path string, arrays map[string]*nd.NDArray) error {
	return saveZ(path, arrays, zip.Deflate)
}

func saveZ(path string, arrays map[string]*nd.NDArray, method uint16) error {
	names := make([]string, 0, len(arrays))
	for name := range arrays {
		if name == "" || strings.ContainsAny(name, "/\\") {
			return fmt.Errorf("npy: array name %q cannot name an archive member (saving %s)", name, path)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	files := make([][]byte, len(names))
	for i, name := range names {
		var b bytes.Buffer
		if err := Write(&b, arrays[name]); err != nil {
			return fmt.Errorf("%w (array %q, saving %s)", err, name, path)
		}
		files[i] = b.Bytes()
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		z := zip.NewWriter(w)
		for i, name := range names {
			m, err := z.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: method})
			if err != nil {
				return err
			}
			if _, err := m.Write(files[i]); err != nil {
				return err
			}
		}
		return z.Close()
	})
}

// LoadZ reads every array of the .npz archive at path onto dev, keyed by
// member name without its ".npy" (numpy.load's keys). Members that are not
// .npy files are skipped, as they are no arrays. A member that cannot be
// read fails the whole load, and no arrays are returned.
func LoadZ(path string, dev ctx.Context) (map[string]*nd.NDArray, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("npy: %s is not a readable .npz archive: %w", path, err)
	}
	defer z.Close()
	out := map[string]*nd.NDArray{}
	fail := func(err error) (map[string]*nd.NDArray, error) {
		for _, a := range out {
			a.Release()
		}
		return nil, err
	}
	for _, m := range z.File {
		name, ok := strings.CutSuffix(m.Name, ".npy")
		if !ok || m.FileInfo().IsDir() {
			continue
		}
		if _, dup := out[name]; dup {
			return fail(fmt.Errorf("npy: %s has member %s twice", path, m.Name))
		}
		r, err := m.Open()
		if err != nil {
			return fail(fmt.Errorf("npy: %s, member %s: %w", path, m.Name, err))
		}
		a, err := Read(r, dev)
		if err == nil {
			// Reading to the end checks the member's CRC.
			if _, cerr := io.Copy(io.Discard, r); cerr != nil {
				a.Release()
				err = cerr
			}
		}
		r.Close()
		if err != nil {
			return fail(fmt.Errorf("%w (%s, member %s)", err, path, m.Name))
		}
		out[name] = a
	}
	return out, nil
}

package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// npyFile builds a version 1.0 file with the given header text and data.
func npyFile(text string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic + "\x01\x00")
	b.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(text))))
	b.WriteString(text)
	b.Write(data)
	return b.Bytes()
}

func TestReadRejectsBadFiles(t *testing.T) {
	good := "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n"
	eight := make([]byte, 8)
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "not a .npy file"},
		{"bad magic", []byte("PK\x03\x04 not numpy at all"), "not a .npy file"},
		{"version 4", []byte(magic + "\x04\x00\x10\x00"), "version 4.0"},
		{"header cut", npyFile(good, nil)[:20], "header ends early"},
		{"data cut", npyFile(good, eight[:5]), "ends after 5 of its 8 bytes"},
		{"no data", npyFile(good, nil), "ends after 0 of its 8 bytes"},
		{"not a dict", npyFile("('<f4', False, (2,))\n", eight), "not a dictionary"},
		{"missing shape", npyFile("{'descr': '<f4', 'fortran_order': False}\n", eight), `no "shape"`},
		{"unknown key", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", eight), `unknown key "x"`},
		{"key twice", npyFile("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}\n", eight), "twice"},
		{"negative dim", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", eight), "non-negative"},
		{"order not bool", npyFile("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }\n", eight), "not True or False"},
		{"shape not tuple", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': 2, }\n", eight), "not a tuple"},
		{"unterminated", npyFile("{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }\n", eight), "expected"},
		{"trailing text", npyFile(good[:len(good)-1]+" junk\n", eight), "after its dictionary"},
		{"bad descr", npyFile("{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }\n", eight), "no array form"},
		{"huge shape", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n", eight), "too large"},
		{"huge claim", npyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000,), }\n", eight), "ends after 8 of its 8000000000 bytes"},
		{"deep nesting", npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "+strings.Repeat("(", 100)+"}\n", eight), "nested too deeply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Read(bytes.NewReader(c.file), ctx.CPU(0))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if a != nil {
				t.Fatal("an array came back with the error")
			}
		})
	}
}

func TestWriteRejects(t *testing.T) {
	released := nd.Zeros(ctx.CPU(0), nd.Float32, 2)
	released.Release()
	bf := nd.Zeros(ctx.CPU(0), nd.BFloat16, 2)
	defer bf.Release()
	cases := []struct {
		name string
		a    *nd.NDArray
		want string
	}{
		{"nil", nil, "nil or released"},
		{"released", released, "nil or released"},
		{"bfloat16", bf, "no bfloat16 dtype"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, c.a); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if b.Len() != 0 {
				t.Errorf("%d bytes written", b.Len())
			}
		})
	}
}

func TestFailedSavesKeepTheOldFile(t *testing.T) {
	dir := t.TempDir()
	good := nd.FromSlice(ctx.CPU(0), []float32{1, 2}, 2)
	defer good.Release()
	bf := nd.Zeros(ctx.CPU(0), nd.BFloat16, 2)
	defer bf.Release()
	npy, npz := filepath.Join(dir, "a.npy"), filepath.Join(dir, "a.npz")
	if err := Save(npy, good); err != nil {
		t.Fatal(err)
	}
	if err := SaveZ(npz, map[string]*nd.NDArray{"w": good}); err != nil {
		t.Fatal(err)
	}
	before := [][]byte{read(t, npy), read(t, npz)}
	if err := Save(npy, bf); err == nil {
		t.Fatal("saved a bfloat16 array")
	}
	for _, bad := range []map[string]*nd.NDArray{{"w": good, "v": bf}, {"a/b": good}, {"": good}} {
		if err := SaveZ(npz, bad); err == nil {
			t.Fatalf("saved %v", bad)
		}
	}
	if !bytes.Equal(read(t, npy), before[0]) || !bytes.Equal(read(t, npz), before[1]) {
		t.Error("a failed save changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files left in the directory, want 2", len(entries))
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadZRejectsBadArchives(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, members map[string][]byte) string {
		var b bytes.Buffer
		z := zip.NewWriter(&b)
		for n, data := range members {
			w, _ := z.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
			w.Write(data)
		}
		z.Close()
		path := filepath.Join(dir, name)
		os.WriteFile(path, b.Bytes(), 0o644)
		return path
	}
	var one bytes.Buffer
	a := nd.FromSlice(ctx.CPU(0), []float32{1, 2}, 2)
	defer a.Release()
	Write(&one, a)
	okPath := write("ok.npz", map[string][]byte{"a.npy": one.Bytes(), "README.txt": []byte("not an array")})
	got, err := LoadZ(okPath, ctx.CPU(0))
	if err != nil || len(got) != 1 || got["a"] == nil {
		t.Fatalf("LoadZ = %v, %v; want the one array", got, err)
	}
	got["a"].Release()

	// A flipped data byte: the member's CRC no longer matches.
	raw := read(t, okPath)
	i := bytes.Index(raw, one.Bytes()[len(one.Bytes())-8:])
	raw[i] ^= 0xff
	crc := filepath.Join(dir, "crc.npz")
	os.WriteFile(crc, raw, 0o644)

	notZip := filepath.Join(dir, "plain.npz")
	os.WriteFile(notZip, one.Bytes(), 0o644)
	cases := []struct {
		path, want string
	}{
		{write("bad.npz", map[string][]byte{"a.npy": one.Bytes(), "b.npy": []byte("junk")}), "member b.npy"},
		{crc, "checksum"},
		{notZip, "not a readable .npz archive"},
		{filepath.Join(dir, "missing.npz"), "not a readable .npz archive"},
	}
	for _, c := range cases {
		got, err := LoadZ(c.path, ctx.CPU(0))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", filepath.Base(c.path), err, c.want)
		}
		if got != nil {
			t.Errorf("%s: arrays came back with the error", filepath.Base(c.path))
		}
	}
}

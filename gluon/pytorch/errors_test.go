package pytorch

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// rewrite copies the archive at src to a new file with edit applied to
// each member (nil drops it) and extra members added.
func rewrite(t *testing.T, src string, edit func(name string, data []byte) []byte, extra map[string][]byte) string {
	t.Helper()
	z, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range z.File {
		r, _ := f.Open()
		var data bytes.Buffer
		data.ReadFrom(r)
		r.Close()
		d := edit(f.Name, data.Bytes())
		if d == nil {
			continue
		}
		m, _ := w.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Store})
		m.Write(d)
	}
	for name, d := range extra {
		m, _ := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		m.Write(d)
	}
	w.Close()
	path := filepath.Join(t.TempDir(), "edited.pt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadRejectsBadFiles(t *testing.T) {
	const sd = "testdata/state_dict.pt"
	pkl := func(f func([]byte) []byte) func(string, []byte) []byte {
		return func(name string, d []byte) []byte {
			if strings.HasSuffix(name, "data.pkl") {
				return f(d)
			}
			return d
		}
	}
	text := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(text, []byte("not a checkpoint"), 0o644)
	cases := []struct {
		name, path, want string
	}{
		{"legacy format", "testdata/legacy.pt", "legacy format"},
		{"TorchScript", "testdata/script.pt", "TorchScript archive"},
		{"text file", text, "not a torch.save file"},
		{"missing", filepath.Join(t.TempDir(), "none.pt"), "no such file"},
		{"no data.pkl", rewrite(t, sd, func(n string, d []byte) []byte {
			if strings.HasSuffix(n, "data.pkl") {
				return nil
			}
			return d
		}, nil), "no data.pkl"},
		{"storage missing", rewrite(t, sd, func(n string, d []byte) []byte {
			if strings.HasSuffix(n, "/data/0") {
				return nil
			}
			return d
		}, nil), "no member"},
		{"storage short", rewrite(t, sd, func(n string, d []byte) []byte {
			if strings.HasSuffix(n, "/data/0") {
				return d[:len(d)-4]
			}
			return d
		}, nil), "fewer than its"},
		{"pickle cut", rewrite(t, sd, pkl(func(d []byte) []byte { return d[:len(d)/2] }), nil), "ends early"},
		{"pickle unknown opcode", rewrite(t, sd, pkl(func(d []byte) []byte { return append([]byte{0x80, 2, 0xff}, d[2:]...) }), nil), "not supported"},
		{"pickle newer protocol", rewrite(t, sd, pkl(func(d []byte) []byte { return append([]byte{0x80, 9}, d[2:]...) }), nil), "protocol 9"},
		{"quantized tensor", rewrite(t, sd, pkl(func(d []byte) []byte {
			return bytes.Replace(d, []byte("_rebuild_tensor_v2"), []byte("_rebuild_qtensor"), 1)
		}), nil), "quantized"},
		{"big byte order unknown", rewrite(t, sd, func(n string, d []byte) []byte { return d },
			map[string][]byte{"state_dict/byteorder": []byte("middle")}), "unknown byte order"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := LoadStateDict(c.path, ctx.CPU(0))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if v != nil {
				t.Fatal("arrays came back with the error")
			}
		})
	}
}

func TestLoadStateDictWithoutTensors(t *testing.T) {
	// A pickle of {'epoch': 3} in a torch.save archive.
	p := []byte("\x80\x02}q\x00X\x05\x00\x00\x00epochq\x01K\x03s.")
	path := rewrite(t, "testdata/state_dict.pt", func(n string, d []byte) []byte {
		if strings.HasSuffix(n, "data.pkl") {
			return p
		}
		return d
	}, nil)
	if _, err := LoadTensors(path, ctx.CPU(0)); err == nil || !strings.Contains(err.Error(), "no tensors") {
		t.Fatalf("err = %v", err)
	}
	if _, err := LoadStateDict(path, ctx.CPU(0)); err == nil || !strings.Contains(err.Error(), "its keys: epoch") {
		t.Fatalf("err = %v", err)
	}
	v, err := Load(path, ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := v.(*Dict).Get("epoch"); e != int64(3) {
		t.Errorf("epoch %v", e)
	}
}

package pytorch

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"
)

// FuzzUnpickle runs the unpickler, with torch's storages and calls, on
// arbitrary pickles: it returns a value or an error and never panics.
func FuzzUnpickle(f *testing.F) {
	z, err := zip.OpenReader("testdata/checkpoint.pt")
	if err != nil {
		f.Fatal(err)
	}
	defer z.Close()
	members := map[string]*zip.File{}
	for _, m := range z.File {
		members[m.Name] = m
		if bytes.HasSuffix([]byte(m.Name), []byte("data.pkl")) {
			r, _ := m.Open()
			b, _ := io.ReadAll(r)
			r.Close()
			f.Add(b)
		}
	}
	f.Add([]byte("\x80\x02(K\x01\x85t."))
	f.Add([]byte("(lp0\nI1\naS'x'\np1\na."))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &reader{members: members, prefix: "checkpoint/data/", storages: map[string]*storage{}}
		u := &unpickler{data: data, reduce: r.reduce, persistentLoad: r.persistentLoad}
		u.run()
	})
}

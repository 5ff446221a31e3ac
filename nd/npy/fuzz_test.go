package npy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// FuzzRead feeds arbitrary bytes to Read: it returns an array or an
// error, never panics, and an array it returns writes back and reads again
// to the same bytes.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.npy")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Read(bytes.NewReader(data), ctx.CPU(0))
		if err != nil {
			return
		}
		defer a.Release()
		var once, twice bytes.Buffer
		if err := Write(&once, a); err != nil {
			t.Fatal(err)
		}
		b, err := Read(bytes.NewReader(once.Bytes()), ctx.CPU(0))
		if err != nil {
			t.Fatalf("reading what Write wrote: %v", err)
		}
		defer b.Release()
		if err := Write(&twice, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatal("a second round trip changed the bytes")
		}
	})
}

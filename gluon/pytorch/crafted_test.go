package pytorch

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// archive writes a torch.save-like zip with the given pickle and storages.
func archive(t *testing.T, pkl []byte, storages map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	put := func(name string, b []byte) {
		w, err := z.CreateHeader(&zip.FileHeader{Name: "archive/" + name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	put("data.pkl", pkl)
	for k, v := range storages {
		put("data/"+k, v)
	}
	z.Close()
	path := filepath.Join(t.TempDir(), "x.pt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tensorPickle writes _rebuild_tensor_v2 of float storage "0".
func tensorPickle(p *pickler, numel, off int64, size, stride []int64) {
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.raw('(', '(')
	p.str("storage")
	p.global("torch", "FloatStorage")
	p.str("0")
	p.str("cpu")
	p.int(numel)
	p.raw('t', 'Q')
	p.int(off)
	p.raw('(')
	for _, d := range size {
		p.int(d)
	}
	p.raw('t', '(')
	for _, d := range stride {
		p.int(d)
	}
	p.raw('t', 0x89, 'N', 't', 'R')
}

// TestCraftedPicklesFail: pickles torch.save never writes, built to break
// a reader — an offset that overflows the bounds check, shared tuples or
// lists nested so that walking them naively takes 2^64 steps, nesting
// deeper than the stack — end in errors, and no arrays stay in use.
func TestCraftedPicklesFail(t *testing.T) {
	offset := func() []byte {
		var b bytes.Buffer
		p := &pickler{w: &b}
		p.raw(0x80, 2, '}', '(')
		p.str("w")
		tensorPickle(p, 4, 1<<63-1, []int64{2}, []int64{1})
		p.raw('u', '.')
		return b.Bytes()
	}()
	tupleDAG := []byte{0x80, 2, 'N'}
	for range 64 {
		tupleDAG = append(tupleDAG, '2', 0x86) // DUP, TUPLE2: t = (t', t')
	}
	tupleDAG = append(tupleDAG, '.')
	listDAG := []byte{0x80, 2, ']'}
	for range 90 {
		listDAG = append(listDAG, 'q', 0, '0', ']', '(', 'h', 0, 'h', 0, 'e') // l = [l', l']
	}
	listDAG = append(listDAG, '.')
	const deep = 200000
	nested := append([]byte{0x80, 2}, bytes.Repeat([]byte{']'}, deep)...)
	nested = append(nested, bytes.Repeat([]byte{'a'}, deep-1)...)
	nested = append(nested, '.')
	cases := []struct {
		name   string
		pkl    []byte
		want   string // LoadTensors' error; LoadStateDict's is wantSD
		wantSD string
	}{
		{"offset past int64", offset, "reads past its storage", "reads past its storage"},
		{"shared tuples", tupleDAG, "more than", "holds a tuple"},
		{"shared lists", listDAG, "more than", "holds a list"},
		{"deep lists", nested, "nested more than", "nested more than"},
	}
	before := nd.MemoryStats(ctx.CPU(0)).InUse
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := archive(t, c.pkl, map[string][]byte{"0": make([]byte, 16)})
			for i, load := range []func(string, ctx.Context) (map[string]*nd.NDArray, error){LoadTensors, LoadStateDict} {
				want := []string{c.want, c.wantSD}[i]
				got, err := load(path, ctx.CPU(0))
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one containing %q", err, want)
				}
				if got != nil {
					t.Error("arrays came back with the error")
				}
			}
		})
	}
	if after := nd.MemoryStats(ctx.CPU(0)).InUse; after != before {
		t.Errorf("%d bytes left in use", after-before)
	}
}

// TestModuleArraysReleased: LoadTensors of a module saved whole returns
// its parameters under their state-dict names, and LoadStateDict of a
// checkpoint releases the tensors it does not return (the optimizer's).
func TestModuleArraysReleased(t *testing.T) {
	before := nd.MemoryStats(ctx.CPU(0)).InUse
	got, err := LoadTensors("testdata/module.pt", ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	if got["0.weight"] == nil || got["1.running_mean"] == nil || got["scratch"] != nil {
		t.Errorf("names %v", keys(got))
	}
	for _, a := range got {
		a.Release()
	}
	sd, err := LoadStateDict("testdata/checkpoint.pt", ctx.CPU(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range sd {
		a.Release()
	}
	if after := nd.MemoryStats(ctx.CPU(0)).InUse; after != before {
		t.Errorf("%d bytes left in use", after-before)
	}
}

func keys(m map[string]*nd.NDArray) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestKeyNames: dict keys that are not strings name tensors as Python
// prints them.
func TestKeyNames(t *testing.T) {
	for _, c := range []struct {
		key  any
		want string
	}{
		{"w", "w"}, {int64(-3), "-3"}, {nil, "None"}, {true, "True"}, {2.5, "2.5"},
		{Tuple{int64(1), "a"}, "(1, a)"}, {Tuple{int64(7)}, "(7,)"},
	} {
		if got := keyString(c.key); got != c.want {
			t.Errorf("keyString(%v) = %q, want %q", c.key, got, c.want)
		}
	}
}

// BenchmarkUnpickleManyKeys: a dict of 100,000 entries and a pickle of
// text opcodes read in time linear in their size.
func BenchmarkUnpickleManyKeys(b *testing.B) {
	var buf bytes.Buffer
	p := &pickler{w: &buf}
	p.raw(0x80, 2, '}', '(')
	for i := range 100000 {
		p.str("key" + string(rune('a'+i%26)) + string(rune(i)))
		p.int(int64(i))
	}
	p.raw('u', '.')
	data := buf.Bytes()
	for b.Loop() {
		u := &unpickler{data: data, reduce: func(Global, []any) (any, bool, error) { return nil, false, nil }}
		if _, err := u.run(); err != nil {
			b.Fatal(err)
		}
	}
}

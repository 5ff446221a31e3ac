package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// corpusPackages are the standard-library packages whose source (the
// non-test .go files directly in each directory, in sorted order) make the
// default corpus: about 1 MB of Go, the size of nanoGPT's Shakespeare. Every
// machine that builds this program has them, under $(go env GOROOT)/src.
// The text differs a little between Go releases; the run's summary records
// the Go version and the corpus size.
var corpusPackages = []string{
	"bufio", "bytes", "encoding/json", "fmt", "go/ast", "go/parser", "go/printer",
	"go/scanner", "go/token", "sort", "strconv", "strings", "text/template",
}

// goroot finds the Go distribution: $GOROOT, `go env GOROOT`, then the one
// the program was built with.
func goroot() (string, error) {
	if r := os.Getenv("GOROOT"); r != "" {
		return r, nil
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if r := strings.TrimSpace(string(out)); r != "" {
			return r, nil
		}
	}
	return "", errors.New("cannot find the Go distribution (set GOROOT or put go on PATH), or pass -text FILE")
}

// goCorpus concatenates the corpus packages' source from root/src.
func goCorpus(root string) ([]byte, error) {
	var text bytes.Buffer
	for _, pkg := range corpusPackages {
		dir := filepath.Join(root, "src", filepath.FromSlash(pkg))
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading the Go source corpus: %w", err)
		}
		var names []string
		for _, e := range entries {
			if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				return nil, err
			}
			text.Write(b)
		}
	}
	return text.Bytes(), nil
}

// loadText returns the training text: the file at path, or the Go source
// corpus when path is empty, and a description of where it came from.
func loadText(path string) ([]byte, string, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("-text %s: no such file", path)
		}
		return b, path, err
	}
	root, err := goroot()
	if err != nil {
		return nil, "", err
	}
	b, err := goCorpus(root)
	return b, fmt.Sprintf("Go %s source of %d packages in %s/src", runtime.Version(), len(corpusPackages), root), err
}

// vocab maps the bytes that occur in a text to token ids 0..n-1 in byte
// order (a character-level model over bytes; Go source is almost all
// ASCII).
type vocab struct {
	bytes []byte
	id    [256]int
}

func newVocab(text []byte) *vocab {
	var seen [256]bool
	for _, c := range text {
		seen[c] = true
	}
	v := &vocab{}
	for c := range 256 {
		v.id[c] = -1
		if seen[c] {
			v.id[c] = len(v.bytes)
			v.bytes = append(v.bytes, byte(c))
		}
	}
	return v
}

func (v *vocab) size() int { return len(v.bytes) }

func (v *vocab) encode(text []byte) []int64 {
	out := make([]int64, len(text))
	for i, c := range text {
		out[i] = int64(v.id[c])
	}
	return out
}

func (v *vocab) decode(ids []int64) string {
	b := make([]byte, len(ids))
	for i, id := range ids {
		b[i] = v.bytes[id]
	}
	return string(b)
}

// splitmix64 is the batch sampler's generator, chosen because it is a few
// lines in any language: the PyTorch script draws the same batches.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// batch draws n windows of length t+1 from data: inputs [n·t] and targets
// shifted by one, as nanoGPT's get_batch does.
func batch(rng *splitmix64, data []int64, n, t int) (x, y []int64) {
	x = make([]int64, 0, n*t)
	y = make([]int64, 0, n*t)
	span := uint64(len(data) - t - 1)
	for range n {
		i := int(rng.next() % span)
		x = append(x, data[i:i+t]...)
		y = append(y, data[i+1:i+t+1]...)
	}
	return x, y
}

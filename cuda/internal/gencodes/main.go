// Command gencodes writes the files the Go and CUDA sides of the backend
// share: cuda/kernels/params.cuh and cuda/params_gen.go, the kernels'
// parameter structs and their packing, from one table (package codes);
// and cuda/kernels/opcodes.cuh, the C enums of the
// unary, binary and reduction op codes and of the element types, and
// cuda/opcodes_gen.go, their sizes, from the constants of
// nd/backend/ops.go and nd/backend/dtype.go, so that the kernels'
// codes are the backend's values by construction (the Go side passes
// int(op)). Run it with `go generate ./cuda/internal/gencodes`
// from the repository root, or as `go run ./cuda/internal/gencodes -check`
// to fail when the committed file is stale.
package main

//go:generate go run . -root ../../..

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goluon/goluon/cuda/internal/gencodes/codes"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	check := flag.Bool("check", false, "only check that the committed file is up to date")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gencodes:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	header, goFile, err := codes.Files(filepath.Join(root, "nd", "backend"))
	if err != nil {
		return err
	}
	params, paramsGo, err := codes.Params()
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path string
		want []byte
	}{{filepath.Join(root, "cuda", "kernels", "opcodes.cuh"), header}, {filepath.Join(root, "cuda", "opcodes_gen.go"), goFile},
		{filepath.Join(root, "cuda", "kernels", "params.cuh"), params}, {filepath.Join(root, "cuda", "params_gen.go"), paramsGo}} {
		if check {
			got, err := os.ReadFile(f.path)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, f.want) {
				return fmt.Errorf("%s is stale: run go generate ./cuda/internal/gencodes", f.path)
			}
			continue
		}
		if err := os.WriteFile(f.path, f.want, 0o644); err != nil {
			return err
		}
	}
	return nil
}

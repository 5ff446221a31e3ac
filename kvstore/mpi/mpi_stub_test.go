//go:build !mpi

package mpi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore/mpi"
)

func TestInitWithoutTagSaysHowToBuild(t *testing.T) {
	c, err := mpi.Init()
	if c != nil || !errors.Is(err, mpi.ErrNotBuilt) {
		t.Fatalf("Init() = %v, %v; want nil, ErrNotBuilt", c, err)
	}
	for _, want := range []string{"-tags mpi", "mpirun"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

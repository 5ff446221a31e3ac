//go:build !mpi

package dist_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi"
)

// Without -tags mpi the kind is registered but says how to get it.
func TestWithoutMPITagSaysHowToBuild(t *testing.T) {
	_, err := kvstore.Create(dist.Kind)
	if !errors.Is(err, mpi.ErrNotBuilt) || !strings.Contains(err.Error(), "-tags mpi") {
		t.Fatalf("Create(%q) without -tags mpi: %v", dist.Kind, err)
	}
	if err := dist.Finalize(); err != nil {
		t.Errorf("Finalize without MPI: %v", err)
	}
}

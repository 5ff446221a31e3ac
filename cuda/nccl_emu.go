//go:build cudaemu

package cuda

import (
	"errors"

	"github.com/goluon/goluon/nd/backend"
)

// NCCLPath reports that the emulator has no NCCL.
func NCCLPath() (string, int, error) { return "", 0, errors.New("cuda: no NCCL on the emulator") }

// allReduceNCCL declines: the emulator has no NCCL.
func (b *Backend) allReduceNCCL([]backend.Arg, int) (bool, error) { return false, nil }

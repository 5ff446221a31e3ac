//go:build cudaemu

package cuda

import (
	"errors"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// dnnState is empty: the emulator has no cuDNN, so its convolutions take
// the im2col path.
type dnnState struct{}

func dnnUsable(backend.ConvParams) bool { return false }

func (b *Backend) dnnConv(int, backend.ConvParams, backend.Arg, backend.Arg, backend.Arg) bool {
	return false
}

// ConvHalf reports false: without cuDNN the emulator has no half-precision
// convolution (package nd widens those).
func (b *Backend) ConvHalf(ctx.Context, backend.ConvParams) bool { return false }

// CudnnPath reports that the emulator has no cuDNN.
func CudnnPath() (string, int, error) { return "", 0, errors.New("cuda: no cuDNN on the emulator") }

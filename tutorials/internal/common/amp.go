package common

import (
	"flag"
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/nd"
)

// RegisterAMP defines -amp on fs, stored in v.
func RegisterAMP(fs *flag.FlagSet, v *string) {
	fs.StringVar(v, "amp", "", "mixed precision: fp16 or bf16 (float32 parameters, Dense/Conv in half precision, dynamic loss scaling for fp16); empty: float32")
}

// MixedPrecision applies an -amp value: the default session's ops
// autocast to float16 or bfloat16 (amp.Init) and tr gets a loss scaler
// (fixed at 1 for bfloat16). It returns the scaler (nil for "") and the
// function that turns autocast off again.
func MixedPrecision(mode string, tr *gluon.Trainer) (*amp.LossScaler, func(), error) {
	var dt nd.DType
	switch mode {
	case "":
		return nil, func() {}, nil
	case "fp16":
		dt = nd.Float16
	case "bf16":
		dt = nd.BFloat16
	default:
		return nil, nil, fmt.Errorf("-amp %q: want fp16, bf16 or nothing", mode)
	}
	s := amp.NewLossScaler(amp.ScalerOpts{DType: dt})
	if err := tr.SetGradScaler(s); err != nil {
		return nil, nil, err
	}
	return s, amp.Init(dt), nil
}

// ScaleLoss returns l multiplied by s's loss scale, or l when s is nil.
func ScaleLoss(s *amp.LossScaler, l *nd.NDArray) *nd.NDArray {
	if s == nil {
		return l
	}
	return s.Scale(l)
}

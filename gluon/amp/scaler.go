package amp

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/goluon/goluon/nd"
)

// ScalerOpts configures a LossScaler; zero fields take PyTorch
// GradScaler's defaults.
type ScalerOpts struct {
	// DType is the autocast dtype (default Float16). With BFloat16 the
	// scale is fixed at 1 unless InitScale is set.
	DType nd.DType
	// InitScale is the first scale (default 2¹⁶; 1 for BFloat16).
	InitScale float64
	// GrowthInterval is the number of finite steps in a row after which
	// the scale grows (default 2,000).
	GrowthInterval int
	// GrowthFactor multiplies the scale then (default 2), BackoffFactor
	// after a step that overflowed (default 0.5).
	GrowthFactor, BackoffFactor float64
	// MaxScale bounds the scale (default 2²⁴), MinScale from below
	// (default 2⁻²⁴).
	MaxScale, MinScale float64
	// Fixed keeps the scale constant (steps that overflow are still
	// skipped); it is the default for BFloat16.
	Fixed bool
}

// LossScaler is a dynamic loss scale (PyTorch's GradScaler): Scale
// multiplies the loss, a Trainer given it with SetGradScaler divides the
// gradients back and skips steps that overflowed, and the scale adapts.
// It implements gluon.GradScaler, and json.Marshaler and
// json.Unmarshaler for the Trainer's checkpoints. It is safe for
// concurrent use.
type LossScaler struct {
	mu      sync.Mutex
	o       ScalerOpts
	scale   float64
	clean   int // finite steps in a row since the last change
	skipped int // steps skipped in all
	steps   int // steps seen in all
}

// NewLossScaler returns a loss scaler with o's settings. Settings torch's
// GradScaler refuses (a scale that is not positive and finite, a growth
// factor not above 1, a backoff factor outside (0, 1), a negative
// interval, MinScale above MaxScale) panic with ErrArgument.
func NewLossScaler(o ScalerOpts) *LossScaler {
	if o.DType == 0 || o.DType == nd.Float32 {
		o.DType = nd.Float16
	}
	if o.DType == nd.BFloat16 && o.InitScale == 0 {
		o.InitScale, o.Fixed = 1, true
	}
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.InitScale, 1<<16)
	def(&o.GrowthFactor, 2)
	def(&o.BackoffFactor, 0.5)
	def(&o.MaxScale, 1<<24)
	def(&o.MinScale, 1.0/(1<<24))
	if o.GrowthInterval == 0 {
		o.GrowthInterval = 2000
	}
	pos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) } // NaN too
	switch {
	case !pos(o.InitScale) || !pos(o.MaxScale) || !pos(o.MinScale):
		nd.Panicf("amp.NewLossScaler", nd.ErrArgument, "scales must be positive and finite: init %g, min %g, max %g", o.InitScale, o.MinScale, o.MaxScale)
	case o.MinScale > o.MaxScale:
		nd.Panicf("amp.NewLossScaler", nd.ErrArgument, "min scale %g is above max scale %g", o.MinScale, o.MaxScale)
	case !(o.GrowthFactor > 1) || math.IsInf(o.GrowthFactor, 0):
		nd.Panicf("amp.NewLossScaler", nd.ErrArgument, "growth factor %g must be finite and above 1 (torch's GradScaler asserts it)", o.GrowthFactor)
	case !(o.BackoffFactor > 0 && o.BackoffFactor < 1):
		nd.Panicf("amp.NewLossScaler", nd.ErrArgument, "backoff factor %g must be in (0, 1)", o.BackoffFactor)
	case o.GrowthInterval < 0:
		nd.Panicf("amp.NewLossScaler", nd.ErrArgument, "growth interval %d must be positive", o.GrowthInterval)
	}
	return &LossScaler{o: o, scale: o.InitScale}
}

// Scale returns loss multiplied by the current scale, recorded like any
// op, so that backward from it computes scaled gradients.
func (s *LossScaler) Scale(loss *nd.NDArray) *nd.NDArray {
	return nd.MulScalar(loss, s.LossScale())
}

// LossScale returns the current scale.
func (s *LossScaler) LossScale() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scale
}

// Update adapts the scale after a step: finite gradients count toward
// growth, and a step that overflowed halves the scale (BackoffFactor) and
// restarts the count.
func (s *LossScaler) Update(finite bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps++
	if !finite {
		s.skipped++
		s.clean = 0
		if !s.o.Fixed {
			s.scale = math.Max(s.scale*s.o.BackoffFactor, s.o.MinScale)
		}
		return
	}
	s.clean++
	if !s.o.Fixed && s.clean >= s.o.GrowthInterval {
		s.scale = math.Min(s.scale*s.o.GrowthFactor, s.o.MaxScale)
		s.clean = 0
	}
}

// Skipped returns the number of steps skipped because their gradients
// were not finite, and the number of steps seen.
func (s *LossScaler) Skipped() (skipped, steps int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.skipped, s.steps
}

// scalerState is what a checkpoint keeps of a LossScaler.
type scalerState struct {
	Scale   float64 `json:"scale"`
	Clean   int     `json:"growth_tracker"`
	Skipped int     `json:"skipped"`
	Steps   int     `json:"steps"`
}

// MarshalJSON returns the scaler's state: the scale, the count of finite
// steps toward growth and the totals.
func (s *LossScaler) MarshalJSON() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(scalerState{Scale: s.scale, Clean: s.clean, Skipped: s.skipped, Steps: s.steps})
}

// UnmarshalJSON restores a state MarshalJSON wrote; the settings stay
// those the scaler was made with.
func (s *LossScaler) UnmarshalJSON(b []byte) error {
	var st scalerState
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	if !(st.Scale > 0) || math.IsInf(st.Scale, 0) || st.Clean < 0 || st.Skipped < 0 || st.Steps < 0 {
		return fmt.Errorf("amp: invalid loss scaler state %s", b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scale, s.clean, s.skipped, s.steps = st.Scale, st.Clean, st.Skipped, st.Steps
	return nil
}

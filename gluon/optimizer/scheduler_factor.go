package optimizer

import (
	"fmt"
	"math"
	"slices"
)

// Factor multiplies the learning rate by factor every step updates, never
// going below stopFactorLR once it has started to decay (MXNet's
// FactorScheduler). After warm-up, at 1-based step n:
//
//	k  = floor((n−1)/step)        (the number of multiples of step below n)
//	lr = baseLR                     if k = 0
//	lr = max(baseLR·factor^k, stopFactorLR) otherwise
//
// so with step 10 updates 1 to 10 run at baseLR and update 11 at
// baseLR·factor, as MXNet (which decays once num_update > count + step).
type Factor struct {
	step                         int
	factor, stopFactorLR, baseLR float64
	warmup                       Warmup
}

var _ Scheduler = (*Factor)(nil)

// FactorOpts configures NewFactor; the fields are the arguments of MXNet's
// FactorScheduler(step, factor, stop_factor_lr, base_lr, warmup_...).
type FactorOpts struct {
	Step         int     // decay every Step updates (>= 1)
	Factor       float64 // the multiplier, in (0, 1]
	StopFactorLR float64 // the rate never decays below this (finite, >= 0)
	BaseLR       float64 // the rate before the first decay (finite, >= 0)
	Warmup       Warmup  // none when zero
}

// NewFactor returns a Factor schedule, or an error naming the first
// invalid option.
func NewFactor(o FactorOpts) (*Factor, error) {
	const name = "Factor"
	step, factor, stopFactorLR, baseLR := o.Step, o.Factor, o.StopFactorLR, o.BaseLR
	if step < 1 {
		return nil, fmt.Errorf("optimizer.%s: step %d must be >= 1", name, step)
	}
	if err := checkFactor(name, factor); err != nil {
		return nil, err
	}
	if err := checkRate(name, "stop_factor_lr", stopFactorLR); err != nil {
		return nil, err
	}
	if err := checkRate(name, "base lr", baseLR); err != nil {
		return nil, err
	}
	w, err := checkWarmup(name, baseLR, o.Warmup)
	if err != nil {
		return nil, err
	}
	return &Factor{step: step, factor: factor, stopFactorLR: stopFactorLR, baseLR: baseLR, warmup: w}, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *Factor) LR(step int) float64 {
	step = clampStep(step)
	if lr, ok := s.warmup.lr(step, s.baseLR); ok {
		return lr
	}
	k := 0
	if step > 0 {
		k = (step - 1) / s.step
	}
	if k == 0 {
		return s.baseLR
	}
	return max(s.baseLR*math.Pow(s.factor, float64(k)), s.stopFactorLR)
}

// MultiFactor multiplies the learning rate by factor as each of the given
// update numbers is passed (MXNet's MultiFactorScheduler). After warm-up,
// at 1-based step n:
//
//	lr = baseLR·factor^k,  k = the number of steps s_i with n > s_i
//
// so with steps [10, 20] update 10 still runs at baseLR, update 11 at
// baseLR·factor and update 21 at baseLR·factor².
type MultiFactor struct {
	steps          []int
	factor, baseLR float64
	warmup         Warmup
}

var _ Scheduler = (*MultiFactor)(nil)

// MultiFactorOpts configures NewMultiFactor; the fields are the arguments
// of MXNet's MultiFactorScheduler(step, factor, base_lr, warmup_...).
type MultiFactorOpts struct {
	Steps  []int   // non-empty, strictly increasing, each >= 1
	Factor float64 // the multiplier, in (0, 1]
	BaseLR float64 // finite, >= 0
	Warmup Warmup  // none when zero
}

// NewMultiFactor returns a MultiFactor schedule, or an error naming the
// first invalid option.
func NewMultiFactor(o MultiFactorOpts) (*MultiFactor, error) {
	const name = "MultiFactor"
	steps, factor, baseLR := o.Steps, o.Factor, o.BaseLR
	if len(steps) == 0 {
		return nil, fmt.Errorf("optimizer.%s: needs at least one step", name)
	}
	for i, s := range steps {
		if s < 1 {
			return nil, fmt.Errorf("optimizer.%s: step %d must be >= 1", name, s)
		}
		if i > 0 && s <= steps[i-1] {
			return nil, fmt.Errorf("optimizer.%s: steps %v must increase strictly", name, steps)
		}
	}
	if err := checkFactor(name, factor); err != nil {
		return nil, err
	}
	if err := checkRate(name, "base lr", baseLR); err != nil {
		return nil, err
	}
	w, err := checkWarmup(name, baseLR, o.Warmup)
	if err != nil {
		return nil, err
	}
	return &MultiFactor{steps: slices.Clone(steps), factor: factor, baseLR: baseLR, warmup: w}, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *MultiFactor) LR(step int) float64 {
	step = clampStep(step)
	if lr, ok := s.warmup.lr(step, s.baseLR); ok {
		return lr
	}
	k := 0
	for _, b := range s.steps {
		if step > b {
			k++
		}
	}
	return s.baseLR * math.Pow(s.factor, float64(k))
}

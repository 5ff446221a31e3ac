package optimizer

import (
	"fmt"
)

// This file holds what the learning-rate schedules share: MXNet's warm-up
// (lr_scheduler.LRScheduler) and argument checks.
//
// Every schedule here is a pure function of the update number: LR(step)
// gives the same value whatever was asked before, so a schedule is safe
// for concurrent use and may be queried out of order. MXNet's schedulers
// keep state (FactorScheduler multiplies its base_lr as updates pass) and
// assume non-decreasing calls; for such calls the values are the same.
//
// step is 1-based, as Param.Update and MXNet's num_update (1 at the first
// update). A step below 0 is taken as 0.

// WarmupMode says how the learning rate moves during warm-up.
type WarmupMode int

// The warm-up modes of MXNet's schedulers.
const (
	// WarmupLinear rises linearly from the warm-up's BeginLR towards the
	// schedule's base learning rate (MXNet's "linear", the default).
	WarmupLinear WarmupMode = iota
	// WarmupConstant holds BeginLR during warm-up (MXNet's "constant").
	WarmupConstant
)

// String returns "linear" or "constant".
func (m WarmupMode) String() string {
	switch m {
	case WarmupLinear:
		return "linear"
	case WarmupConstant:
		return "constant"
	}
	return fmt.Sprintf("WarmupMode(%d)", int(m))
}

// Warmup is the warm-up every schedule but InverseTime may start with
// (the Warmup field of its options: MXNet's warmup_steps, warmup_begin_lr
// and warmup_mode), with MXNet's meaning: for steps < Steps the learning rate is
//
//	linear:   BeginLR + (baseLR − BeginLR)·step/Steps
//	constant: BeginLR
//
// and from step Steps on the schedule proper applies (Poly and Cosine
// count their decay from there). With 1-based steps, Steps = 5 warms up
// during updates 1 to 4; update 5 gets the schedule's base learning rate.
type Warmup struct {
	Steps   int        // number of warm-up steps (0: none)
	BeginLR float64    // learning rate at step 0; at most the base rate
	Mode    WarmupMode // WarmupLinear (the zero value) or WarmupConstant
}

// checkWarmup checks a schedule's warm-up against its base rate.
func checkWarmup(name string, baseLR float64, w Warmup) (Warmup, error) {
	switch {
	case w.Steps < 0:
		return w, fmt.Errorf("optimizer.%s: warmup steps %d must be >= 0", name, w.Steps)
	case w.BeginLR < 0 || !finite(w.BeginLR):
		return w, fmt.Errorf("optimizer.%s: warmup begin lr %g must be finite and >= 0", name, w.BeginLR)
	case w.BeginLR > baseLR:
		return w, fmt.Errorf("optimizer.%s: warmup begin lr %g above the base lr %g", name, w.BeginLR, baseLR)
	case w.Mode != WarmupLinear && w.Mode != WarmupConstant:
		return w, fmt.Errorf("optimizer.%s: unknown warmup mode %v (want WarmupLinear or WarmupConstant)", name, w.Mode)
	}
	return w, nil
}

// lr returns the warm-up learning rate at step and true, or false once
// warm-up is over. finalLR is the rate warm-up leads to.
func (w Warmup) lr(step int, finalLR float64) (float64, bool) {
	if step >= w.Steps {
		return 0, false
	}
	if w.Mode == WarmupConstant {
		return w.BeginLR, true
	}
	return w.BeginLR + (finalLR-w.BeginLR)*float64(step)/float64(w.Steps), true
}

// checkRate reports an error unless lr is finite and >= 0.
func checkRate(name, what string, lr float64) error {
	if lr < 0 || !finite(lr) {
		return fmt.Errorf("optimizer.%s: %s %g must be finite and >= 0", name, what, lr)
	}
	return nil
}

// checkFactor reports an error unless 0 < f <= 1.
func checkFactor(name string, f float64) error {
	if !(f > 0 && f <= 1) {
		return fmt.Errorf("optimizer.%s: factor %g outside (0, 1]", name, f)
	}
	return nil
}

func clampStep(step int) int { return max(step, 0) }

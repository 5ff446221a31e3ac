package optimizer

import (
	"fmt"
	"math"
)

// Poly decays the learning rate polynomially from baseLR to finalLR over
// maxUpdate updates (MXNet's PolyScheduler). With W warm-up steps, at
// 1-based step n:
//
//	lr = finalLR + (baseLR − finalLR)·(1 − (n−W)/(maxUpdate−W))^pwr   for W <= n <= maxUpdate
//	lr = finalLR                                                      for n > maxUpdate
//
// It reaches finalLR at n = maxUpdate. Without warm-up, pwr 1 and finalLR 0
// this is lr = baseLR·(1 − n/maxUpdate), the poly_decay of the Keras
// MiniGoogLeNet tutorial, alpha = baseLR·(1 − epoch/maxEpochs)^power. That
// callback counts epochs from 0, so it equals LR(epoch) with the 0-based
// epoch index (LR(0) = baseLR); driven by 1-based update numbers, as MXNet
// does, the first update already runs at baseLR·(1 − 1/maxUpdate).
type Poly struct {
	maxUpdate            int
	baseLR, pwr, finalLR float64
	warmup               Warmup
}

var _ Scheduler = (*Poly)(nil)

// PolyOpts configures NewPoly; the fields are the arguments of MXNet's
// PolyScheduler(max_update, base_lr, pwr, final_lr, warmup_...).
type PolyOpts struct {
	MaxUpdate int     // the update at which FinalLR is reached (> Warmup.Steps)
	BaseLR    float64 // finite, >= 0
	Pwr       float64 // the power, > 0 (0: MXNet's default 2)
	FinalLR   float64 // finite, >= 0
	Warmup    Warmup  // none when zero
}

// NewPoly returns a Poly schedule, or an error naming the first invalid
// option.
func NewPoly(o PolyOpts) (*Poly, error) {
	const name = "Poly"
	maxUpdate, baseLR, pwr, finalLR := o.MaxUpdate, o.BaseLR, o.Pwr, o.FinalLR
	if pwr == 0 {
		pwr = 2
	}
	w, err := checkDecay(name, maxUpdate, baseLR, finalLR, o.Warmup)
	if err != nil {
		return nil, err
	}
	if !(pwr > 0) || math.IsInf(pwr, 0) {
		return nil, fmt.Errorf("optimizer.%s: pwr %g must be finite and > 0", name, pwr)
	}
	return &Poly{maxUpdate: maxUpdate, baseLR: baseLR, pwr: pwr, finalLR: finalLR, warmup: w}, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *Poly) LR(step int) float64 {
	step = clampStep(step)
	if lr, ok := s.warmup.lr(step, s.baseLR); ok {
		return lr
	}
	if step >= s.maxUpdate {
		return s.finalLR
	}
	frac := float64(step-s.warmup.Steps) / float64(s.maxUpdate-s.warmup.Steps)
	return s.finalLR + (s.baseLR-s.finalLR)*math.Pow(1-frac, s.pwr)
}

// Cosine decays the learning rate from baseLR to finalLR along half a
// cosine over maxUpdate updates (MXNet's CosineScheduler). With W warm-up
// steps, at 1-based step n:
//
//	lr = finalLR + (baseLR − finalLR)·(1 + cos(π·(n−W)/(maxUpdate−W)))/2   for W <= n <= maxUpdate
//	lr = finalLR                                                           for n > maxUpdate
type Cosine struct {
	maxUpdate       int
	baseLR, finalLR float64
	warmup          Warmup
}

var _ Scheduler = (*Cosine)(nil)

// CosineOpts configures NewCosine; the fields are the arguments of MXNet's
// CosineScheduler(max_update, base_lr, final_lr, warmup_...).
type CosineOpts struct {
	MaxUpdate int     // the update at which FinalLR is reached (> Warmup.Steps)
	BaseLR    float64 // finite, >= 0
	FinalLR   float64 // finite, >= 0
	Warmup    Warmup  // none when zero
}

// NewCosine returns a Cosine schedule, or an error naming the first
// invalid option.
func NewCosine(o CosineOpts) (*Cosine, error) {
	maxUpdate, baseLR, finalLR := o.MaxUpdate, o.BaseLR, o.FinalLR
	w, err := checkDecay("Cosine", maxUpdate, baseLR, finalLR, o.Warmup)
	if err != nil {
		return nil, err
	}
	return &Cosine{maxUpdate: maxUpdate, baseLR: baseLR, finalLR: finalLR, warmup: w}, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *Cosine) LR(step int) float64 {
	step = clampStep(step)
	if lr, ok := s.warmup.lr(step, s.baseLR); ok {
		return lr
	}
	if step >= s.maxUpdate {
		return s.finalLR
	}
	frac := float64(step-s.warmup.Steps) / float64(s.maxUpdate-s.warmup.Steps)
	return s.finalLR + (s.baseLR-s.finalLR)*(1+math.Cos(math.Pi*frac))/2
}

// checkDecay checks what Poly and Cosine share and builds their warm-up.
func checkDecay(name string, maxUpdate int, baseLR, finalLR float64, warm Warmup) (Warmup, error) {
	if maxUpdate < 1 {
		return Warmup{}, fmt.Errorf("optimizer.%s: max_update %d must be >= 1", name, maxUpdate)
	}
	if err := checkRate(name, "base lr", baseLR); err != nil {
		return Warmup{}, err
	}
	if err := checkRate(name, "final lr", finalLR); err != nil {
		return Warmup{}, err
	}
	w, err := checkWarmup(name, baseLR, warm)
	if err != nil {
		return w, err
	}
	if w.Steps >= maxUpdate {
		return w, fmt.Errorf("optimizer.%s: warmup steps %d must be below max_update %d", name, w.Steps, maxUpdate)
	}
	return w, nil
}

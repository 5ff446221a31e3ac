package optimizer

import "fmt"

// Lambda is a schedule given by any function of the update number
// (1-based), as PyTorch's LambdaLR lets one write (here the function gives
// the rate itself, not a factor of a base rate).
type Lambda func(step int) float64

// LR returns f(step).
func (f Lambda) LR(step int) float64 { return f(step) }

// LinearOpts configures Linear.
type LinearOpts struct {
	BaseLR                 float64 // the rate the factors multiply
	StartFactor, EndFactor float64 // in (0, 1] and [0, 1]: PyTorch's defaults are 1/3 and 1
	Steps                  int     // the updates over which the factor moves (> 0)
}

// Linear moves the rate linearly from StartFactor·BaseLR at the first
// update to EndFactor·BaseLR after Steps more, then holds it (PyTorch's
// LinearLR, usually a warm-up ahead of another schedule in a Sequential).
type Linear struct{ o LinearOpts }

// NewLinear returns a Linear schedule, or an error naming the first
// invalid option.
func NewLinear(o LinearOpts) (*Linear, error) {
	switch {
	case !(o.StartFactor > 0 && o.StartFactor <= 1) || !(o.EndFactor >= 0 && o.EndFactor <= 1):
		return nil, fmt.Errorf("optimizer.Linear: start factor %g must be in (0, 1] and end factor %g in [0, 1]", o.StartFactor, o.EndFactor)
	case o.Steps <= 0:
		return nil, fmt.Errorf("optimizer.Linear: steps %d must be positive", o.Steps)
	}
	if err := checkRate("Linear", "base lr", o.BaseLR); err != nil {
		return nil, err
	}
	return &Linear{o: o}, nil
}

// LR returns the rate at update number step (1-based).
func (s *Linear) LR(step int) float64 {
	e := min(max(step-1, 0), s.o.Steps) // the updates the factor has moved over
	f := s.o.StartFactor + (s.o.EndFactor-s.o.StartFactor)*float64(e)/float64(s.o.Steps)
	return s.o.BaseLR * f
}

// Sequential runs schedules one after the other (PyTorch's SequentialLR):
// schedules[0] until update milestones[0], then schedules[1] counting its
// own updates from 1 again, and so on; milestones are increasing and one
// fewer than the schedules.
type Sequential struct {
	schedules  []Scheduler
	milestones []int
}

// NewSequential returns the schedules in sequence, or an error for
// milestones that do not fit them.
func NewSequential(schedules []Scheduler, milestones []int) (*Sequential, error) {
	if len(schedules) == 0 || len(milestones) != len(schedules)-1 {
		return nil, fmt.Errorf("optimizer.Sequential: %d schedules need %d milestones, got %d", len(schedules), max(len(schedules)-1, 0), len(milestones))
	}
	last := 0
	for i, m := range milestones {
		if m <= last {
			return nil, fmt.Errorf("optimizer.Sequential: milestone %d (%d) is not above the one before (%d)", i, m, last)
		}
		last = m
	}
	for i, s := range schedules {
		if s == nil {
			return nil, fmt.Errorf("optimizer.Sequential: schedule %d is nil", i)
		}
	}
	return &Sequential{schedules: schedules, milestones: milestones}, nil
}

// LR returns the rate at update number step (1-based): the schedule whose
// span holds it, at its own update number.
func (s *Sequential) LR(step int) float64 {
	k, start := 0, 0
	for k < len(s.milestones) && step-1 >= s.milestones[k] {
		start = s.milestones[k]
		k++
	}
	return s.schedules[k].LR(step - start)
}

package optimizer

import (
	"fmt"
	"math"
	"sync"
)

// The schedules of PyTorch's torch.optim.lr_scheduler that MXNet lacks:
// OneCycle, CosineWarmRestarts and Cyclic (pure functions of the update,
// as every Scheduler here), and Plateau, which follows a metric. Update n
// (1-based) gets the learning rate PyTorch's scheduler gives after n−1
// calls of its step(): the rate of PyTorch's n-th optimizer step. PyTorch's
// OneCycleLR and CyclicLR also cycle the momentum; these schedules set the
// learning rate only.

// OneCycle is PyTorch's OneCycleLR (Smith's 1cycle policy): the rate rises
// from MaxLR/DivFactor to MaxLR over the first PctStart of TotalSteps,
// then falls to MaxLR/(DivFactor·FinalDivFactor), along half cosines (or
// straight lines with Linear). ThreePhase falls back to the initial rate
// over a second PctStart before the final fall, as PyTorch's three_phase.
// After TotalSteps the rate stays at the final one (PyTorch raises). As in
// PyTorch, a rise shorter than one step (PctStart·TotalSteps < 1) skips
// it, and a three-phase schedule whose first two phases outlast
// TotalSteps never reaches the third; PctStart 0 means 0.3, so a schedule
// without a rise is a Cosine one.
type OneCycle struct {
	o      OneCycleOpts
	phases []cyclePhase
}

// OneCycleOpts configures NewOneCycle; zero values are PyTorch's defaults.
type OneCycleOpts struct {
	MaxLR          float64 // the peak rate (> 0)
	TotalSteps     int     // the number of updates (> 0)
	PctStart       float64 // the share of the rise (0: 0.3)
	DivFactor      float64 // initial rate = MaxLR/DivFactor (0: 25)
	FinalDivFactor float64 // final rate = initial/FinalDivFactor (0: 1e4)
	Linear         bool    // straight lines instead of half cosines
	ThreePhase     bool
}

type cyclePhase struct {
	end        float64 // the phase's last step (0-based)
	start, fin float64 // rates at its ends
}

var _ Scheduler = (*OneCycle)(nil)

// NewOneCycle returns a OneCycle schedule, or an error naming the first
// invalid option.
func NewOneCycle(o OneCycleOpts) (*OneCycle, error) {
	if o.PctStart == 0 {
		o.PctStart = 0.3
	}
	if o.DivFactor == 0 {
		o.DivFactor = 25
	}
	if o.FinalDivFactor == 0 {
		o.FinalDivFactor = 1e4
	}
	switch {
	case !(o.MaxLR > 0) || !finite(o.MaxLR):
		return nil, fmt.Errorf("optimizer.OneCycle: max lr %g must be finite and > 0", o.MaxLR)
	case o.TotalSteps < 1:
		return nil, fmt.Errorf("optimizer.OneCycle: total steps %d must be >= 1", o.TotalSteps)
	case !(o.PctStart > 0 && o.PctStart < 1):
		return nil, fmt.Errorf("optimizer.OneCycle: pct start %g outside (0, 1)", o.PctStart)
	case !(o.DivFactor > 0) || !finite(o.DivFactor) || !(o.FinalDivFactor > 0) || !finite(o.FinalDivFactor):
		return nil, fmt.Errorf("optimizer.OneCycle: div factors %g and %g must be finite and > 0", o.DivFactor, o.FinalDivFactor)
	}
	initial := o.MaxLR / o.DivFactor
	final := initial / o.FinalDivFactor
	t := float64(o.TotalSteps)
	s := &OneCycle{o: o}
	if o.ThreePhase {
		s.phases = []cyclePhase{
			{o.PctStart*t - 1, initial, o.MaxLR},
			{2*o.PctStart*t - 2, o.MaxLR, initial},
			{t - 1, initial, final},
		}
	} else {
		s.phases = []cyclePhase{{o.PctStart*t - 1, initial, o.MaxLR}, {t - 1, o.MaxLR, final}}
	}
	for i, p := range s.phases {
		prev := 0.0
		if i > 0 {
			prev = s.phases[i-1].end
		}
		if p.end == prev { // PyTorch divides by zero
			return nil, fmt.Errorf("optimizer.OneCycle: %d total steps and pct start %g give phase %d no length", o.TotalSteps, o.PctStart, i)
		}
	}
	return s, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *OneCycle) LR(step int) float64 {
	n := float64(min(max(step-1, 0), s.o.TotalSteps-1))
	begin := 0.0
	for i, p := range s.phases {
		if n <= p.end || i == len(s.phases)-1 {
			pct := (n - begin) / (p.end - begin)
			if s.o.Linear {
				return (p.fin-p.start)*pct + p.start
			}
			return p.fin + (p.start-p.fin)/2*(math.Cos(math.Pi*pct)+1)
		}
		begin = p.end
	}
	return s.phases[len(s.phases)-1].fin
}

// CosineWarmRestarts is PyTorch's CosineAnnealingWarmRestarts (SGDR,
// Loshchilov and Hutter): half cosines from BaseLR down to MinLR, the first
// Period updates long, each next one Mult times longer, restarting at
// BaseLR.
type CosineWarmRestarts struct {
	baseLR, minLR float64
	period, mult  int
}

var _ Scheduler = (*CosineWarmRestarts)(nil)

// NewCosineWarmRestarts returns the schedule: period ≥ 1 updates in the
// first cycle, mult ≥ 1 (PyTorch's T_0 and T_mult), rates finite, minLR ≤
// baseLR.
func NewCosineWarmRestarts(baseLR, minLR float64, period, mult int) (*CosineWarmRestarts, error) {
	if err := checkRate("CosineWarmRestarts", "base lr", baseLR); err != nil {
		return nil, err
	}
	if err := checkRate("CosineWarmRestarts", "min lr", minLR); err != nil {
		return nil, err
	}
	if period < 1 || mult < 1 || minLR > baseLR {
		return nil, fmt.Errorf("optimizer.CosineWarmRestarts: period %d and mult %d must be >= 1, min lr %g at most the base lr %g", period, mult, minLR, baseLR)
	}
	return &CosineWarmRestarts{baseLR: baseLR, minLR: minLR, period: period, mult: mult}, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *CosineWarmRestarts) LR(step int) float64 {
	cur, length := max(step-1, 0), s.period
	if s.mult == 1 {
		cur %= length
	} else {
		// The cycle k holding cur starts at T0·(m^k − 1)/(m − 1): k from
		// the logarithm, then corrected by whole cycles against rounding.
		m := float64(s.mult)
		k := int(math.Log(float64(cur)/float64(s.period)*(m-1)+1) / math.Log(m))
		start := func(k int) float64 { return float64(s.period) * (math.Pow(m, float64(k)) - 1) / (m - 1) }
		for k > 0 && start(k) > float64(cur) {
			k--
		}
		for start(k+1) <= float64(cur) {
			k++
		}
		c := float64(cur) - start(k)
		l := float64(s.period) * math.Pow(m, float64(k))
		return s.minLR + (s.baseLR-s.minLR)*(1+math.Cos(math.Pi*c/l))/2
	}
	return s.minLR + (s.baseLR-s.minLR)*(1+math.Cos(math.Pi*float64(cur)/float64(length)))/2
}

// CyclicMode is the amplitude policy of Cyclic.
type CyclicMode int

// The modes of PyTorch's CyclicLR.
const (
	// Triangular keeps the amplitude.
	Triangular CyclicMode = iota
	// Triangular2 halves it every cycle.
	Triangular2
	// ExpRange scales it by Gamma^(update−1).
	ExpRange
)

// Cyclic is PyTorch's CyclicLR (Smith's cyclical learning rates): the rate
// goes from BaseLR up to MaxLR over StepUp updates and back over StepDown
// (0: StepUp), with the amplitude per Mode.
type Cyclic struct {
	o CyclicOpts
}

// CyclicOpts configures NewCyclic.
type CyclicOpts struct {
	BaseLR, MaxLR    float64
	StepUp, StepDown int
	Mode             CyclicMode
	Gamma            float64 // ExpRange's factor (0: 1)
}

var _ Scheduler = (*Cyclic)(nil)

// NewCyclic returns a Cyclic schedule, or an error naming the first
// invalid option.
func NewCyclic(o CyclicOpts) (*Cyclic, error) {
	if o.StepDown == 0 {
		o.StepDown = o.StepUp
	}
	if o.Gamma == 0 {
		o.Gamma = 1
	}
	if err := checkRate("Cyclic", "base lr", o.BaseLR); err != nil {
		return nil, err
	}
	if err := checkRate("Cyclic", "max lr", o.MaxLR); err != nil {
		return nil, err
	}
	switch {
	case o.StepUp < 1 || o.StepDown < 1:
		return nil, fmt.Errorf("optimizer.Cyclic: steps up %d and down %d must be >= 1", o.StepUp, o.StepDown)
	case o.Mode < Triangular || o.Mode > ExpRange:
		return nil, fmt.Errorf("optimizer.Cyclic: unknown mode %d", o.Mode)
	case !(o.Gamma > 0) || !finite(o.Gamma):
		return nil, fmt.Errorf("optimizer.Cyclic: gamma %g must be finite and > 0", o.Gamma)
	}
	return &Cyclic{o: o}, nil
}

// LR returns the learning rate at update number step (1-based).
func (s *Cyclic) LR(step int) float64 {
	o := s.o
	n := float64(max(step-1, 0))
	total := float64(o.StepUp + o.StepDown)
	ratio := float64(o.StepUp) / total
	cycle := math.Floor(1 + n/total)
	x := 1 + n/total - cycle
	var f float64
	if x <= ratio {
		f = x / ratio
	} else {
		f = (x - 1) / (ratio - 1)
	}
	height := (o.MaxLR - o.BaseLR) * f
	switch o.Mode {
	case Triangular2:
		height /= math.Pow(2, cycle-1)
	case ExpRange:
		height *= math.Pow(o.Gamma, n)
	}
	return o.BaseLR + height
}

// Plateau is PyTorch's ReduceLROnPlateau: the rate starts at LR and is
// multiplied by Factor (not below MinLR) when the metric given to Observe
// has not improved for more than Patience observations, then waits
// Cooldown observations before counting again. An improvement beats the
// best value by more than Threshold, relative (the default) or absolute.
// Unlike the other schedules it has state: LR returns the current rate
// whatever the step (so LARS's momentum correction, a ratio of successive
// rates, sees no change). It is safe for concurrent use. Its state is not
// part of a Trainer's saved state: State and SetState carry it over.
type Plateau struct {
	mu            sync.Mutex
	o             PlateauOpts
	lr, best      float64
	bad, cooldown int
}

// PlateauOpts configures NewPlateau; PlateauDefaults returns PyTorch's
// defaults. Fields are taken as they are, but for a Factor of 0, which
// means 0.1.
type PlateauOpts struct {
	LR           float64 // the starting rate
	Maximize     bool    // the metric improves upwards (accuracy); else downwards (loss)
	Factor       float64 // 0: 0.1; in (0, 1)
	Patience     int     // observations without improvement tolerated (PyTorch's default 10: set it)
	Threshold    float64 // PyTorch's 1e-4
	AbsThreshold bool    // Threshold is absolute, not relative
	Cooldown     int
	MinLR        float64
	Eps          float64 // reductions smaller than this are skipped (PyTorch's 1e-8)
}

var _ Scheduler = (*Plateau)(nil)

// PlateauDefaults returns PyTorch's ReduceLROnPlateau defaults with the
// starting rate lr: minimise, factor 0.1, patience 10, relative threshold
// 1e-4, no cooldown, eps 1e-8.
func PlateauDefaults(lr float64) PlateauOpts {
	return PlateauOpts{LR: lr, Factor: 0.1, Patience: 10, Threshold: 1e-4, Eps: 1e-8}
}

// NewPlateau returns a Plateau schedule, or an error naming the first
// invalid option.
func NewPlateau(o PlateauOpts) (*Plateau, error) {
	if o.Factor == 0 {
		o.Factor = 0.1
	}
	if err := checkRate("Plateau", "lr", o.LR); err != nil {
		return nil, err
	}
	if err := checkRate("Plateau", "min lr", o.MinLR); err != nil {
		return nil, err
	}
	switch {
	case !(o.Factor > 0 && o.Factor < 1):
		return nil, fmt.Errorf("optimizer.Plateau: factor %g outside (0, 1)", o.Factor)
	case o.Patience < 0 || o.Cooldown < 0:
		return nil, fmt.Errorf("optimizer.Plateau: patience %d and cooldown %d must be >= 0", o.Patience, o.Cooldown)
	case !(o.Threshold >= 0) || !finite(o.Threshold) || !(o.Eps >= 0):
		return nil, fmt.Errorf("optimizer.Plateau: threshold %g and eps %g must be finite and >= 0", o.Threshold, o.Eps)
	}
	best := math.Inf(1)
	if o.Maximize {
		best = math.Inf(-1)
	}
	return &Plateau{o: o, lr: o.LR, best: best}, nil
}

// PlateauState is a Plateau's state, to save with a checkpoint.
type PlateauState struct {
	LR, Best      float64
	Bad, Cooldown int
}

// State returns the Plateau's state.
func (p *Plateau) State() PlateauState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PlateauState{p.lr, p.best, p.bad, p.cooldown}
}

// SetState restores a state State returned.
func (p *Plateau) SetState(st PlateauState) error {
	if err := checkRate("Plateau", "lr", st.LR); err != nil {
		return err
	}
	if st.Bad < 0 || st.Cooldown < 0 {
		return fmt.Errorf("optimizer.Plateau: state counts %d and %d must be >= 0", st.Bad, st.Cooldown)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lr, p.best, p.bad, p.cooldown = st.LR, st.Best, st.Bad, st.Cooldown
	return nil
}

// Maximizes reports whether the Plateau's metric improves upwards.
func (p *Plateau) Maximizes() bool { return p.o.Maximize }

// LR returns the current learning rate.
func (p *Plateau) LR(int) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lr
}

// Observe records a metric (once per epoch, say, of a validation loss) and
// returns the learning rate from now on and whether it was just reduced.
// A NaN metric counts as no improvement.
func (p *Plateau) Observe(metric float64) (lr float64, reduced bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.better(metric) {
		p.best, p.bad = metric, 0
	} else {
		p.bad++
	}
	if p.cooldown > 0 {
		p.cooldown--
		p.bad = 0
	}
	if p.bad > p.o.Patience {
		if next := max(p.lr*p.o.Factor, p.o.MinLR); p.lr-next > p.o.Eps {
			p.lr, reduced = next, true
		}
		p.cooldown, p.bad = p.o.Cooldown, 0
	}
	return p.lr, reduced
}

func (p *Plateau) better(a float64) bool {
	t := p.o.Threshold
	switch {
	case p.o.Maximize && p.o.AbsThreshold:
		return a > p.best+t
	case p.o.Maximize:
		return a > p.best*(1+t)
	case p.o.AbsThreshold:
		return a < p.best-t
	}
	return a < p.best*(1-t)
}

package gluon

import (
	"fmt"
	"sync"

	"github.com/goluon/goluon/nd"
)

// Averaged keeps a running average of a network's parameters: an
// exponential moving average (EMA, as timm's ModelEmaV2 and TensorFlow's
// ExponentialMovingAverage) or the equal-weight average of stochastic
// weight averaging (SWA, PyTorch's swa_utils.AveragedModel). The averaged
// weights often evaluate better than the last ones.
//
//	avg, _ := gluon.NewAveraged(params, gluon.AverageOpts{Decay: 0.999})
//	for each batch { ...; trainer.Step(n); avg.Update() }
//	avg.Apply(func() error { return evaluate(net) }) // with the averages
//
// The average is kept in float32 (float64 for float64 parameters) on each
// parameter's first context, apart from the network, and updated from the
// first replica (the replicas are equal after a Trainer's step). It is safe
// for concurrent use, but Apply and CopyTo change the network's
// parameters: do not train meanwhile.
type Averaged struct {
	mu     sync.Mutex
	opts   AverageOpts
	params []*Parameter
	avg    []*nd.NDArray // nil for a statistic not averaged
	n      int64
}

// AverageOpts configures NewAveraged.
type AverageOpts struct {
	// Decay is the EMA's decay in (0, 1): avg = Decay·avg + (1−Decay)·w.
	// Zero selects SWA's equal weights: avg = avg + (w − avg)/(n+1).
	Decay float64
	// Warmup uses min(Decay, (1+n)/(10+n)) at the n-th update, as
	// TensorFlow's num_updates, so early averages follow the weights
	// faster.
	Warmup bool
	// Statistics averages the parameters that forward passes compute
	// (BatchNorm's running mean and variance) too; otherwise Apply and
	// CopyTo leave the network's own (PyTorch's AveragedModel leaves them
	// to be recomputed with update_bn, here nn.UpdateBatchNorm; timm's EMA
	// averages them).
	Statistics bool
}

// averages is the session Update computes in: it never records and opens
// no scope.
var averages = nd.NewSession("average")

// NewAveraged starts an average of params' floating-point parameters
// (those whose gradient is ignored included; deferred ones join once the
// first forward pass has given them a shape). The first Update copies the
// weights; later ones average. Its error is for invalid options, or a
// parameter not initialised on any context.
func NewAveraged(params *ParamDict, opts AverageOpts) (*Averaged, error) {
	if opts.Decay != 0 && !(opts.Decay > 0 && opts.Decay < 1) {
		return nil, errorf("average: decay %g outside (0, 1) (0 selects SWA)", opts.Decay)
	}
	a := &Averaged{opts: opts}
	for _, p := range params.List() {
		if len(p.Contexts()) == 0 {
			return nil, errorf("average: parameter %s is not initialised", p.Name())
		}
		if !p.DType().IsFloat() || p.Statistic && !opts.Statistics {
			continue
		}
		a.params = append(a.params, p)
		a.avg = append(a.avg, nil) // made at the first Update that sees the parameter's shape
	}
	return a, nil
}

// Count returns the number of Updates so far.
func (a *Averaged) Count() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// Update folds the parameters' current values into the average.
func (a *Averaged) Update() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := 0.0 // the weights' share
	switch {
	case a.n == 0:
		w = 1
	case a.opts.Decay == 0:
		w = 1 / float64(a.n+1)
	default:
		d := a.opts.Decay
		if a.opts.Warmup {
			d = min(d, float64(1+a.n)/float64(10+a.n))
		}
		w = 1 - d
	}
	err := nd.Catch(func() {
		for i, p := range a.params {
			avg := a.avg[i]
			if avg == nil {
				if !p.Initialized() {
					continue // deferred, no forward pass yet
				}
				dt := nd.Float32
				if p.DType() == nd.Float64 {
					dt = nd.Float64
				}
				// A parameter seen for the first time starts at its value.
				dev := p.Contexts()[0]
				avg = nd.PersistentSession().CopyOf(p.Data(dev), dev)
				if avg.DType() != dt {
					w := avg.AsType(dt)
					avg.Release()
					avg = w
				}
				a.avg[i] = avg
				continue
			}
			cur := averages.Use(p.Data(avg.Context()))
			x := cur
			if cur.DType() != avg.DType() {
				x = cur.AsType(avg.DType())
			}
			v := averages.Use(avg)
			d := nd.Sub(x, v) // avg += w·(x − avg)
			nd.ScaleInPlace(d, w)
			nd.AddTo(v, d)
			d.Release()
			if x != cur {
				x.Release()
			}
			cur.Release()
			v.Release()
		}
	})
	if err != nil {
		return fmt.Errorf("gluon: average: %w", err)
	}
	a.n++
	return nil
}

// CopyTo writes the averages into the parameters (every replica, in each
// parameter's dtype): the network keeps the averaged weights (a Trainer
// with float32 master copies of half weights takes them up, as after
// SetData). Before the first Update it does nothing.
func (a *Averaged) CopyTo() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		return nil
	}
	return a.writeLocked(a.avg, true)
}

// writeLocked sets each averaged parameter from vals (a.mu held). Without
// visible, the parameters' versions stay as they were, so that a swap for
// Apply, undone before training goes on, does not make a Trainer take the
// half weights back into its float32 masters.
func (a *Averaged) writeLocked(vals []*nd.NDArray, visible bool) error {
	return nd.Catch(func() {
		for i, p := range a.params {
			switch {
			case vals[i] == nil:
			case visible:
				p.SetData(vals[i])
			default:
				p.mu.Lock()
				for _, d := range p.data {
					nd.Assign(d, vals[i])
				}
				p.mu.Unlock()
			}
		}
	})
}

// Apply runs f with the averages in the network's parameters and puts
// the parameters' own values back afterwards, even when f fails or
// panics; it returns f's error. Before the first Update it runs f on the
// parameters as they are.
func (a *Averaged) Apply(f func() error) (err error) {
	a.mu.Lock()
	if a.n == 0 {
		a.mu.Unlock()
		return f()
	}
	saved := make([]*nd.NDArray, len(a.params))
	if err := nd.Catch(func() {
		for i, p := range a.params {
			if a.avg[i] != nil {
				saved[i] = nd.PersistentSession().Use(p.Data(p.Contexts()[0])).Copy()
			}
		}
	}); err != nil {
		a.mu.Unlock()
		return fmt.Errorf("gluon: average: %w", err)
	}
	if err := a.writeLocked(a.avg, false); err != nil {
		a.mu.Unlock()
		return fmt.Errorf("gluon: average: %w", err)
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if rerr := a.writeLocked(saved, false); rerr != nil && err == nil {
			err = fmt.Errorf("gluon: average: restoring the weights: %w", rerr)
		}
		for _, s := range saved {
			s.Release()
		}
	}()
	return f()
}

// Average returns a copy of p's average (float32, or float64 for a
// float64 parameter) on p's first context, or nil when p is not averaged
// (not one of the parameters, or a statistic without
// AverageOpts.Statistics) or before the first Update.
func (a *Averaged) Average(p *Parameter) *nd.NDArray {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 {
		return nil
	}
	for i, q := range a.params {
		if q == p && a.avg[i] != nil {
			return nd.PersistentSession().Use(a.avg[i]).Copy()
		}
	}
	return nil
}

// Release gives the averages' memory back; the Averaged must not be used
// afterwards.
func (a *Averaged) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, v := range a.avg {
		v.Release()
	}
	a.avg = nil
	a.params = nil
}

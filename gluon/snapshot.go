package gluon

import (
	"slices"

	"github.com/goluon/goluon/nd"
)

// Snapshot is a copy of a set of parameters taken at one point of
// training, what a Predictor serves. Its arrays are neutral copies that no
// scope releases and no later step changes; a Snapshot is safe for
// concurrent reads. Release it once published (Publish copies it): its
// memory, on the parameters' context, is not given back otherwise (a
// GPU's pool has no garbage collector).
type Snapshot struct {
	// Step is the number of Trainer steps applied before the copy (0 for
	// ParamDict.Snapshot).
	Step  int
	names []string
	vals  []*nd.NDArray
	// unset are the parameters that had no value yet (shapes inferred at
	// the first forward pass), left out of the copy.
	unset []string
}

// Unset returns the names of the parameters left out because they had no
// value yet when the snapshot was taken: their shapes are inferred at the
// first forward pass, so snapshot after the first step.
func (s *Snapshot) Unset() []string { return slices.Clone(s.unset) }

// Names returns the parameters' full names, in order.
func (s *Snapshot) Names() []string { return slices.Clone(s.names) }

// Get returns the copy of the named parameter, or nil. Do not write to it
// or release it: the snapshot may be published to several Predictors.
func (s *Snapshot) Get(name string) *nd.NDArray {
	if i := slices.Index(s.names, name); i >= 0 {
		return s.vals[i]
	}
	return nil
}

// Release gives the snapshot's memory back; it must not be used after.
// Release of nil or of a released snapshot does nothing.
func (s *Snapshot) Release() {
	if s == nil {
		return
	}
	for _, v := range s.vals {
		v.Release()
	}
	s.vals, s.names = nil, nil
}

// Snapshot copies every initialised parameter of d (its first replica:
// the replicas are equal between steps), running statistics included, on
// the replica's context. Parameters without a value yet (deferred shapes,
// before the first forward pass) are left out and listed by Unset. Call it from the goroutine that trains, between
// steps, or use Trainer.Snapshot, which waits for a Step in progress.
func (d *ParamDict) Snapshot() *Snapshot {
	s := &Snapshot{}
	for _, name := range d.names {
		p := d.params[name]
		if !p.Initialized() {
			s.unset = append(s.unset, name)
			continue
		}
		w := p.ListData()[0]
		s.names = append(s.names, name)
		s.vals = append(s.vals, nd.PersistentSession().CopyOf(w, w.Context()))
	}
	return s
}

// Snapshot copies the parameters the Trainer was created with (all of
// them that have values, those without gradients such as BatchNorm's
// running statistics included; see ParamDict.Snapshot) at a step boundary: it waits for a Step, AllReduceGrads or
// Update in progress in another goroutine, so no update is ever half
// applied in the copy. The running statistics change during training-mode
// forward passes, which the Trainer does not see: call it from the
// learner's goroutine (between its steps) when the network has BatchNorm
// layers. Publish the result to a Predictor.
func (t *Trainer) Snapshot() *Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.all.Snapshot()
	s.Step = t.updates
	return s
}

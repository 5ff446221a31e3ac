package gluon

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// trainerMeta is what SaveStates records besides the state arrays.
type trainerMeta struct {
	Optimizer string         `json:"optimizer"`
	LR        float64        `json:"lr"`
	Steps     map[string]int `json:"steps"`
	// Updates is the Trainer's update count (absent before it was saved:
	// the largest of Steps then).
	Updates *int `json:"updates,omitempty"`
	// Scaler is the GradScaler's state, when it can save it.
	Scaler json.RawMessage `json:"grad_scaler,omitempty"`
}

// SaveStates writes the optimizer state (momentum buffers, moment
// estimates) and the update counts to path, atomically, so that training
// can resume with LoadStates — also on another set of contexts. State
// arrays are named "<parameter>.state<k>"; a parameter whose state was
// not made yet (frozen since before its first step; with UpdateOnKVStore,
// before its first update) has none, and resumes with fresh state.
func (t *Trainer) SaveStates(path string) error {
	if err := t.init(); err != nil {
		return err
	}
	updates := t.updates
	meta := trainerMeta{Optimizer: t.opt.Name(), LR: t.opt.Hyperparams().LR, Steps: map[string]int{}, Updates: &updates}
	f := &safetensors.File{Tensors: map[string]safetensors.Tensor{}, Metadata: map[string]string{"format": "goluon.trainer"}}
	for i, p := range t.params {
		meta.Steps[p.Name()] = t.steps[i]
		for k, a := range t.stateOf(i) {
			f.Tensors[fmt.Sprintf("%s.state%d", p.Name(), k)] = toTensor(a)
		}
	}
	if m, ok := t.scaler.(json.Marshaler); ok {
		raw, err := m.MarshalJSON()
		if err != nil {
			return errorf("save states: grad scaler: %v", err)
		}
		meta.Scaler = raw
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return errorf("save states: %v", err)
	}
	f.Metadata["trainer"] = string(b)
	if err := safetensors.WriteFile(path, f); err != nil {
		return errorf("save states: %v", err)
	}
	return nil
}

// stateOf returns the optimizer state of parameter i that represents all
// replicas (they are identical): the kvstore's or the first device's, or
// nil when it was not made yet.
func (t *Trainer) stateOf(i int) optimizer.State {
	if t.opts.UpdateOnKVStore {
		return t.kvState[i]
	}
	if t.states[i] == nil {
		return nil
	}
	return t.states[i][0]
}

// dropStates forgets parameter i's optimizer state (its next update
// creates it afresh), and its bucket's packed state.
func (t *Trainer) dropStates(i int) {
	for _, b := range t.buckets {
		if slices.Contains(b.params, i) {
			for _, f := range slices.Concat(b.sflats...) {
				f.Release()
			}
			b.sflats = nil
		}
	}
	var all []optimizer.State
	if t.opts.UpdateOnKVStore {
		all, t.kvState[i] = []optimizer.State{t.kvState[i]}, nil
	} else {
		all, t.states[i] = t.states[i], nil
	}
	for _, st := range all {
		releaseState(st)
	}
}

// releaseState releases the arrays of st.
func releaseState(st optimizer.State) {
	for _, a := range st {
		a.Release()
	}
}

// check reports counts and a learning rate that SaveStates never writes.
func (m *trainerMeta) check() error {
	for name, n := range m.Steps {
		if n < 0 {
			return fmt.Errorf("parameter %s has %d updates", name, n)
		}
	}
	if m.Updates != nil && *m.Updates < 0 {
		return fmt.Errorf("%d updates", *m.Updates)
	}
	if math.IsNaN(m.LR) || math.IsInf(m.LR, 0) || m.LR < 0 {
		return fmt.Errorf("learning rate %v", m.LR)
	}
	return nil
}

// LoadStates restores what SaveStates wrote. The optimizer must be of the
// same kind and the parameters the same names and shapes; everything is
// checked before anything changes. A parameter that is frozen (GradNull)
// and was never updated may be missing from the file (older files list
// only the parameters that had gradients).
func (t *Trainer) LoadStates(path string) error {
	if err := t.init(); err != nil {
		return err
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return errorf("load states: %v", err)
	}
	var meta trainerMeta
	if err := json.Unmarshal([]byte(f.Metadata["trainer"]), &meta); err != nil {
		return errorf("load states %s: missing or corrupt trainer metadata: %v", path, err)
	}
	if meta.Optimizer != t.opt.Name() {
		return errorf("load states %s: saved for optimizer %q, this trainer uses %q", path, meta.Optimizer, t.opt.Name())
	}
	if err := meta.check(); err != nil {
		return errorf("load states %s: corrupt trainer metadata: %v", path, err)
	}
	want := map[string]bool{}
	hosts := map[string]any{}
	skip := make([]bool, len(t.params))  // not in the file: left as it is
	reset := make([]bool, len(t.params)) // saved before its first update, with no state
	for i, p := range t.params {
		n, ok := meta.Steps[p.Name()]
		if !ok {
			if p.GradReq() == nd.GradNull && t.steps[i] == 0 {
				skip[i] = true
				continue
			}
			return errorf("load states %s: no state for parameter %s", path, p.Name())
		}
		if _, has := f.Tensors[p.Name()+".state0"]; !has && n == 0 {
			reset[i] = true
			continue
		}
		st := t.stateOf(i)
		if st == nil { // not made here yet: check against a template
			if !p.Initialized() {
				return errorf("load states %s: parameter %s is not initialised", path, p.Name())
			}
			if !slices.Equal(p.Contexts(), t.devs) {
				return errorf("load states %s: parameter %s lives on %v, the Trainer's parameters on %v", path, p.Name(), p.Contexts(), t.devs)
			}
			st = optimizer.NewState(t.opt, p.ListData()[0])
			defer releaseState(st)
		}
		for k, a := range st {
			name := fmt.Sprintf("%s.state%d", p.Name(), k)
			want[name] = true
			tt, ok := f.Tensors[name]
			if !ok {
				return errorf("load states %s: missing %s", path, name)
			}
			if !slices.Equal(tt.Shape, a.Shape()) {
				return errorf("load states %s: %s has shape %v, want %v", path, name, tt.Shape, a.Shape())
			}
			if hosts[name], err = fromTensor(tt, a.DType()); err != nil {
				return errorf("load states %s: %s: %v", path, name, err)
			}
		}
	}
	for name := range meta.Steps {
		if !slices.ContainsFunc(t.params, func(p *Parameter) bool { return p.Name() == name }) {
			return errorf("load states %s: saved for parameter %s, which this Trainer does not have (a different network?)", path, name)
		}
	}
	for _, name := range f.Names() {
		if !want[name] {
			return errorf("load states %s: unexpected state %s (different optimizer settings or parameters?)", path, name)
		}
	}
	if u, ok := t.scaler.(json.Unmarshaler); ok && len(meta.Scaler) > 0 {
		if err := u.UnmarshalJSON(meta.Scaler); err != nil {
			return errorf("load states %s: grad scaler: %v", path, err)
		}
	}
	// Everything was checked above; a failure here is a defect, reported
	// as an error rather than crashing the caller.
	if err := nd.Catch(func() {
		for i, p := range t.params {
			if skip[i] {
				continue
			}
			t.steps[i] = meta.Steps[p.Name()]
			if reset[i] {
				t.dropStates(i)
				continue
			}
			var replicas []optimizer.State
			if t.opts.UpdateOnKVStore {
				if t.kvState[i] == nil {
					t.kvState[i] = t.newState(p.ListData()[0])
				}
				replicas = []optimizer.State{t.kvState[i]}
			} else {
				t.ensureStates(i)
				replicas = t.states[i]
			}
			for _, st := range replicas {
				for k, a := range st {
					// FromSliceShaped: the state of a 0-d parameter is 0-d.
					src := nd.FromSliceShaped(a.Context(), hosts[fmt.Sprintf("%s.state%d", p.Name(), k)], a.Shape())
					nd.Assign(a, src)
					src.Release()
				}
			}
		}
	}); err != nil {
		return errorf("load states %s: %v", path, err)
	}
	if meta.Updates != nil {
		t.updates = *meta.Updates
	} else {
		t.updates = 0
		for _, n := range meta.Steps {
			t.updates = max(t.updates, n)
		}
	}
	t.opt.Hyperparams().LR = meta.LR
	for i, p := range t.params { // the loaded master copies are the truth now
		t.masters[i] = p.version.Load()
	}
	return nil
}

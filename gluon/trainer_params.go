package gluon

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// checkContexts verifies that all parameters not frozen share one context
// list (a frozen one is checked when it joins), and sets t.devs to it (or
// to the first initialised parameter's when every one is frozen).
func (t *Trainer) checkContexts(all bool) error {
	var first *Parameter
	for _, p := range t.params {
		if p.GradReq() == nd.GradNull {
			continue
		}
		if !p.Initialized() {
			if all {
				return errorf("trainer: parameter %s is not initialised (run a forward pass or Initialize first)", p.Name())
			}
			continue
		}
		if first == nil {
			first, t.devs = p, p.Contexts()
			continue
		}
		if !slices.Equal(p.Contexts(), t.devs) {
			return errorf("trainer: parameter %s lives on %v but %s lives on %v; all parameters must share one set of contexts",
				p.Name(), p.Contexts(), first.Name(), t.devs)
		}
	}
	for _, p := range t.params {
		if first == nil && p.Initialized() {
			first, t.devs = p, p.Contexts()
		}
	}
	return nil
}

// join enters the parameters that are not frozen and were not entered
// yet into the kvstore, with their optimizer state: at the first step
// every parameter not frozen then, later one that was frozen until then
// (so the kvstore holds no copy of a frozen backbone, and a frozen
// parameter may stay uninitialised or live elsewhere). A distributed
// kvstore gives every worker rank 0's values; that is collective, so
// every worker must unfreeze the same parameters before the same step.
// lazy says this step's gradients were computed already: values that
// differed between the workers then fail the step.
func (t *Trainer) join(lazy bool) error {
	var keys []string
	var vals []*nd.NDArray
	var idx []int
	for i, p := range t.params {
		if t.joined[i] || p.GradReq() == nd.GradNull {
			continue
		}
		if !p.Initialized() {
			return errorf("trainer: parameter %s is not initialised (run a forward pass or Initialize first)", p.Name())
		}
		if !slices.Equal(p.Contexts(), t.devs) {
			return errorf("trainer: parameter %s lives on %v but the Trainer's other parameters on %v; all parameters must share one set of contexts", p.Name(), p.Contexts(), t.devs)
		}
		keys, vals, idx = append(keys, p.Name()), append(vals, p.ListData()[0]), append(idx, i)
	}
	if len(keys) == 0 {
		return nil
	}
	if err := t.kv.Init(keys, vals); err != nil {
		return errorf("trainer: %v", err)
	}
	for _, i := range idx {
		t.dtypes[i], t.masters[i] = t.params[i].DType(), t.params[i].version.Load()
	}
	defer func() { // after the pull: the state of half-precision weights copies them
		for _, i := range idx {
			t.joined[i] = true
			t.ensureStates(i)
		}
	}()
	if t.kv.NumWorkers() == 1 {
		return nil
	}
	// A distributed kvstore holds rank 0's values: start every worker's
	// replicas from them.
	for k, i := range idx {
		if err := t.kv.Pull(keys[k], t.params[i].ListData()); err != nil {
			return errorf("trainer: %v", err)
		}
		t.masters[i]-- // the pull replaced the weights: re-seed their masters
	}
	if kvstore.InitDiffered(t.kv) && lazy {
		names := strings.Join(keys[:min(len(keys), 3)], ", ")
		if len(keys) > 3 {
			names += fmt.Sprintf(" and %d more", len(keys)-3)
		}
		return errorf("trainer: the workers' initial parameters differed (%s) and this step's gradients were computed before the kvstore gave every worker rank 0's values; the step is skipped. "+
			"Call Trainer.Init after the parameters are initialised (after one forward pass for deferred shapes) and before the first backward pass, or seed every worker alike", names)
	}
	return nil
}

// ensureStates creates parameter i's optimizer state on every replica,
// unless it exists (or the kvstore updates): at the first step, or at the
// first update of a parameter frozen until then.
func (t *Trainer) ensureStates(i int) {
	if t.opts.UpdateOnKVStore || t.states[i] != nil {
		return
	}
	t.states[i] = make([]optimizer.State, len(t.devs))
	for d, w := range t.params[i].ListData() {
		t.states[i][d] = t.newState(w)
	}
}

// newState creates optimizer state for w that outlives any open scope.
func (t *Trainer) newState(w *nd.NDArray) optimizer.State {
	st := optimizer.NewState(t.opt, w)
	for _, a := range st {
		a.Persist()
	}
	return st
}

// freshReplicas returns, per parameter, the replica indices whose
// gradient was written since the last step, and records the new stamps
// (also those of frozen parameters, which have no fresh replica, so that
// a gradient written before a parameter was frozen is not used once it is
// unfrozen).
// A replica is stale when its device ran no backward pass (fewer samples
// than devices); its gradient is left out of the sum. A parameter with no
// fresh replica is an error unless ignoreStale is set; the lists are
// complete also then, and the stamps are not recorded.
func (t *Trainer) freshReplicas(ignoreStale bool) ([][]int, error) {
	out := make([][]int, len(t.params))
	var stale error
	for i, p := range t.params {
		if p.GradReq() == nd.GradNull {
			continue // frozen: skipped, as Gluon skips grad_req 'null'
		}
		for d, w := range p.ListData() {
			if w.GradStamp() != t.stamps[i][d] {
				out[i] = append(out[i], d)
			}
		}
		if len(out[i]) == 0 && !ignoreStale && stale == nil {
			stale = errorf("trainer: gradient of parameter %s is stale: no backward pass wrote it since the last step (was the parameter used in the forward pass inside autograd.Record?); use StepIgnoreStale to skip such parameters", p.Name())
		}
	}
	if stale != nil {
		return out, stale
	}
	for i, p := range t.params {
		if !p.Initialized() || len(p.ListData()) != len(t.stamps[i]) {
			continue // frozen, elsewhere or not initialised: stamped when it joins
		}
		for d, w := range p.ListData() {
			t.stamps[i][d] = w.GradStamp()
		}
	}
	return out, nil
}

// updatable returns, per parameter, the replicas an Update applies to:
// those of fresh (AllReduceGrads' list, or every replica when nil) of the
// parameters not frozen now.
func (t *Trainer) updatable(fresh [][]int) [][]int {
	out := make([][]int, len(t.params))
	for i, p := range t.params {
		switch {
		case p.GradReq() == nd.GradNull:
		case fresh != nil:
			out[i] = fresh[i]
		default:
			for d := range p.ListData() {
				out[i] = append(out[i], d)
			}
		}
	}
	return out
}

// countUpdate advances the Trainer's update count when the update changed
// some parameter (fresh lists its replicas per parameter), as MXNet's
// num_update, the largest of the parameters' counts, advances.
func (t *Trainer) countUpdate(fresh [][]int) {
	for _, f := range fresh {
		if len(f) > 0 {
			t.updates++
			return
		}
	}
}

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

// checkMoved fails when a parameter the Trainer has stepped now lives on
// other contexts than the Trainer's (ParamDict.ResetContext after the first
// use): its optimizer state, gradient stamps and kvstore keys belong to the
// old contexts.
func (t *Trainer) checkMoved() error {
	for i, p := range t.params {
		if t.joined[i] && p.Initialized() && !slices.Equal(p.Contexts(), t.devs) {
			return errorf("trainer: parameter %s moved from %v to %v after the Trainer's first step; make a new Trainer for the new contexts (SaveStates and LoadStates carry the optimizer state over)",
				p.Name(), t.devs, p.Contexts())
		}
	}
	return nil
}

// join enters parameters into the kvstore, which on a distributed kind
// gives every worker rank 0's values (a collective call: every worker
// joins the same parameters at the same point). At the first use (first)
// every initialised parameter on the Trainer's contexts joins, frozen
// ones included, as Gluon's kvstore holds every parameter: a frozen
// backbone starts alike on every worker. Later a parameter joins that was
// frozen and not ready at the first use (not initialised, or elsewhere)
// and is now unfrozen and ready (at the end of a step, or at Init); one
// still not ready is left for later (Step reports why it cannot train).
// lazy says this step's gradients were computed already: weights whose
// values differed between the workers then fail the step, after every
// call was made. Statistics (Parameter.Statistic) go first, in a call of
// their own, and are not checked: a training-mode pass reads none.
func (t *Trainer) join(first, lazy bool) error {
	var groups [3]struct { // statistics, frozen weights, the others
		keys []string
		vals []*nd.NDArray
		idx  []int
	}
	for i, p := range t.params {
		frozen := p.GradReq() == nd.GradNull
		if t.joined[i] || (!first && frozen) || !p.Initialized() || !slices.Equal(p.Contexts(), t.devs) {
			continue
		}
		g := &groups[2]
		switch {
		case p.Statistic:
			g = &groups[0]
		case frozen:
			g = &groups[1]
		}
		g.keys, g.vals, g.idx = append(g.keys, p.Name()), append(g.vals, p.ListData()[0]), append(g.idx, i)
	}
	var differed []string
	for k, g := range groups {
		if len(g.keys) == 0 {
			continue
		}
		if err := t.kv.Init(g.keys, g.vals); err != nil {
			return errorf("trainer: %v", err)
		}
		for _, i := range g.idx {
			t.joined[i] = true
			t.dtypes[i], t.masters[i] = t.params[i].DType(), t.params[i].version.Load()
		}
		if t.kv.NumWorkers() == 1 {
			continue
		}
		// A distributed kvstore holds rank 0's values: start every
		// worker's replicas from them.
		for j, i := range g.idx {
			if err := t.kv.Pull(g.keys[j], t.params[i].ListData()); err != nil {
				return errorf("trainer: %v", err)
			}
			t.masters[i]-- // the pull replaced the weights: re-seed their masters
		}
		if k > 0 && lazy && kvstore.InitDiffered(t.kv) {
			differed = append(differed, g.keys...)
		}
	}
	if len(differed) > 0 {
		names := strings.Join(differed[:min(len(differed), 3)], ", ")
		if len(differed) > 3 {
			names += fmt.Sprintf(" and %d more", len(differed)-3)
		}
		return errorf("trainer: the workers' initial parameters differed (%s) and this step's gradients were computed before the kvstore gave every worker rank 0's values; the step is skipped. "+
			"Call Trainer.Init after the parameters are initialised (after one forward pass for deferred shapes) and before the first backward pass, or seed every worker alike", names)
	}
	return nil
}

// settle ends a step that updated: a parameter unfrozen since the first
// use that was not ready then joins the kvstore (join), and the buckets
// are rebuilt when they no longer hold exactly the parameters that train
// (freezing or unfreezing kept them for the round that saw it). Both are
// alike on every worker.
func (t *Trainer) settle() error {
	err := t.join(false, false)
	if t.buckets != nil && !t.bucketsValid(nil) {
		t.buildBuckets()
	}
	return err
}

// active reports whether parameter i trains: not frozen, and in the
// kvstore (or about to be, at the first use).
func (t *Trainer) active(i int) bool {
	return t.params[i].GradReq() != nd.GradNull && (t.joined == nil || t.joined[i])
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
// complete also then, and the stamps are not recorded. A parameter that
// is not in the kvstore yet (see join) has no fresh replica this step.
func (t *Trainer) freshReplicas(ignoreStale bool) ([][]int, error) {
	out := make([][]int, len(t.params))
	var stale error
	var joining []int
	for i, p := range t.params {
		if p.GradReq() == nd.GradNull {
			continue // frozen: skipped, as Gluon skips grad_req 'null'
		}
		if !t.joined[i] { // unfrozen since the first use, when it was not ready
			switch {
			case !p.Initialized():
				if !ignoreStale && stale == nil {
					stale = errorf("trainer: parameter %s is not frozen but not initialised (run a forward pass or Initialize first)", p.Name())
				}
				continue
			case !slices.Equal(p.Contexts(), t.devs):
				return out, errorf("trainer: parameter %s lives on %v but the Trainer's other parameters on %v; all parameters must share one set of contexts", p.Name(), p.Contexts(), t.devs)
			}
			joining = append(joining, i)
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
	for _, i := range joining {
		out[i] = nil // joins the kvstore at the end of this step (settle), trains from the next
	}
	if stale != nil {
		return out, stale
	}
	for i, p := range t.params {
		if !p.Initialized() || len(p.ListData()) != len(t.stamps[i]) {
			continue // not initialised, or elsewhere: stamped once it is ready
		}
		for d, w := range p.ListData() {
			t.stamps[i][d] = w.GradStamp()
		}
	}
	return out, nil
}

// updatable returns, per parameter, the replicas an Update applies to:
// those of fresh (AllReduceGrads' list, or every replica when nil) of the
// parameters that train now (active; one that has not joined the kvstore
// yet joins at the end of the Update, and trains from the next).
func (t *Trainer) updatable(fresh [][]int) [][]int {
	out := make([][]int, len(t.params))
	for i, p := range t.params {
		switch {
		case !t.active(i) || !p.Initialized():
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

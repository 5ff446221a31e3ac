package gluon

import (
	"slices"

	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// GradScaler is a loss scale for mixed-precision training (package amp's
// LossScaler implements it): the loss was multiplied by LossScale before
// backward, so the gradients are too. A Trainer with a GradScaler divides
// them by it in the update and skips steps whose gradients overflowed.
type GradScaler interface {
	// LossScale returns the factor this step's loss was multiplied by.
	LossScale() float64
	// Update is told, once per Step (or Update), whether the summed
	// gradients were all finite; the step was skipped when they were not.
	Update(finite bool)
}

// SetGradScaler makes Step and Update divide the summed gradients by
// s.LossScale() and check them, all at once on each context after the
// sum (one read of the device per context, none per parameter): when any
// holds an Inf or a NaN the step changes no parameter and no optimizer
// state, and s.Update(false) is called; otherwise the update runs and
// s.Update(true) is. Over a distributed kvstore every worker sees the
// same sums, so every worker skips the same steps. A nil s removes the
// scaler. The Trainer must update on the devices (not UpdateOnKVStore).
// If the scaler can save its state (json.Marshaler and
// json.Unmarshaler), SaveStates and LoadStates keep it with the
// optimizer's.
func (t *Trainer) SetGradScaler(s GradScaler) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s != nil && t.opts.UpdateOnKVStore {
		return errorf("trainer: a GradScaler needs the update on the devices, not UpdateOnKVStore")
	}
	t.scaler = s
	return nil
}

// GradScaler returns the scaler set with SetGradScaler, or nil.
func (t *Trainer) GradScaler() GradScaler {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.scaler
}

// UnscaleGrads divides the gradients the next Update applies (those
// AllReduceGrads summed, less the parameters frozen since; without it,
// those of every parameter not frozen) by the loss scale in place and
// reports whether they are all finite: between AllReduceGrads and
// Update it puts the gradients in true units, e.g. to clip them
// (PyTorch's GradScaler.unscale_). The next Update does not divide again.
// A Step or AllReduceGrads on the same gradients (no backward pass since)
// is an error, as it would divide them again; after a backward pass they
// start a new round. Without a scaler it
// only checks. Half-precision gradients are refused, as PyTorch refuses
// them: divided in their own dtype, small ones would flush to zero.
func (t *Trainer) UnscaleGrads() (finite bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fresh := t.updatable(t.pending)
	if t.scaler == nil || t.unscaled {
		return t.gradsFinite(fresh)
	}
	for i, p := range t.params {
		if p.DType().IsHalf() && len(fresh[i]) > 0 {
			return false, errorf("trainer: UnscaleGrads: %s has %v gradients, which lose their small values when divided in place; keep the parameters float32 under autocast, or clip the scaled gradients", p.Name(), p.DType())
		}
	}
	inv := 1 / t.scaler.LossScale()
	err = nd.Catch(func() {
		for i, p := range t.params {
			for _, d := range fresh[i] { // what the next Update applies
				if g := p.ListData()[d].Grad(); g != nil {
					nd.ScaleInPlace(g, inv)
				}
			}
		}
	})
	if err != nil {
		return false, errorf("trainer: %v", err)
	}
	t.unscaled, t.unscaledAt = true, nil
	if t.pending == nil {
		t.unscaledAt = t.currentStamps()
	}
	return t.gradsFinite(fresh)
}

// currentStamps returns every replica's gradient stamp (nil rows for
// parameters not initialised).
func (t *Trainer) currentStamps() [][]uint64 {
	out := make([][]uint64, len(t.params))
	for i, p := range t.params {
		if !p.Initialized() {
			continue
		}
		for _, w := range p.ListData() {
			out[i] = append(out[i], w.GradStamp())
		}
	}
	return out
}

// sameStamps reports whether no backward pass wrote a gradient since at
// was taken (currentStamps).
func (t *Trainer) sameStamps(at [][]uint64) bool {
	return slices.EqualFunc(at, t.currentStamps(), slices.Equal)
}

// gradScale is the factor the gradients of this step still carry, and
// whether they are finite (always true without a scaler, where nothing
// is checked). fresh lists the replicas updated this step.
func (t *Trainer) gradScale(fresh [][]int) (scale float64, finite bool, err error) {
	if t.scaler == nil {
		return 1, true, nil
	}
	scale = t.scaler.LossScale()
	if t.unscaled {
		scale = 1
	}
	finite, err = t.gradsFinite(fresh)
	return scale, finite, err
}

// beginUpdate sets the rescale factor of this step's update, 1/(global
// batch · loss scale), and reports whether the update may run: false when
// a GradScaler found the gradients not finite (the skipped step is then
// recorded) or the check failed (err).
func (t *Trainer) beginUpdate(global int, fresh [][]int) (bool, error) {
	scale, finite, err := t.gradScale(fresh)
	if err != nil {
		return false, err
	}
	if !finite {
		t.gradScaleDone(false)
		t.finishStats(t.overlapped)
		return false, nil
	}
	t.rescale = 1 / (float64(global) * scale)
	return true, nil
}

// syncMasters checks that no parameter changed dtype since its optimizer
// state was made, and re-seeds the float32 master copies of the
// half-precision weights whose values were written through the Parameter
// (SetData, loading) or the kvstore since their last update: the weight
// is the truth then, not the stale master.
func (t *Trainer) syncMasters() error {
	for i, p := range t.params {
		if i >= len(t.dtypes) {
			break
		}
		if dt := p.DType(); dt != t.dtypes[i] && !t.joined[i] && t.states[i] == nil && t.kvState[i] == nil {
			t.dtypes[i] = dt // not in the kvstore and no optimizer state yet: they will be of this dtype
		} else if dt != t.dtypes[i] {
			return errorf("trainer: parameter %s was cast to %v after the Trainer made its kvstore entry or optimizer state for %v; cast before making the Trainer", p.Name(), dt, t.dtypes[i])
		}
		v := p.version.Load()
		if !p.DType().IsHalf() || v == t.masters[i] || t.opts.UpdateOnKVStore || t.states[i] == nil {
			t.masters[i] = v
			continue
		}
		err := nd.Catch(func() {
			for d, w := range p.ListData() {
				if st := t.states[i][d]; len(st) > 0 {
					nd.Assign(st[0], w)
				}
			}
		})
		if err != nil {
			return errorf("trainer: %v", err)
		}
		t.masters[i] = v
	}
	return nil
}

// gradScaleDone reports a step's outcome to the scaler and ends the
// round's unscaling.
func (t *Trainer) gradScaleDone(finite bool) {
	t.unscaled = false
	t.skippedLast = !finite
	if t.scaler != nil {
		t.scaler.Update(finite)
	}
}

// checkSession computes the finiteness checks: it never records and has
// no scopes, so its arrays are released here and by nothing else.
var checkSession = nd.NewSession("gradcheck")

// gradsFinite reports whether the summed gradients of the fresh replicas
// hold no Inf or NaN. After the sum every fresh replica of a parameter
// holds the same values, so it checks one: a gradient bucket's flat
// buffer on its first context when every parameter of the bucket is fresh
// there, else each parameter's first fresh replica. Per context it adds Sum(0·g) over those arrays, which is 0
// unless some element is not finite, and reads that one value.
func (t *Trainer) gradsFinite(fresh [][]int) (bool, error) {
	first := func(i int) int { // the first fresh replica of parameter i, or -1
		if len(fresh[i]) == 0 {
			return -1
		}
		return fresh[i][0]
	}
	var check []*nd.NDArray
	done := make([]bool, len(t.params))
	for _, b := range t.buckets {
		whole := true
		for _, i := range b.params {
			whole = whole && first(i) == 0
		}
		if whole {
			check = append(check, b.flats[0])
			for _, i := range b.params {
				done[i] = true
			}
		}
	}
	for i, p := range t.params {
		if d := first(i); !done[i] && d >= 0 {
			if g := p.ListData()[d].Grad(); g != nil {
				check = append(check, g)
			}
		}
	}
	accs := map[ctx.Context]*nd.NDArray{}
	var order []ctx.Context
	finite := true
	err := nd.Catch(func() {
		for _, g := range check {
			v := checkSession.Use(g)
			z := nd.MulScalar(v, 0)
			s := nd.Sum(z)
			s32 := s.AsType(nd.Float32)
			dev := g.Context()
			if acc, ok := accs[dev]; ok {
				nd.AddTo(acc, s32)
				s32.Release()
			} else {
				accs[dev] = s32
				order = append(order, dev)
			}
			if s32 != s {
				s.Release()
			}
			v.Release()
			z.Release()
		}
		for _, dev := range order {
			if x := accs[dev].Float64s()[0]; math.IsNaN(x) || math.IsInf(x, 0) {
				finite = false
			}
			accs[dev].Release()
		}
	})
	if err != nil {
		return false, errorf("trainer: %v", err)
	}
	return finite, nil
}

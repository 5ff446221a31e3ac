package gluon

import (
	"github.com/goluon/goluon/nd"
)

// Cast converts the parameter to dt, as Gluon's Parameter.cast: before
// initialisation it sets the dtype the replicas will have; after, every
// replica is replaced by a converted copy (rounded to nearest even) with
// a zeroed gradient buffer of the same request. A parameter with
// KeepFloat32 stays as it is when dt is half precision. A parameter whose
// gradients a Trainer already holds cannot be cast: cast first, then
// make the Trainer (whose optimizer keeps float32 master copies of
// half-precision weights; see optimizer.NewState).
func (p *Parameter) Cast(dt nd.DType) error {
	if !dt.IsFloat() {
		return errorf("parameter %s: cannot cast to %v; parameters have a floating-point dtype", p.Name(), dt)
	}
	if p.KeepFloat32 && dt.IsHalf() {
		return nil
	}
	if p.bucketOwner.Load() != nil {
		return errorf("parameter %s: a Trainer holds its gradients; cast before making the Trainer", p.Name())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dtype == dt {
		return nil
	}
	if p.data == nil { // not materialised yet (deferred shape): the replicas will be made in dt
		p.dtype = dt
		return nil
	}
	err := nd.Catch(func() {
		data := make([]*nd.NDArray, len(p.data))
		for i, a := range p.data {
			c := nd.PersistentSession().Zeros(a.Context(), dt, a.Shape()...)
			nd.Assign(c, a)
			c.AttachGrad(p.gradReq)
			data[i] = c
		}
		for _, a := range p.data {
			a.Release()
		}
		p.data = data
	})
	if err != nil {
		return errorf("parameter %s: %v", p.name, err)
	}
	p.dtype = dt
	p.version.Add(1)
	p.replicas.Add(1)
	return nil
}

// Cast converts every parameter of b to dt (Gluon's Block.cast) — except
// those marked KeepFloat32, such as BatchNorm's, when dt is half
// precision. Inputs must then be converted too (x.AsType(dt)): the
// layers do not mix dtypes. For mixed-precision training that keeps
// float32 parameters and converts per op, see package amp instead.
func Cast(b Component, dt nd.DType) error {
	for _, p := range CollectParams(b).List() {
		if err := p.Cast(dt); err != nil {
			return err
		}
	}
	return nil
}

package gluon

import (
	"fmt"
	"slices"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// Predictor serves a network's predictions from a published Snapshot of
// its parameters, safely beside training and from any number of
// goroutines (HTTP handlers) at once. It is the one thing a program needs
// to serve while it trains:
//
//	pred, _ := gluon.NewPredictor(newNet, gluon.PredictorOpts{})
//	pred.Publish(trainer.Snapshot()) // the learner, every so often
//	y, err := pred.Predict(x)        // any goroutine
//
// The Predictor owns a network of its own, built once by the function
// given to NewPredictor, and its own parameters, into which Publish copies
// a snapshot; training never touches them, so no lock is needed around
// Trainer.Step. Every call runs in a session of its own, in predict mode
// (no dropout, BatchNorm on its running statistics), without recording,
// inside a scope that releases its temporaries: the caller's recording,
// mode and scopes, and those of other calls, do not matter. The inputs are
// copied into the call's session when it starts, and the outputs are
// copies that belong to the caller (neutral, tracked by no scope; Release
// them or leave them to the garbage collector).
type Predictor struct {
	net    Component
	params *ParamDict
	dev    ctx.Context

	mu    sync.RWMutex // calls hold it for reading, Publish for writing
	step  int
	ready bool
}

// PredictorOpts configure a Predictor.
type PredictorOpts struct {
	// Context is where the Predictor keeps its parameters and computes
	// (default cpu(0)).
	Context ctx.Context
}

// NewPredictor builds the Predictor's network with build (the function
// that makes the trained network: the same architecture, so that the
// parameter names match the snapshots'). The Predictor serves nothing
// until the first Publish.
func NewPredictor[C Component](build func() C, o PredictorOpts) (p *Predictor, err error) {
	if build == nil {
		return nil, errorf("predictor: no build function")
	}
	if o.Context == (ctx.Context{}) {
		o.Context = ctx.CPU(0)
	}
	if err := ctx.Check(o.Context); err != nil {
		return nil, errorf("predictor: %v", err)
	}
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, errorf("predictor: the build function returned no usable network: %v", r)
		}
	}()
	net := Component(build())
	if net == nil || net.Meta() == nil {
		return nil, errorf("predictor: the build function returned no network")
	}
	p = &Predictor{net: net, params: CollectParams(net), dev: o.Context}
	if err := p.params.Initialize(initializer.Zero(), []ctx.Context{p.dev}, false); err != nil {
		return nil, errorf("predictor: %v", err)
	}
	return p, nil
}

// Publish copies the snapshot's values into the Predictor's parameters;
// calls that start afterwards use them. It waits for the calls in progress
// to end (they finish with the previous values). Every parameter of the
// Predictor's network must be in the snapshot, with the same shape; on an
// error nothing is changed.
func (p *Predictor) Publish(s *Snapshot) error {
	if s == nil {
		return errorf("predictor: publish of a nil snapshot")
	}
	// Copy onto the Predictor's context first, outside the lock.
	copies := make(map[*Parameter]*nd.NDArray, p.params.Len())
	defer func() {
		for _, c := range copies {
			c.Release()
		}
	}()
	for _, name := range p.params.names {
		v := s.Get(name)
		if v == nil && slices.Contains(s.unset, name) {
			return errorf("predictor: parameter %s had no value when the snapshot was taken (its shape is inferred at the first forward pass): snapshot after the first training step", name)
		}
		if v == nil {
			return errorf("predictor: parameter %s is not in the snapshot (which has %d parameters): does the build function make the trained network?", name, len(s.names))
		}
		param := p.params.params[name]
		if !shapeFits(param.Shape(), v.Shape()) {
			return errorf("predictor: parameter %s has shape %v, the snapshot's %v", name, param.Shape(), v.Shape())
		}
		copies[param] = nd.PersistentSession().CopyOf(v, p.dev)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	err := nd.Catch(func() {
		for param, c := range copies {
			param.SetData(c)
		}
	})
	if err != nil {
		return errorf("predictor: %v", err)
	}
	p.step, p.ready = s.Step, true
	return nil
}

// Step returns the Step of the snapshot published last.
func (p *Predictor) Step() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.step
}

// Predict runs the network on inputs (one per input of the network; any
// context, any session) in predict mode and returns its outputs on the
// Predictor's context. An op's failure (a wrong shape, say) is returned as
// an error.
func (p *Predictor) Predict(inputs ...*nd.NDArray) ([]*nd.NDArray, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.ready {
		return nil, errorf("predictor: nothing published yet (call Publish with a snapshot first)")
	}
	s := nd.NewSession("predictor")
	scope := s.NewScope()
	defer scope.Close()
	var outs []*nd.NDArray
	err := nd.Catch(func() {
		in := make([]*nd.NDArray, len(inputs))
		for i, x := range inputs {
			if x == nil {
				continue
			}
			in[i] = s.CopyOf(x, p.dev)
		}
		s.PauseMode(false, func() {
			for _, y := range Call(p.net, in...) {
				var out *nd.NDArray
				if y != nil {
					out = nd.PersistentSession().CopyOf(y, p.dev)
				}
				outs = append(outs, out)
			}
		})
	})
	if err != nil {
		for _, o := range outs {
			o.Release()
		}
		return nil, errorf("predictor: %v", err)
	}
	return outs, nil
}

// PredictData runs a single-input, single-output network on an input
// given as host data (a []float32, []float64, ... as nd.FromSlice takes)
// of the given shape, and returns the output's values and shape: the
// form an HTTP handler has at hand.
func (p *Predictor) PredictData(data any, shape ...int) ([]float32, []int, error) {
	var x *nd.NDArray
	if err := nd.Catch(func() { x = nd.PersistentSession().FromSlice(p.dev, data, shape...) }); err != nil {
		return nil, nil, errorf("predictor: input: %v", err)
	}
	defer x.Release()
	outs, err := p.Predict(x)
	if err != nil {
		return nil, nil, err
	}
	if len(outs) != 1 || outs[0] == nil {
		return nil, nil, errorf("predictor: the network returned %d outputs; use Predict", len(outs))
	}
	defer outs[0].Release()
	return outs[0].Float32s(), outs[0].Shape(), nil
}

// String describes the Predictor.
func (p *Predictor) String() string {
	return fmt.Sprintf("Predictor(%s on %v, %d parameters)", p.net.Meta().Name(), p.dev, p.params.Len())
}

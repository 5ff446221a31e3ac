package gluon

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// LossFunc is a per-sample loss of predictions against labels, such as
// the Forward method of a gluon/loss loss.
type LossFunc func(pred, label *nd.NDArray) *nd.NDArray

// StepOpts configure CompileStep.
type StepOpts struct {
	// Contexts are the contexts a batch is split over (SplitAndLoad), in
	// order; the default is the contexts of the Trainer's first
	// parameter.
	Contexts []ctx.Context
	// EvenSplit makes a batch whose size the contexts do not divide an
	// error instead of uneven shares.
	EvenSplit bool
	// CacheSize is how many traced graphs the step keeps, one per
	// signature (context, batch shape, dtypes); 0 means 8 per context.
	CacheSize int
	// Eager runs the same step without tracing: for comparisons, and for
	// networks that break the hybridize contract (see HybridBlock).
	Eager bool
	// IgnoreStale steps the Trainer with StepIgnoreStale: a parameter
	// that no context's backward pass reached (unused by the network or
	// the loss) is skipped instead of failing the step. (A batch with
	// fewer samples than contexts needs no option: the contexts without
	// a share are left out of the sums.)
	IgnoreStale bool
	// DeviceGraphs runs each context's traced forward and backward passes
	// as captured device graphs on a GPU (CUDA graphs; see
	// HybridOpts.DeviceGraphs); the Trainer's update runs as usual.
	DeviceGraphs bool
}

// TrainStep is a training step compiled by CompileStep. Each call of Run
// splits a batch over the contexts; on each context, concurrently, the
// network's forward pass, the loss and the backward pass of the loss run
// as one traced graph (recorded once per signature, replayed after:
// HybridBlock's rules apply to the network and the loss); then the
// Trainer sums the gradients over the contexts and updates the
// parameters. Parameters, losses and outputs are those of the eager
// step, bit for bit. A TrainStep is not safe for concurrent Runs.
type TrainStep struct {
	tr     *Trainer
	devs   []ctx.Context
	even   bool
	stale  bool
	call   Component // stepBlock, hybridized unless Eager
	hybrid *HybridBlock
}

// StepResult is what one Run computed, per context, in the order of the
// contexts (only those that got a share, when the batch has fewer samples
// than contexts): the context's share of the labels, the per-sample
// losses and the network's outputs (detached), as a metric's Update takes
// them.
type StepResult struct {
	Labels  []*nd.NDArray
	Losses  []*nd.NDArray
	Outputs []*nd.NDArray
}

// stepBlock is a network followed by its loss: inputs (data, label),
// outputs (loss, detached prediction). Its parameters are the network's.
type stepBlock struct {
	net  Block
	loss LossFunc
}

func (b *stepBlock) Meta() *BlockMeta { return b.net.Meta() }

func (b *stepBlock) ForwardMulti(in ...*nd.NDArray) []*nd.NDArray {
	pred := b.net.Forward(in[0])
	return []*nd.NDArray{b.loss(pred, in[1]), pred.Detach()}
}

// CompileStep returns net's training step with loss and tr: forward,
// loss and backward captured per context as traced graphs, then tr's
// update (see TrainStep). tr must train net's parameters. With a
// GradScaler set on tr (mixed precision), Run scales the loss by its
// current scale itself and the Trainer divides it out: loss must not
// scale (amp.LossScaler.Scale) on its own.
func CompileStep(net Block, loss LossFunc, tr *Trainer, opts StepOpts) (*TrainStep, error) {
	if net == nil || loss == nil || tr == nil {
		return nil, errorf("CompileStep: the network, the loss and the Trainer must not be nil")
	}
	devs := opts.Contexts
	if len(devs) == 0 {
		// The first parameter not frozen, as the Trainer's contexts are
		// those of its parameters not frozen (frozen ones may be elsewhere).
		var first *Parameter
		for _, p := range tr.params {
			if p.GradReq() != nd.GradNull {
				first = p
				break
			}
		}
		if first == nil {
			return nil, errorf("CompileStep: the Trainer has no parameter to train")
		}
		devs = first.Contexts()
		if len(devs) == 0 {
			return nil, errorf("CompileStep: parameter %s is not initialised: no contexts to split batches over (initialise it or set StepOpts.Contexts)", first.Name())
		}
	}
	s := &TrainStep{tr: tr, devs: append([]ctx.Context(nil), devs...), even: opts.EvenSplit, stale: opts.IgnoreStale}
	s.call = &stepBlock{net: net, loss: loss}
	if !opts.Eager {
		size := opts.CacheSize
		if size <= 0 {
			size = 8
		}
		s.hybrid = Hybridize(s.call, HybridOpts{CacheSize: size * len(devs), DeviceGraphs: opts.DeviceGraphs})
		s.call = s.hybrid
	}
	return s, nil
}

// Run trains on one batch: data and label are split over the contexts
// along their first axis, and the Trainer steps by the batch size.
func (s *TrainStep) Run(data, label *nd.NDArray) (StepResult, error) {
	if data == nil || label == nil {
		return StepResult{}, errorf("TrainStep.Run: nil data or label")
	}
	if data.NDim() == 0 || label.NDim() == 0 || data.Shape()[0] != label.Shape()[0] {
		return StepResult{}, errorf("TrainStep.Run: data %v and label %v must have the same first dimension (the batch)", data.Shape(), label.Shape())
	}
	xs, err := SplitAndLoad(data, s.devs, s.even)
	if err != nil {
		return StepResult{}, err
	}
	ys, err := SplitAndLoad(label, s.devs, s.even)
	if err != nil {
		return StepResult{}, err
	}
	// A batch with fewer samples than contexts has a share for the first
	// len(xs) contexts only; the others' replicas get no gradient and the
	// Trainer leaves them out of the sums.
	devs := s.devs[:len(xs)]
	res := StepResult{Labels: ys, Losses: make([]*nd.NDArray, len(devs)), Outputs: make([]*nd.NDArray, len(devs))}
	scale := 1.0 // a GradScaler's current loss scale, which the Trainer divides out
	if sc := s.tr.GradScaler(); sc != nil {
		scale = sc.LossScale()
	}
	data.Session().Record(func() {
		err = ForEachDevice(devs, func(i int, _ ctx.Context) error {
			out := Call(s.call, xs[i], ys[i])
			var heads []*nd.NDArray
			if scale != 1 { // the head gradient carries the scale, so a replay needs no retrace when it changes
				heads = []*nd.NDArray{nd.FullLike(out[0], scale)}
			}
			nd.Backward(out[:1], heads, false)
			res.Losses[i], res.Outputs[i] = out[0], out[1]
			return nil
		})
	})
	if err != nil {
		return StepResult{}, err
	}
	batch := data.Shape()[0]
	if s.stale {
		err = s.tr.StepIgnoreStale(batch)
	} else {
		err = s.tr.Step(batch)
	}
	return res, err
}

// Stats returns the step's graph counts (all zero when Eager).
func (s *TrainStep) Stats() HybridStats {
	if s.hybrid == nil {
		return HybridStats{}
	}
	return s.hybrid.Stats()
}

// Contexts returns the contexts a batch is split over.
func (s *TrainStep) Contexts() []ctx.Context { return append([]ctx.Context(nil), s.devs...) }

package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/tutorials/internal/common"
)

// lm holds what the training loop works with.
type lm struct {
	net     gluon.Block // what training and evaluation run (hybridized with -hybridize)
	eager   gluon.Block // the network itself, for sampling (its window grows: a new shape each step)
	params  *gluon.ParamDict
	trainer *gluon.Trainer
	devs    []ctx.Context
	lossFn  loss.SoftmaxCrossEntropy
	context int
	clip    float64
	scaler  *amp.LossScaler // -amp: the loss scale (nil in float32)
}

// passes runs the model on a batch of n windows (x and y: n·t token ids on
// the host), split over the contexts with SplitAndLoad. Each context's
// loss is its tokens' summed cross-entropy divided by all n·t tokens, so
// the contexts' gradients add up to the gradient of the batch's mean loss.
// With train set it records and runs backward; it returns the mean loss.
func (m *lm) passes(x, y []int64, n int, train bool) (float64, error) {
	t := len(x) / n
	xs, err := gluon.SplitAndLoad(nd.FromSlice(ctx.CPU(0), x, n, t), m.devs, false)
	if err != nil {
		return 0, err
	}
	ys, err := gluon.SplitAndLoad(nd.FromSlice(ctx.CPU(0), y, n, t), m.devs, false)
	if err != nil {
		return 0, err
	}
	sums := make([]float64, len(xs))
	pass := func(i int, _ ctx.Context) error {
		return nd.Catch(func() {
			logits := m.net.Forward(xs[i])
			v := logits.Shape()[2]
			l := m.lossFn.Forward(nd.Reshape(logits, -1, v), nd.Reshape(ys[i], -1))
			s := nd.MulScalar(nd.Sum(l), 1/float64(n*t))
			if train {
				autograd.Backward(common.ScaleLoss(m.scaler, s))
			}
			sums[i] = s.AsType(nd.Float64).Scalar()
		})
	}
	devs := m.devs[:len(xs)]
	if train {
		autograd.Record(func() { err = gluon.ForEachDevice(devs, pass) })
	} else {
		autograd.PredictMode(func() { err = gluon.ForEachDevice(devs, pass) })
	}
	total := 0.0
	for _, s := range sums {
		total += s
	}
	return total, err
}

// step trains on one batch: forward and backward on every context, the
// gradients summed over the contexts, clipped to a global norm of m.clip
// (the norm of the whole batch's gradient, as PyTorch's clip_grad_norm_
// sees it on one device) and applied. It returns the batch loss and the
// gradient norm before clipping.
func (m *lm) step(x, y []int64, n int) (lossValue, norm float64, err error) {
	s := nd.NewScope()
	defer s.Close()
	if lossValue, err = m.passes(x, y, n, true); err != nil {
		return 0, 0, err
	}
	if err := m.trainer.AllReduceGrads(); err != nil {
		return 0, 0, err
	}
	// With -amp the gradients carry the loss scale: divide it out before
	// clipping. A step whose gradients overflowed is not clipped, and
	// Update skips it.
	if m.scaler != nil {
		if finite, err := m.trainer.UnscaleGrads(); err != nil || !finite {
			return lossValue, math.NaN(), errors.Join(err, m.trainer.Update(1))
		}
	}
	// After the all-reduce every replica holds the batch gradient: clip
	// each context's set by the same norm.
	for i := range m.devs {
		var grads []*nd.NDArray
		for _, p := range m.params.List() {
			if g := p.ListGrad(); len(g) > i && g[i] != nil {
				grads = append(grads, g[i])
			}
		}
		if norm, err = gluon.ClipGlobalNorm(grads, m.clip); err != nil {
			return 0, 0, err
		}
	}
	return lossValue, norm, m.trainer.Update(1) // the loss is already a mean
}

// estimate returns the mean loss over iters batches of n windows drawn from
// data by a sampler seeded with seed: the same batches at every
// evaluation, so the curve shows the model and not the draw.
func (m *lm) estimate(data []int64, seed uint64, iters, n int) (float64, error) {
	rng := splitmix64(seed)
	total := 0.0
	for range iters {
		x, y := batch(&rng, data, n, m.context)
		s := nd.NewScope()
		l, err := m.passes(x, y, n, false)
		s.Close()
		if err != nil {
			return 0, err
		}
		total += l
	}
	return total / float64(iters), nil
}

// sample generates n bytes after prompt on the first context, each drawn
// from the softmax of the last position's logits at the given temperature,
// with the context cropped to the model's window.
func (m *lm) sample(v *vocab, prompt []byte, n int, temperature float64) (string, error) {
	ids := v.encode(prompt)
	dev := m.devs[0]
	err := nd.Catch(func() {
		autograd.PredictMode(func() {
			for range n {
				s := nd.NewScope()
				win := ids[max(0, len(ids)-m.context):]
				logits := m.eager.Forward(nd.FromSlice(dev, win, 1, len(win)))
				last := nd.Reshape(nd.SliceAxis(logits, len(win)-1, len(win), 1), 1, -1)
				next := nd.Categorical(nd.DivScalar(last, temperature), 1, true)
				ids = append(ids, next.AsType(nd.Int64).Int64s()[0])
				s.Close()
			}
		})
	})
	return v.decode(ids), err
}

// perplexity is e^loss, the number a language-model reader expects too.
func perplexity(l float64) float64 { return math.Exp(l) }

// evalLine formats an evaluation as nanoGPT prints it.
func evalLine(step int, train, val float64) string {
	return fmt.Sprintf("step %d: train loss %.4f, val loss %.4f (perplexity %.2f)", step, train, val, perplexity(val))
}

package gluon

import (
	"slices"

	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// The autograd hooks of the buckets: a gradient ready during backward,
// the end of a backward pass, zeroing, and the waits for sums in flight.

// gradReady is the Ready hook of every bucketed replica: the last final
// gradient of a bucket, over all contexts, starts its reduction, provided
// every bucket still matches its parameters (else Step rebuilds them and
// sums everything).
func (t *Trainer) gradReady(leaf *nd.NDArray) {
	s, ok := t.slots[leaf]
	if !ok || t.params[s.b.params[s.j]].bucketOwner.Load() != t {
		return
	}
	b := s.b
	b.mu.Lock()
	if b.ready[s.d][s.j] {
		b.mu.Unlock()
		return
	}
	b.ready[s.d][s.j] = true
	b.left--
	launch := b.left == 0 && b.overlap && !b.launched && !t.hostStepOnly()
	b.mu.Unlock()
	if !launch || !t.roundValid() {
		return
	}
	b.mu.Lock()
	if t.ordered() {
		// Over processes every worker must start the same collectives:
		// the launch rule cannot depend on how this process's passes
		// interleave, so no same-pass check here.
		b.queued = !b.launched && b.left == 0
		b.mu.Unlock()
		t.startQueued()
		return
	}
	// The same-pass check under the lock that decides the launch: another
	// context's next pass may have come in since the Ready above.
	if launch = !b.launched && b.left == 0 && b.samePassLocked(); launch {
		b.launched, b.done, b.zeros = true, make(chan struct{}), nil
	}
	done := b.done
	b.mu.Unlock()
	if launch {
		nd.Go(func() { // in the step's goroutine tree
			err := t.kv.(kvstore.AllReducer).AllReduce(b.flats)
			b.mu.Lock()
			b.err = err
			b.mu.Unlock()
			close(done)
		})
	}
}

// waitSumOf waits for the sum in flight, if any, of p's bucket: ZeroGrad
// must not zero a gradient that a sum is about to overwrite.
func (t *Trainer) waitSumOf(p *Parameter) {
	for _, l := range p.ListData() {
		s, ok := t.slots[l]
		if !ok {
			continue
		}
		s.b.mu.Lock()
		done, finish := s.b.done, s.b.finish
		s.b.mu.Unlock()
		if finish != nil {
			finish()
		}
		if done != nil {
			<-done
		}
		return
	}
}

// zeroed is told by Parameter.ZeroGrad that p's gradients are zero on
// every context. Once every parameter of a bucket summed this round is
// zeroed, the bucket holds no sums any more: its round starts again as
// if nothing had been summed, so that a later backward pass on some
// contexts only is summed in Step instead of failing it.
func (t *Trainer) zeroed(p *Parameter) {
	if t.ordered() {
		// Over processes a restart changes the order of collectives,
		// which every worker would have to do alike.
		return
	}
	for _, l := range p.ListData() {
		s, ok := t.slots[l]
		if !ok {
			continue
		}
		b := s.b
		b.mu.Lock()
		if (b.launched || b.rerun) && b.done != nil {
			select {
			case <-b.done: // summed: the zeros replaced the sums
			default:
				b.mu.Unlock()
				continue // still summing: leave the round as it is
			}
		}
		if b.launched || b.rerun {
			if b.zeros == nil {
				b.zeros = make([]bool, len(b.params))
				for j, i := range b.params { // frozen since: their gradients are not used
					b.zeros[j] = t.params[i].GradReq() == nd.GradNull
				}
			}
			b.zeros[s.j] = true
			if !slices.Contains(b.zeros, false) {
				b.restartLocked()
				b.rerun, b.zeros = false, nil
			}
		}
		b.mu.Unlock()
		return
	}
}

// samePassLocked (b.mu held) reports whether every gradient of b comes
// from the same backward pass of this round on every context (each
// written as many times since the round began). A context that runs two passes in a row
// (the second writing again what the first wrote) would otherwise launch
// the sum with its second pass's gradients and another context's first.
func (b *bucket) samePassLocked() bool {
	var want uint64
	for d := range b.leaves {
		for j, l := range b.leaves[d] {
			delta := l.GradStamp() - b.base[d][j]
			if d == 0 && j == 0 {
				want = delta
			} else if delta != want {
				return false
			}
		}
	}
	return true
}

// gradEnd is the End hook: when the backward pass that made a gradient
// final returns, it waits for the sum of that gradient's bucket if one
// started, so that once every context's pass has returned the gradients
// hold their sums (as after PyTorch DDP's backward) and code between
// Backward and Step (ClipGlobalNorm, ZeroGrad, reading a gradient) sees
// settled values. The sum still overlaps the rest of the pass; a bucket
// that waits for another context's gradients is waited for by that
// context's pass.
func (t *Trainer) gradEnd(leaf *nd.NDArray) {
	s, ok := t.slots[leaf]
	if !ok || t.params[s.b.params[s.j]].bucketOwner.Load() != t {
		return
	}
	b := s.b
	b.mu.Lock()
	done, finish := b.done, b.finish
	if !b.launched {
		done, finish = nil, nil
	}
	b.mu.Unlock()
	if finish != nil {
		finish()
	}
	if done != nil {
		<-done
	}
}

// beforeGrad is the Before hook. A gradient about to be written while its
// bucket is being summed, or after, waits for the sum and starts the
// bucket's round again (a second backward pass before Step: a GAN's
// generator pass through the discriminator, an adversarial example's
// input gradient); the new pass must then write the bucket on every
// context, or Step fails, since the others hold sums. A gradient written
// again before the launch is no longer final until its new Ready.
func (t *Trainer) beforeGrad(leaf *nd.NDArray) {
	s, ok := t.slots[leaf]
	if !ok || t.params[s.b.params[s.j]].bucketOwner.Load() != t {
		return
	}
	b := s.b
	b.mu.Lock()
	b.queued = false // not started yet: it waits for its new Ready
	restarted := false
	for b.launched && b.err == nil {
		done, finish := b.done, b.finish
		b.mu.Unlock()
		if finish != nil {
			finish()
		}
		<-done
		b.mu.Lock()
		if b.launched && b.done == done && b.err == nil {
			b.restartLocked()
			restarted = true
		}
	}
	if b.ready[s.d][s.j] {
		b.ready[s.d][s.j] = false
		b.left++
	}
	b.mu.Unlock()
	if restarted && t.ordered() {
		t.rewindChain(b)
	}
}

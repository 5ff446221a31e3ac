package gluon

import (
	"fmt"
	"slices"
	"time"

	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// updateBuckets applies the optimizer to every replica of each parameter
// with a fresh gradient, the contexts in parallel. A bucket whose
// parameters are all fresh and share their step count and multipliers is
// updated with one call per context on its flat buffers (bitwise the same
// as one call per parameter: the rule is elementwise; the step counts may
// differ when the rule is StepFree); others parameter by parameter.
func (t *Trainer) updateBuckets(fresh [][]int) error {
	whole := make([]bool, len(t.buckets))
	t.fusedLast = 0
	for k, b := range t.buckets {
		if whole[k] = t.fusable(b, fresh); whole[k] {
			t.fusedLast++
		}
	}
	return t.onContexts(func(d int) error {
		return nd.Catch(func() {
			for k, b := range t.buckets {
				if whole[k] {
					t.updateFused(b, d)
					continue
				}
				for _, i := range b.params {
					if len(fresh[i]) > 0 {
						p := t.params[i]
						optimizer.Apply(t.opt, t.paramInfo(i), p.ListData()[d], p.ListData()[d].Grad(), t.states[i][d])
					}
				}
			}
		})
	})
}

// fusable reports whether bucket b can be updated whole this step, and
// packs its optimizer state the first time.
func (t *Trainer) fusable(b *bucket, fresh [][]int) bool {
	if !b.fused {
		return false
	}
	first := t.params[b.params[0]]
	sf, _ := t.opt.(optimizer.StepFree)
	stepFree := sf != nil && sf.StepFree()
	for _, i := range b.params {
		p := t.params[i]
		if len(fresh[i]) == 0 || (t.steps[i] != t.steps[b.params[0]] && !stepFree) || p.LRMult != first.LRMult || p.WDMult != first.WDMult ||
			len(t.states[i][0]) != len(t.states[b.params[0]][0]) {
			return false
		}
	}
	if b.sflats == nil {
		for d := range t.devs {
			var flats []*nd.NDArray
			for k := range t.states[b.params[0]][d] {
				arrs := make([]*nd.NDArray, len(b.params))
				for j, i := range b.params {
					arrs[j] = t.states[i][d][k]
				}
				f, _ := nd.Pack(arrs)
				flats = append(flats, f)
			}
			b.sflats = append(b.sflats, flats)
		}
	}
	return true
}

// updateFused updates bucket b's weights on context d with one call.
func (t *Trainer) updateFused(b *bucket, d int) {
	i := b.params[0]
	info := t.paramInfo(i)
	info.Name = fmt.Sprintf("the bucket of %s and %d more", t.params[i].Name(), len(b.params)-1)
	t.opt.Update(info, b.wflats[d], b.flats[d], b.sflats[d])
}

// TrainerStats describes the Trainer's last step.
type TrainerStats struct {
	// Buckets is the number of gradient buckets (0 when the gradients are
	// not bucketed: one context in one process, or UpdateOnKVStore),
	// BucketBytes their sizes, first reduced first.
	Buckets     int
	BucketBytes []int
	// Overlapped counts the buckets whose sum started during the last
	// step's backward pass, before Step; Fused those updated with one
	// optimizer call per context (an elementwise rule, and parameters that
	// share their multipliers, and their step count unless the rule is
	// optimizer.StepFree); Shared those Step summed in
	// shares, each context one part of the bucket on its own goroutine
	// (CPU contexts in one process).
	Overlapped, Fused, Shared int
	// Skipped says the step changed nothing because its gradients held an
	// Inf or NaN (with a GradScaler; see SetGradScaler).
	Skipped bool
	// ReduceTime is the time Step spent on the gradients' sums after the
	// backward pass: waiting for the sums started during backward, running
	// the others and, with a distributed kvstore, the step's control
	// exchange. It is the part of the exchange not hidden behind backward.
	ReduceTime time.Duration
	// Contexts holds, per context of the parameters, the copies and host
	// waits (nd.DeviceStats) from the end of the step before (or the
	// Trainer's creation) to the end of the last step: a whole training
	// step, the batch's copies included.
	Contexts []nd.DeviceStats
}

// Stats returns the statistics of the last step.
func (t *Trainer) Stats() TrainerStats {
	s := t.last
	s.BucketBytes = slices.Clone(s.BucketBytes)
	s.Contexts = slices.Clone(s.Contexts)
	return s
}

// markStats starts the counting interval of the next step.
func (t *Trainer) markStats() {
	t.marks = t.marks[:0]
	for _, d := range t.devs {
		t.marks = append(t.marks, nd.Counters(d))
	}
}

// finishStats records the statistics of the step that ends now.
func (t *Trainer) finishStats(overlapped int) {
	s := TrainerStats{Buckets: len(t.buckets), Overlapped: overlapped, Fused: t.fusedLast, Shared: t.sharedLast, ReduceTime: t.reduceTime, Skipped: t.skippedLast}
	for _, b := range t.buckets {
		s.BucketBytes = append(s.BucketBytes, b.flats[0].Size()*b.flats[0].DType().Size())
	}
	for i, d := range t.devs {
		c := nd.Counters(d)
		if i < len(t.marks) {
			c = c.Sub(t.marks[i])
		}
		s.Contexts = append(s.Contexts, c)
	}
	t.last = s
	t.markStats()
}

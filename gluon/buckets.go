package gluon

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// The default bucket sizes, PyTorch DistributedDataParallel's: the first
// bucket, which holds the last layers' gradients (the first to be final in
// backward), is small so that its reduction starts early.
const (
	DefaultBucketBytes      = 25 << 20
	DefaultFirstBucketBytes = 1 << 20
)

// unowned reports whether no Trainer holds the parameters' gradients in its
// buckets.
func (t *Trainer) unowned() bool {
	for _, p := range t.params {
		if p.bucketOwner.Load() != nil && p.GradReq() != nd.GradNull {
			return false
		}
	}
	return true
}

// bucket is a group of parameters whose gradients live, on every context,
// in one flat buffer and are summed over the contexts together.
type bucket struct {
	params  []int           // indices into Trainer.params, in bucket order
	flats   []*nd.NDArray   // the buffer on each context
	leaves  [][]*nd.NDArray // per context, per parameter: the replica
	grads   [][]*nd.NDArray // per context, per parameter: its gradient (a view of flats)
	reqs    []nd.GradReq    // each parameter's GradReq when the bucket was built
	overlap bool            // every parameter is GradWrite: reduce during backward
	fused   bool            // an elementwise optimizer: weights (and state) packed like the gradients
	wflats  []*nd.NDArray   // the weights' buffer on each context (fused)
	sflats  [][]*nd.NDArray // per context, per state array: its buffer (fused, once the state exists)
	remove  []func()        // removes the hooks

	mu       sync.Mutex
	ready    [][]bool // per context, per parameter: final in this round
	left     int      // (context, parameter) pairs not yet final
	launched bool     // the reduction started during backward
	queued   bool     // final, waiting for the buckets before it to start (ordered)
	rerun    bool     // a gradient was written again after a launch: the round restarted
	done     chan struct{}
	finish   func() // waits for an ordered bucket's reduction and closes done
	err      error
	base     [][]uint64 // per context, per parameter: the gradient's stamp when the round started
	zeros    []bool     // per parameter: zeroed (ZeroGrad) since the bucket was summed
}

// slot is where a parameter replica sits in the buckets.
type slot struct {
	b    *bucket
	d, j int // context index, position in the bucket
}

// useBuckets reports whether the Trainer keeps its gradients in buckets:
// the update on the devices, and either several contexts in one process
// summed by a kvstore that can all-reduce buffers, or several processes
// whose kvstore starts reductions asynchronously (dist_sync).
func (t *Trainer) useBuckets() bool {
	if t.opts.UpdateOnKVStore {
		return false
	}
	if t.kv.NumWorkers() > 1 {
		_, ok := t.kv.(kvstore.AsyncAllReducer)
		return ok
	}
	_, ok := t.kv.(kvstore.AllReducer)
	return ok && len(t.devs) > 1
}

// buildBuckets groups the parameters that train (active), in reverse
// order of registration, into buckets of at most the configured size (per dtype), packs each
// bucket's gradients into flat buffers and registers the hooks that start
// a bucket's reduction once its gradients are final on every context.
func (t *Trainer) buildBuckets() {
	t.dropBuckets()
	// Take the parameters over from a Trainer that packed them before,
	// once its sums in flight are done.
	prev := map[*Trainer]bool{}
	for i, p := range t.params {
		if !t.active(i) {
			continue // not bucketed: another Trainer may keep it
		}
		if o := p.bucketOwner.Swap(t); o != nil && o != t {
			prev[o] = true
		}
	}
	// What such a Trainer summed during this round's backward is summed
	// already: Step must not sum it again.
	for o := range prev {
		o.waitBuckets()
		for _, b := range o.buckets {
			b.mu.Lock()
			if b.launched && b.err == nil {
				for j, i := range b.params {
					// Only replicas still where they were summed: a
					// parameter moved since (ResetContext) holds new
					// gradients on its new contexts.
					p := o.params[i]
					if !slices.EqualFunc(p.ListData(), b.leaves, func(l *nd.NDArray, ls []*nd.NDArray) bool { return l == ls[j] }) {
						continue
					}
					if t.presummed == nil {
						t.presummed = map[*Parameter]bool{}
					}
					t.presummed[p] = true
				}
			}
			b.mu.Unlock()
		}
		o.endRound()
	}
	t.validMu.Lock()
	t.validState = 0
	t.validMu.Unlock()
	t.resetChain()
	first, rest := t.opts.FirstBucketBytes, t.opts.BucketBytes
	if first == 0 {
		first = DefaultFirstBucketBytes
	}
	if rest == 0 {
		rest = DefaultBucketBytes
	}
	open := map[nd.DType]*bucket{}
	bytes := map[nd.DType]int{}
	var order []*bucket
	limit := first
	for i := len(t.params) - 1; i >= 0; i-- {
		p := t.params[i]
		if !t.active(i) {
			continue // frozen, or not in the kvstore yet (bucketsValid notices the change)
		}
		dt := p.DType()
		size := p.ListData()[0].Size() * dt.Size()
		b := open[dt]
		if b != nil && bytes[dt]+size > limit && len(b.params) > 0 {
			b = nil
			limit = rest
		}
		if b == nil {
			b = &bucket{}
			open[dt], bytes[dt] = b, 0
			order = append(order, b)
		}
		b.params = append(b.params, i)
		bytes[dt] += size
	}
	t.buckets = order
	t.slots = map[*nd.NDArray]slot{}
	for _, b := range order {
		b.overlap = !t.opts.NoOverlap
		if e, ok := t.opt.(optimizer.Elementwise); ok {
			// Half-precision weights update through float32 master copies,
			// parameter by parameter (optimizer.Apply).
			b.fused = e.Elementwise() && !t.params[b.params[0]].DType().IsHalf()
		}
		for _, i := range b.params {
			b.reqs = append(b.reqs, t.params[i].GradReq())
			if t.params[i].GradReq() != nd.GradWrite {
				b.overlap = false
			}
		}
		for d := range t.devs {
			leaves := make([]*nd.NDArray, len(b.params))
			grads := make([]*nd.NDArray, len(b.params))
			for j, i := range b.params {
				leaves[j] = t.params[i].ListData()[d]
				t.slots[leaves[j]] = slot{b: b, d: d, j: j}
			}
			flat, _ := nd.PackGrads(leaves)
			if b.fused {
				w, _ := nd.Pack(leaves)
				b.wflats = append(b.wflats, w)
			}
			for j, l := range leaves {
				grads[j] = l.Grad()
				b.remove = append(b.remove, l.AddGradHook(nd.GradHook{Before: t.beforeGrad, Ready: t.gradReady, End: t.gradEnd}))
			}
			b.flats = append(b.flats, flat)
			b.leaves, b.grads = append(b.leaves, leaves), append(b.grads, grads)
		}
		b.reset()
	}
}

// Close waits for the gradient sums in flight, removes the Trainer's
// gradient hooks from the parameters and gives its bucket buffers back (the
// parameters' arrays stay valid: each keeps its values in memory that
// lives as long as it does). A Trainer over several contexts holds these
// until it is closed; a closed Trainer must not be used again.
func (t *Trainer) Close() error {
	t.dropBuckets()
	for _, p := range t.params {
		p.bucketOwner.CompareAndSwap(t, nil)
	}
	t.closed = true
	return nil
}

// dropBuckets removes the hooks and forgets the buckets (the gradient
// arrays stay views of the buffers, which live while they do).
func (t *Trainer) dropBuckets() {
	t.waitBuckets()
	for _, b := range t.buckets {
		for _, r := range b.remove {
			r()
		}
		for _, f := range slices.Concat(b.flats, b.wflats, slices.Concat(b.sflats...)) {
			f.Release()
		}
	}
	t.buckets, t.slots = nil, nil
}

// bucketsValid reports whether every bucket is valid and holds every
// parameter that trains (active). With fresh (the round's fresh replicas, see
// freshReplicas) it allows what Step can finish the round with, skipping
// those parameters: a parameter frozen since the buckets were built, and
// one unfrozen since that has no fresh gradient.
func (t *Trainer) bucketsValid(fresh [][]int) bool {
	if t.buckets == nil {
		return false
	}
	allow := fresh != nil
	in := make([]bool, len(t.params))
	for _, b := range t.buckets {
		if !b.valid(t, allow) {
			return false
		}
		for _, i := range b.params {
			in[i] = true
		}
	}
	for i := range t.params {
		if !in[i] && t.active(i) && !(allow && len(fresh[i]) == 0) {
			return false // unfrozen since the buckets were built
		}
	}
	return true
}

// valid reports whether the bucket still holds the parameters' current
// replicas and gradient arrays, in its buffers, with the GradReq they had
// when it was built (AttachGrad, SetGradReq and ResetContext change them,
// and so does another Trainer that packs the same parameters); with
// frozen, a GradReq set to GradNull since is allowed.
func (b *bucket) valid(t *Trainer, frozen bool) bool {
	for j, i := range b.params {
		p := t.params[i]
		data := p.ListData()
		if len(data) != len(b.leaves) || p.bucketOwner.Load() != t {
			return false
		}
		for d, leaves := range b.leaves {
			l := leaves[j]
			req := l.GradReq()
			if frozen && req == nd.GradNull {
				req = b.reqs[j]
			}
			if data[d] != l || l.Grad() != b.grads[d][j] || req != b.reqs[j] ||
				!b.grads[d][j].SharesMemory(b.flats[d]) || (b.fused && !l.SharesMemory(b.wflats[d])) {
				return false
			}
		}
	}
	return true
}

// endRound waits for the reductions in flight and starts a new round in
// every bucket.
func (t *Trainer) endRound() {
	t.waitBuckets()
	for _, b := range t.buckets {
		b.reset()
	}
	t.validMu.Lock()
	t.validState = 0
	t.validMu.Unlock()
	t.presummed = nil
	t.resetChain()
}

// reset starts a new round: no gradient final yet.
func (b *bucket) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ready == nil {
		b.ready = make([][]bool, len(b.flats))
		for d := range b.ready {
			b.ready[d] = make([]bool, len(b.params))
		}
	}
	b.restartLocked()
	b.rerun, b.err, b.zeros = false, nil, nil
	// The gradients' stamps at the round's start, for samePass.
	b.base = make([][]uint64, len(b.leaves))
	for d, ls := range b.leaves {
		b.base[d] = make([]uint64, len(ls))
		for j, l := range ls {
			b.base[d][j] = l.GradStamp()
		}
	}
}

// restartLocked starts the bucket's round again (b.mu held); after a
// launch it marks the round as rerun, because a gradient is about to be
// written again.
func (b *bucket) restartLocked() {
	for d := range b.ready {
		clear(b.ready[d])
	}
	b.left = len(b.flats) * len(b.params)
	b.rerun = b.rerun || b.launched
	b.launched, b.queued, b.done, b.finish = false, false, nil, nil
}

// roundValid reports, once per round, whether every bucket matches its
// parameters.
func (t *Trainer) roundValid() bool {
	t.validMu.Lock()
	defer t.validMu.Unlock()
	if t.validState == 0 {
		t.validState = 2
		if t.bucketsValid(nil) {
			t.validState = 1
		}
	}
	return t.validState == 1
}

// anyLaunched waits for the reductions in flight and reports whether some
// bucket was summed during this round's backward.
func (t *Trainer) anyLaunched() bool {
	t.waitBuckets()
	for _, b := range t.buckets {
		b.mu.Lock()
		l := b.launched
		b.mu.Unlock()
		if l {
			return true
		}
	}
	return false
}

// waitBuckets waits for every reduction in flight.
func (t *Trainer) waitBuckets() {
	for _, b := range t.buckets {
		b.mu.Lock()
		done, finish := b.done, b.finish
		b.mu.Unlock()
		if finish != nil {
			finish()
		}
		if done != nil {
			<-done
		}
	}
}

// reduceBuckets completes the round: it waits for the reductions started
// during backward and runs the others, after zeroing the gradients of
// stale replicas (fresh[i] lists parameter i's fresh ones) so that they
// add nothing. Every bucket starts a new round, also on failure.
func (t *Trainer) reduceBuckets(fresh [][]int) error {
	t.waitBuckets()
	defer t.endRound()
	t.overlapped, t.sharedLast = 0, 0
	var pending []*bucket
	for _, b := range t.buckets {
		b.mu.Lock()
		launched, rerun, err := b.launched, b.rerun, b.err
		rerun = rerun && !b.onlyFrozenLeftLocked(t)
		b.mu.Unlock()
		if err != nil {
			return errorf("trainer: reducing the gradients of %s: %v", b.names(t), err)
		}
		if rerun && !launched {
			return errorf("trainer: the gradients of %s were summed over the contexts during a backward pass, then a later backward pass wrote some of them again but not all of them on every context, so others hold sums; "+
				"run each backward pass on every context, accumulate with GradAdd, or set TrainerOpts.NoOverlap", b.names(t))
		}
		if launched {
			t.overlapped++
			continue
		}
		pending = append(pending, b)
	}
	if t.hostShares() {
		return t.sumShares(pending, fresh)
	}
	for _, b := range pending {
		if err := t.sumStep(b, fresh); err != nil {
			return err
		}
	}
	return nil
}

// sumStep sums bucket b in Step (see prepareSum).
func (t *Trainer) sumStep(b *bucket, fresh [][]int) error {
	keep, anyFresh := t.prepareSum(b, fresh)
	defer restoreKept(keep)
	if !anyFresh {
		return nil
	}
	if err := t.kv.(kvstore.AllReducer).AllReduce(b.flats); err != nil {
		return errorf("trainer: reducing the gradients of %s: %v", b.names(t), err)
	}
	return nil
}

// prepareSum readies bucket b for a sum in Step. The gradients of stale
// replicas are zeroed, so that they add nothing; a parameter with no fresh
// replica at all (StepIgnoreStale skips it), or one summed already by the
// Trainer this one took it over from, keeps its gradients as they were, as
// without buckets: prepareSum returns (gradient, saved copy) pairs for
// restoreKept to put back after the sum, and whether any parameter of the
// bucket has a fresh replica.
func (t *Trainer) prepareSum(b *bucket, fresh [][]int) (keep [][2]*nd.NDArray, anyFresh bool) {
	for j, i := range b.params {
		if len(fresh[i]) == 0 || t.presummed[t.params[i]] {
			for d := range t.devs {
				keep = append(keep, [2]*nd.NDArray{b.grads[d][j], nd.PersistentSession().CopyOf(b.grads[d][j], t.devs[d])})
			}
			anyFresh = anyFresh || len(fresh[i]) > 0
			continue
		}
		anyFresh = true
		isFresh := make([]bool, len(t.devs))
		for _, d := range fresh[i] {
			isFresh[d] = true
		}
		for d, f := range isFresh {
			if !f {
				nd.FillInPlace(b.grads[d][j], 0)
			}
		}
	}
	return keep, anyFresh
}

// restoreKept writes the saved gradients back (see prepareSum).
func restoreKept(keep [][2]*nd.NDArray) {
	for _, k := range keep {
		nd.Assign(k[0], k[1])
		k[1].Release()
	}
}

// onlyFrozenLeftLocked reports whether every gradient of the bucket not
// final in this round belongs to a parameter frozen now (b.mu held): a
// second backward pass that skipped it wrote all the others, so Step sums
// them and keeps the frozen one's as it is.
func (b *bucket) onlyFrozenLeftLocked(t *Trainer) bool {
	for d := range b.ready {
		for j, ok := range b.ready[d] {
			if !ok && t.params[b.params[j]].GradReq() != nd.GradNull {
				return false
			}
		}
	}
	return true
}

// names lists the bucket's parameters for error messages.
func (b *bucket) names(t *Trainer) string {
	var ns []string
	for _, i := range b.params {
		ns = append(ns, t.params[i].Name())
	}
	return fmt.Sprintf("the bucket of %s", strings.Join(ns, ", "))
}

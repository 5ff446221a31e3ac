package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/goluon/goluon/nd"
)

// Sampler gives the order in which one epoch visits a dataset's indices.
// Orders are a pure function of the epoch, so an epoch can be replayed.
type Sampler interface {
	// Len returns the number of indices in every epoch's order.
	Len() int
	// Order returns a new slice with the indices of epoch (>= 0), in order.
	Order(epoch int) []int
}

// SequentialSampler visits 0, 1, ..., N-1 in every epoch.
type SequentialSampler struct{ N int }

// Len returns N.
func (s SequentialSampler) Len() int { return s.N }

// Order returns 0..N-1.
func (s SequentialSampler) Order(int) []int {
	o := make([]int, s.N)
	for i := range o {
		o[i] = i
	}
	return o
}

// RandomSampler visits a random permutation of 0..N-1 drawn from Seed and
// the epoch: the same seed and epoch give the same order, other epochs
// other orders.
type RandomSampler struct {
	N    int
	Seed uint64
}

// Len returns N.
func (s RandomSampler) Len() int { return s.N }

// Order returns the permutation of epoch.
func (s RandomSampler) Order(epoch int) []int {
	// Constants distinct from SampleRNG's keep the two streams unrelated.
	r := rand.New(rand.NewPCG(s.Seed^0x6a09e667f3bcc908, uint64(epoch)^0xbb67ae8584caa73b))
	return r.Perm(s.N)
}

// LastBatch says what batching does with the samples left over when the
// epoch's length is not a multiple of the batch size, as Gluon's
// last_batch argument.
type LastBatch uint8

// The last-batch policies.
const (
	// Keep yields the incomplete last batch as it is (the default).
	Keep LastBatch = iota
	// Discard drops the incomplete last batch.
	Discard
	// Rollover carries the leftover samples to the start of the next
	// epoch's first batch.
	Rollover
)

// String returns "keep", "discard" or "rollover".
func (p LastBatch) String() string {
	switch p {
	case Keep:
		return "keep"
	case Discard:
		return "discard"
	case Rollover:
		return "rollover"
	}
	return fmt.Sprintf("LastBatch(%d)", uint8(p))
}

// ParseLastBatch reads "keep", "discard" or "rollover".
func ParseLastBatch(s string) (LastBatch, error) {
	for _, p := range []LastBatch{Keep, Discard, Rollover} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("data: unknown last-batch policy %q (want keep, discard or rollover)", s)
}

// BatchSampler groups a Sampler's order into batches of indices (Gluon's
// BatchSampler).
//
// Under Rollover the leftover of epoch e-1 opens epoch e. Unlike Gluon,
// which carries whatever the previous iteration left behind, the carried
// indices are computed from the epoch number alone: they are the last
// (e·N mod size) indices of the concatenated orders of epochs 0..e-1. An
// epoch's batches therefore do not depend on whether earlier epochs were
// iterated to the end, and any epoch can be replayed.
type BatchSampler struct {
	sampler Sampler
	size    int
	last    LastBatch
}

// NewBatchSampler returns a BatchSampler of batches of size indices.
func NewBatchSampler(s Sampler, size int, last LastBatch) (*BatchSampler, error) {
	if s == nil {
		return nil, fmt.Errorf("data: NewBatchSampler: nil sampler")
	}
	if size <= 0 {
		return nil, fmt.Errorf("data: NewBatchSampler: batch size %d must be positive", size)
	}
	if last > Rollover {
		return nil, fmt.Errorf("data: NewBatchSampler: unknown last-batch policy %v", last)
	}
	return &BatchSampler{sampler: s, size: size, last: last}, nil
}

func checkEpoch(op string, epoch int) {
	if epoch < 0 {
		nd.Panicf(op, nd.ErrArgument, "negative epoch %d", epoch)
	}
}

// carryLen returns how many indices epoch e-1 carries into epoch e under
// Rollover: (e·N) mod size, computed without overflow.
func (b *BatchSampler) carryLen(epoch int) int {
	if b.last != Rollover {
		return 0
	}
	return (epoch % b.size) * (b.sampler.Len() % b.size) % b.size
}

// carry returns the indices rolled over into epoch.
func (b *BatchSampler) carry(epoch int) []int {
	k := b.carryLen(epoch)
	if k == 0 {
		return nil
	}
	out := make([]int, k)
	// Fill from the back with the tails of epochs epoch-1, epoch-2, ...
	end := k
	for e := epoch - 1; end > 0 && e >= 0; e-- {
		o := b.sampler.Order(e)
		take := min(end, len(o))
		copy(out[end-take:end], o[len(o)-take:])
		end -= take
	}
	return out[end:] // end > 0 only for a sampler whose orders are shorter than its Len
}

// Len returns the number of batches in epoch.
func (b *BatchSampler) Len(epoch int) int {
	checkEpoch("data.BatchSampler.Len", epoch)
	n := b.sampler.Len() + b.carryLen(epoch)
	if b.last == Keep {
		return (n + b.size - 1) / b.size
	}
	return n / b.size
}

// Batches returns the batches of indices of epoch (>= 0), in order. The
// batches share one backing array; each has its capacity cut to its
// length.
func (b *BatchSampler) Batches(epoch int) [][]int {
	checkEpoch("data.BatchSampler.Batches", epoch)
	order := b.sampler.Order(epoch)
	if c := b.carry(epoch); c != nil {
		order = append(c, order...)
	}
	nb := b.Len(epoch)
	out := make([][]int, nb)
	for i := range out {
		lo, hi := i*b.size, min((i+1)*b.size, len(order))
		out[i] = order[lo:hi:hi]
	}
	return out
}

// ShardSampler gives one worker of a distributed job (rank Rank of Size)
// its disjoint share of every epoch of Base, like PyTorch's
// DistributedSampler. (Shard, by contrast, cuts a dataset into fixed
// contiguous parts: each worker would then shuffle only within its part.) Every worker builds Base identically (the same seed),
// so the shards of one epoch partition the same order: element i of the
// epoch goes to rank i mod Size. When the length is not a multiple of
// Size, the order is padded by repeating its start (every worker must run
// the same number of steps), or with DropLast the tail is dropped.
//
// With strided shards, step k of Size workers that each take batches of B
// covers exactly the samples of step k of one process taking batches of
// B·Size over Base: N workers see the data set once per epoch together,
// and the same global batches as a single process.
type ShardSampler struct {
	Base       Sampler
	Rank, Size int
	DropLast   bool
}

// NewShardSampler returns rank's shard of base among size workers.
func NewShardSampler(base Sampler, rank, size int, dropLast bool) (ShardSampler, error) {
	switch {
	case base == nil:
		return ShardSampler{}, fmt.Errorf("data: shard sampler without a base sampler")
	case size <= 0 || rank < 0 || rank >= size:
		return ShardSampler{}, fmt.Errorf("data: shard %d of %d workers (want 0 <= rank < size)", rank, size)
	case dropLast && base.Len() < size:
		return ShardSampler{}, fmt.Errorf("data: %d samples cannot be split over %d workers with DropLast", base.Len(), size)
	}
	return ShardSampler{Base: base, Rank: rank, Size: size, DropLast: dropLast}, nil
}

// Len returns the shard's length: ⌈N/Size⌉, or ⌊N/Size⌋ with DropLast.
func (s ShardSampler) Len() int {
	n := s.Base.Len()
	if s.DropLast {
		return n / s.Size
	}
	return (n + s.Size - 1) / s.Size
}

// Order returns the shard of epoch's order.
func (s ShardSampler) Order(epoch int) []int {
	full := s.Base.Order(epoch)
	per := s.Len()
	out := make([]int, per)
	if len(full) == 0 {
		return out[:0]
	}
	for i := range out {
		out[i] = full[(s.Rank+i*s.Size)%len(full)]
	}
	return out
}

// WeightedRandomSampler draws Len indices per epoch, index i with
// probability proportional to its weight (PyTorch's
// WeightedRandomSampler): with replacement, independent draws, the usual
// way to oversample rare classes; without, a weighted random order of Len
// distinct indices. Draws come from the seed and the epoch, so an epoch
// replays. Build it with NewWeightedRandomSampler.
type WeightedRandomSampler struct {
	cum         []float64 // cumulative weights
	weights     []float64
	n           int
	replacement bool
	seed        uint64
}

// NewWeightedRandomSampler returns a sampler of n indices per epoch over
// len(weights) samples. Weights must be finite and non-negative with a
// positive sum; without replacement, n must not exceed the number of
// positive weights.
func NewWeightedRandomSampler(weights []float64, n int, replacement bool, seed uint64) (*WeightedRandomSampler, error) {
	if n <= 0 {
		return nil, fmt.Errorf("data: NewWeightedRandomSampler: %d samples per epoch, want > 0", n)
	}
	s := &WeightedRandomSampler{weights: slices.Clone(weights), n: n, replacement: replacement, seed: seed}
	var sum float64
	positive := 0
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 1) {
			return nil, fmt.Errorf("data: NewWeightedRandomSampler: weight %d is %v, want a finite value >= 0", i, w)
		}
		if w > 0 {
			positive++
		}
		sum += w
		s.cum = append(s.cum, sum)
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		return nil, fmt.Errorf("data: NewWeightedRandomSampler: the weights sum to %v, want a finite positive sum", sum)
	}
	if !replacement && n > positive {
		return nil, fmt.Errorf("data: NewWeightedRandomSampler: %d distinct samples asked without replacement, but only %d have a positive weight", n, positive)
	}
	return s, nil
}

// Len returns the number of indices per epoch.
func (s *WeightedRandomSampler) Len() int { return s.n }

// Order returns the epoch's draws.
func (s *WeightedRandomSampler) Order(epoch int) []int {
	r := rand.New(rand.NewPCG(s.seed^0x3c6ef372fe94f82b, uint64(epoch)^0xa54ff53a5f1d36f1))
	out := make([]int, s.n)
	if s.replacement {
		total := s.cum[len(s.cum)-1]
		for k := range out {
			// The first index whose cumulative weight exceeds u: zero
			// weights are never drawn.
			u := r.Float64() * total
			i := sort.Search(len(s.cum), func(i int) bool { return s.cum[i] > u })
			if i == len(s.cum) { // u rounded up to the total
				i = slices.IndexFunc(s.cum, func(c float64) bool { return c == total })
			}
			out[k] = i
		}
		return out
	}
	// Efraimidis–Spirakis: the n largest keys u^(1/w), taken in log space
	// as the n smallest log(−log u) − log w, which neither overflows nor
	// ties for the tiniest weights.
	type keyed struct {
		key float64
		i   int
	}
	keys := make([]keyed, 0, len(s.weights))
	for i, w := range s.weights {
		if w > 0 {
			keys = append(keys, keyed{math.Log(-math.Log(1-r.Float64())) - math.Log(w), i})
		}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return a.i - b.i
	})
	for k := range out {
		out[k] = keys[k].i
	}
	return out
}

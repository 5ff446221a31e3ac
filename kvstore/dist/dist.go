// Package dist adds the distributed kvstore kinds dist_sync and
// dist_device_sync (which differ only in where a process sums its own
// devices' values; see DeviceKind): synchronous
// data-parallel training over several processes (on one machine or many),
// with MPI as the engine. Importing the package registers the kind:
//
//	import _ "github.com/goluon/goluon/kvstore/dist"
//
//	tr, err := gluon.NewTrainer(params, opt, "dist_sync", gluon.TrainerOpts{})
//
// and the program is built with -tags mpi and launched by mpirun:
//
//	go build -tags mpi -o gluon-mnist ./tutorials/gluon-mnist
//	mpirun -np 4 ./gluon-mnist -kvstore dist_sync
//
// How a step works. A Trainer keeps its gradients in buckets (see
// gluon.TrainerOpts.BucketBytes) and reduces them through the
// kvstore.AsyncAllReducer methods: before a step's first bucket, one
// control exchange (18 int64s, BeginBuckets) checks that every worker holds
// the same buckets of the same keys, shapes and dtypes; a mismatch fails on
// every worker with an error instead of hanging. Each bucket, as soon as
// the backward pass has made it final on every local context, is summed
// over this process's devices (on the host, or on the device with
// dist_device_sync), copied into an MPI buffer and allreduced over the
// processes with MPI_Iallreduce (StartAllReduce) while backward goes on;
// every worker starts its buckets in the same order. Step waits for them,
// then a second control exchange (BeginStep) checks that every worker
// updates the same parameters and sums the batch sizes. Every process then
// holds the same sums and applies the same update, so the replicas stay
// equal.
//
// With UpdateOnKVStore the Trainer instead pushes its parameters'
// gradients after backward: one control exchange, then the keys packed in
// order into fusion buffers of up to Options.FusionBytes, each summed with
// one blocking allreduce (Horovod's tensor fusion), and the update applied
// to the store's copy.
//
// Init broadcasts rank 0's initial values, so every worker starts from the
// same parameters whatever its seed; the Trainer pulls them into every
// device replica.
//
// Built without -tags mpi, creating the kind fails with mpi.ErrNotBuilt,
// which says how to rebuild.
package dist

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/nd"
)

// The kinds this package registers: dist_sync sums each process's
// devices on the host (as kind local does) before the allreduce;
// dist_device_sync sums them on the first device that pushed (as kind
// device does), so only the sum crosses to the host — the better choice
// with GPUs.
const (
	Kind       = "dist_sync"
	DeviceKind = "dist_device_sync"
)

func init() {
	kvstore.Register(Kind, func() (kvstore.KVStore, error) { return New(Options{}) })
	kvstore.Register(DeviceKind, func() (kvstore.KVStore, error) { return New(Options{SumOnDevice: true}) })
}

// DefaultFusionBytes is the default size cap of one fused allreduce
// (Horovod's default fusion threshold).
const DefaultFusionBytes = 64 << 20

// Options configure a Store.
type Options struct {
	// FusionBytes caps the bytes of one fused allreduce; a key larger
	// than the cap is reduced on its own. Default DefaultFusionBytes.
	FusionBytes int
	// Timeout is the deadline of each collective; a worker that stops
	// taking part makes the others fail after it. Default: the mpi
	// package's (5 minutes, or GOLUON_MPI_TIMEOUT).
	Timeout time.Duration
	// SumOnDevice sums a key's local values on the first value's device
	// instead of the host (kind dist_device_sync).
	SumOnDevice bool
}

// Stats counts a store's exchanges since it was created.
type Stats struct {
	Controls   int   // control exchanges (key checks and batch sums)
	Allreduces int   // data allreduces
	Foreground int   // bucket allreduces started without background progress (the last of a round)
	Broadcasts int   // data broadcasts (Init)
	Bytes      int64 // bytes allreduced or broadcast by this process
	// Time is the wall time callers spent blocked in exchanges: packing,
	// the collectives (including waiting for the slowest worker) and
	// unpacking.
	Time time.Duration
	// Background is the summed wall time of the reductions started with
	// StartAllReduce, from their start (summing and packing included) to
	// their completion; they overlap with computing, so it is not time
	// lost (Trainer.Stats' ReduceTime tells how much a step waited).
	Background time.Duration
}

// Store is the dist_sync kvstore. Its methods are collective: every
// worker calls them in the same order with the same keys.
type Store struct {
	comm *mpi.Comm
	opts Options

	mu       sync.Mutex
	stored   map[string]*nd.NDArray // each key's value, on the host
	updater  kvstore.Updater
	ctrl     *mpi.Buffer
	fusion   *mpi.Buffer
	free     []*mpi.Buffer // bucket buffers not in use (StartAllReduce)
	agreed   uint64        // signature checked by BeginStep for the next exchange
	buckets  int           // the buckets of the round BeginBuckets began (0: none)
	started  int           // the buckets of that round started so far
	differed bool          // some worker's Init values differed from rank 0's
	steps    int
	stats    Stats
}

// New initialises MPI (once per process) and returns a store.
func New(o Options) (*Store, error) {
	if o.FusionBytes <= 0 {
		o.FusionBytes = DefaultFusionBytes
	}
	comm, err := mpi.Init()
	if err != nil {
		return nil, fmt.Errorf("kvstore %s: %w", Kind, err)
	}
	if o.Timeout > 0 {
		comm.SetTimeout(o.Timeout)
	}
	ctrl, err := mpi.Alloc(ctrlLen * 8)
	if err != nil {
		return nil, err
	}
	return &Store{comm: comm, opts: o, stored: map[string]*nd.NDArray{}, ctrl: ctrl}, nil
}

// Finalize shuts MPI down if a store (or anything else) initialised it.
// Call it once, at the end of a program that used dist_sync; no
// collective may follow.
func Finalize() error {
	if w := mpi.World(); w != nil {
		return w.Finalize()
	}
	return nil
}

// Type returns the kind: "dist_sync", or "dist_device_sync" with
// SumOnDevice.
func (s *Store) Type() string {
	if s.opts.SumOnDevice {
		return DeviceKind
	}
	return Kind
}

// Rank returns this worker's rank.
func (s *Store) Rank() int { return s.comm.Rank() }

// NumWorkers returns the number of worker processes.
func (s *Store) NumWorkers() int { return s.comm.Size() }

// SetUpdater makes pushes apply u to the summed value instead of storing
// it. Every worker must set the same updater.
func (s *Store) SetUpdater(u kvstore.Updater) { s.mu.Lock(); s.updater = u; s.mu.Unlock() }

// Stats returns the exchange counts so far.
func (s *Store) Stats() Stats { s.mu.Lock(); defer s.mu.Unlock(); return s.stats }

// Barrier returns when every worker has entered it.
func (s *Store) Barrier() error { return s.comm.Barrier() }

// host is where the store keeps its values: MPI moves host memory.
var host = ctx.CPU(0)

// Init stores the keys' initial values, which are rank 0's on every
// worker (broadcast). Every worker must pass the same keys, shapes and
// dtypes.
func (s *Store) Init(keys []string, values []*nd.NDArray) error {
	if len(keys) != len(values) {
		return s.errorf("init with %d keys but %d values", len(keys), len(values))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		if s.stored[k] != nil || slices.Index(keys, k) != i {
			return s.errorf("key %q initialised twice", k)
		}
	}
	shapes := make([]keyShape, len(keys))
	for i, v := range values {
		shapes[i] = keyShape{v.Shape(), v.DType()}
	}
	if _, err := s.control("init", keys, shapes, 0); err != nil {
		return err
	}
	singles := make([][]*nd.NDArray, len(values))
	for i, v := range values {
		singles[i] = []*nd.NDArray{v}
		s.stored[keys[i]] = nd.PersistentSession().Empty(host, v.DType(), v.Shape()...)
	}
	err := s.fused(keys, singles, "bcast", func(i int, buf any) {
		s.stored[keys[i]].WriteFrom(buf)
	})
	if err != nil {
		return err
	}
	// Agree on whether any worker started elsewhere (one int64, max).
	x := s.ctrl.Int64s()
	x[0] = 0
	for i, v := range values {
		if !sameValues(v, s.stored[keys[i]]) {
			x[0] = 1
			break
		}
	}
	if err := s.comm.Allreduce(s.ctrl, mpi.Int64, 1, mpi.Max); err != nil {
		return s.errorf("init: %w", err)
	}
	s.stats.Controls++
	s.differed = x[0] != 0
	return nil
}

// InitDiffered reports whether, at the last Init, some worker's values
// differed from rank 0's.
func (s *Store) InitDiffered() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.differed }

// sameValues reports whether a and b hold equal elements.
func sameValues(a, b *nd.NDArray) bool {
	return slices.Equal(a.Float64s(), b.Float64s())
}

// BeginStep checks that every worker is about to exchange keys and
// returns the sum of batch over the workers.
func (s *Store) BeginStep(keys []string, batch int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	shapes, err := s.shapesOf("step", keys)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	global, err := s.control("exchange", keys, shapes, batch)
	s.stats.Time += time.Since(t0)
	if err != nil {
		return 0, err
	}
	s.agreed = signature("exchange", keys, shapes)
	s.buckets = 0 // the round is over
	return global, nil
}

// Push sums values over the devices and the workers into key's value (or
// hands the sum to the updater).
func (s *Store) Push(key string, values []*nd.NDArray) error {
	return s.PushPullList([]string{key}, [][]*nd.NDArray{values}, nil)
}

// Pull copies key's value into every out. It is local: no exchange.
func (s *Store) Pull(key string, outs []*nd.NDArray) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pull(key, outs)
}

// PushPull pushes then pulls one key.
func (s *Store) PushPull(key string, values, outs []*nd.NDArray) error {
	return s.PushPullList([]string{key}, [][]*nd.NDArray{values}, [][]*nd.NDArray{outs})
}

// PushPullList sums each key's values over the devices and the workers,
// fusing the keys into as few allreduces as Options.FusionBytes allows,
// then pulls the results into outs (a nil outs[i] skips the pull).
func (s *Store) PushPullList(keys []string, values, outs [][]*nd.NDArray) error {
	if len(values) != len(keys) || (outs != nil && len(outs) != len(keys)) {
		return s.errorf("%d keys but %d value lists and %d output lists", len(keys), len(values), len(outs))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	shapes, err := s.shapesOf("push", keys)
	if err != nil {
		return err
	}
	for i, k := range keys {
		if len(values[i]) == 0 {
			return s.errorf("push of key %q with no values", k)
		}
		for _, v := range values[i] {
			if !slices.Equal(v.Shape(), shapes[i].shape) {
				return s.errorf("push of key %q with shape %v, stored shape %v", k, v.Shape(), shapes[i].shape)
			}
		}
	}
	if sig := signature("exchange", keys, shapes); s.agreed != sig {
		if _, err := s.control("exchange", keys, shapes, 0); err != nil {
			return err
		}
	}
	s.agreed = 0
	s.steps++
	t0 := time.Now()
	defer func() { s.stats.Time += time.Since(t0) }()
	err = s.fused(keys, values, "allreduce", func(i int, buf any) {
		stored := s.stored[keys[i]]
		if s.updater == nil {
			stored.WriteFrom(buf)
			return
		}
		merged := nd.Empty(host, stored.DType(), stored.Shape()...)
		defer merged.Release()
		merged.WriteFrom(buf)
		s.updater(keys[i], merged, stored)
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if outs != nil && outs[i] != nil {
			if err := s.pull(k, outs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) pull(key string, outs []*nd.NDArray) error {
	stored := s.stored[key]
	if stored == nil {
		return s.errorf("pull of key %q, which was never initialised", key)
	}
	for _, o := range outs {
		if !slices.Equal(o.Shape(), stored.Shape()) {
			return s.errorf("pull of key %q into shape %v, stored shape %v", key, o.Shape(), stored.Shape())
		}
		nd.Assign(o, stored)
	}
	return nil
}

type keyShape struct {
	shape []int
	dtype nd.DType
}

func (s *Store) shapesOf(op string, keys []string) ([]keyShape, error) {
	out := make([]keyShape, len(keys))
	for i, k := range keys {
		v := s.stored[k]
		if v == nil {
			return nil, s.errorf("%s of key %q, which was never initialised", op, k)
		}
		out[i] = keyShape{v.Shape(), v.DType()}
	}
	return out, nil
}

func (s *Store) errorf(format string, args ...any) error {
	prefix := fmt.Sprintf("kvstore %s (rank %d of %d): ", s.Type(), s.comm.Rank(), s.comm.Size())
	return fmt.Errorf(prefix+format, args...)
}

// signature hashes an exchange: its kind, and each key's name, shape and
// dtype in order.
func signature(op string, keys []string, shapes []keyShape) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%d", op, len(keys))
	for i, k := range keys {
		fmt.Fprintf(h, "|%s%v%v", k, shapes[i].shape, shapes[i].dtype)
	}
	return h.Sum64()
}

// Package kvstore sums values that live on several devices: the
// all-reduce step of data-parallel training. A Trainer pushes each
// parameter's per-device gradients under the parameter's name and pulls
// the sum back to every device.
//
// Kinds register by name, so new ones (MPI, NCCL) plug in without
// touching the Trainer:
//
//	local   sums on the host, cpu(0)
//	device  sums on the devices; each key's merge buffer lives on one of
//	        them, keys spread largest-first over the least-loaded device
//
// Every kind adds the values of a key in the order they are given (device
// order), so the same inputs give bitwise identical sums on every run, and
// local and device give identical sums too.
package kvstore

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// Updater applies an optimizer step to a stored value from the merged
// gradient (when the optimizer runs on the kvstore).
type Updater func(key string, merged, stored *nd.NDArray)

// KVStore holds one value per key and sums pushed values into it.
type KVStore interface {
	// Type returns the kind name ("local", "device").
	Type() string
	// Init stores a copy of each key's initial value. Keys must be new.
	Init(keys []string, values []*nd.NDArray) error
	// Push sums the values (one per device) of key. Without an updater the
	// sum replaces the stored value; with one, the updater combines them.
	Push(key string, values []*nd.NDArray) error
	// Pull copies the stored value of key into every out.
	Pull(key string, outs []*nd.NDArray) error
	// PushPull is Push followed by Pull; outs may be the pushed arrays.
	PushPull(key string, values, outs []*nd.NDArray) error
	// PushPullList is PushPull for several keys, in the given order (a
	// nil outs[i] pushes without pulling). Kinds that span processes
	// fuse the keys into as few exchanges as possible.
	PushPullList(keys []string, values, outs [][]*nd.NDArray) error
	// SetUpdater makes Push run u instead of replacing the stored value.
	SetUpdater(u Updater)
	// Rank and NumWorkers describe the process within a distributed job
	// (0 and 1 for single-process kinds).
	Rank() int
	NumWorkers() int
	// BeginStep starts a synchronous step, before the step's
	// PushPullList of keys, and returns the step's global batch: batch
	// itself in one process; for kinds that span processes the sum of
	// every worker's batch, after checking that every worker is about to
	// exchange the same keys (names, shapes and dtypes, in order), failing
	// on every worker when they differ. The Trainer calls it once per step
	// whatever the kind.
	BeginStep(keys []string, batch int) (globalBatch int, err error)
}

// Distributed is implemented by kinds whose workers are separate
// processes (dist_sync, in package kvstore/dist). Their collective methods
// must be called by every worker, in the same order.
type Distributed interface {
	KVStore
	// Barrier returns when every worker has entered it.
	Barrier() error
	// InitDiffered reports whether, at the last Init, some worker's
	// values differed from rank 0's (which Init gave every worker).
	InitDiffered() bool
}

var (
	regMu sync.RWMutex
	kinds = map[string]func() (KVStore, error){}
)

// Register adds a kind. Registering a name twice panics.
func Register(kind string, factory func() (KVStore, error)) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := kinds[kind]; dup {
		panic("kvstore: kind " + kind + " registered twice")
	}
	kinds[kind] = factory
}

// Kinds lists the registered kinds, sorted.
func Kinds() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []string
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Create returns a new store of the given kind.
func Create(kind string) (KVStore, error) {
	regMu.RLock()
	f := kinds[kind]
	regMu.RUnlock()
	if f == nil {
		hint := ""
		if strings.HasPrefix(kind, "dist") {
			hint = `; the distributed kinds register when a program imports _ "github.com/goluon/goluon/kvstore/dist"`
		}
		return nil, fmt.Errorf("kvstore: unknown kind %q (known: %v)%s", kind, Kinds(), hint)
	}
	return f()
}

func init() {
	Register("local", func() (KVStore, error) { return newStore("local"), nil })
	Register("device", func() (KVStore, error) { return newStore("device"), nil })
}

// store implements local and device: they differ only in where each key's
// merge buffer lives.
type store struct {
	kind    string
	mu      sync.Mutex
	order   []string               // keys in Init order
	initial map[string]*nd.NDArray // initial values until buffers are placed
	stored  map[string]*nd.NDArray
	updater Updater
}

func newStore(kind string) *store {
	return &store{kind: kind, initial: map[string]*nd.NDArray{}, stored: map[string]*nd.NDArray{}}
}

func (s *store) Type() string    { return s.kind }
func (s *store) Rank() int       { return 0 }
func (s *store) NumWorkers() int { return 1 }

// BeginStep returns batch: one process is the whole job.
func (s *store) BeginStep(_ []string, batch int) (int, error) { return batch, nil }

// InitDiffered reports whether kv is a distributed kind whose workers'
// values differed from rank 0's at the last Init (see Distributed).
func InitDiffered(kv KVStore) bool {
	d, ok := kv.(Distributed)
	return ok && d.InitDiffered()
}
func (s *store) SetUpdater(u Updater) { s.mu.Lock(); s.updater = u; s.mu.Unlock() }

func (s *store) Init(keys []string, values []*nd.NDArray) error {
	if len(keys) != len(values) {
		return fmt.Errorf("kvstore %s: %d keys but %d values", s.kind, len(keys), len(values))
	}
	for i, v := range values {
		if v == nil {
			return fmt.Errorf("kvstore %s: init of key %q with a nil value", s.kind, keys[i])
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		if _, dup := s.initial[k]; dup {
			return fmt.Errorf("kvstore %s: key %q initialised twice", s.kind, k)
		}
		if _, dup := s.stored[k]; dup {
			return fmt.Errorf("kvstore %s: key %q initialised twice", s.kind, k)
		}
		s.initial[k] = nd.PersistentSession().CopyOf(values[i], values[i].Context())
		s.order = append(s.order, k)
	}
	return nil
}

// place gives every key waiting in s.initial its merge buffer. local
// keeps them on the host; device spreads them over the pushing devices,
// largest first, each to the device with the fewest bytes so far.
func (s *store) place(values []*nd.NDArray) {
	if len(s.initial) == 0 {
		return
	}
	keys := slices.Clone(s.order)
	keys = slices.DeleteFunc(keys, func(k string) bool { return s.initial[k] == nil })
	if s.kind == "local" {
		for _, k := range keys {
			s.stored[k] = moveTo(s.initial[k], hostContext)
			delete(s.initial, k)
		}
		return
	}
	devs := make([]contextLoad, 0, len(values))
	for _, v := range values {
		devs = append(devs, contextLoad{dev: v.Context()})
	}
	sort.SliceStable(keys, func(i, j int) bool { return s.initial[keys[i]].Size() > s.initial[keys[j]].Size() })
	for _, k := range keys {
		best := 0
		for i := range devs {
			if devs[i].bytes < devs[best].bytes {
				best = i
			}
		}
		v := s.initial[k]
		devs[best].bytes += int64(v.Size() * v.DType().Size())
		s.stored[k] = moveTo(v, devs[best].dev)
		delete(s.initial, k)
	}
}

func (s *store) lookup(op, key string) (*nd.NDArray, error) {
	v := s.stored[key]
	if v == nil {
		return nil, fmt.Errorf("kvstore %s: %s of key %q, which was never initialised", s.kind, op, key)
	}
	return v, nil
}

// Push sums values in order into a buffer on the stored value's context.
func (s *store) Push(key string, values []*nd.NDArray) error {
	if len(values) == 0 {
		return fmt.Errorf("kvstore %s: push of key %q with no values", s.kind, key)
	}
	for i, v := range values {
		if v == nil {
			return fmt.Errorf("kvstore %s: push of key %q: value %d is nil", s.kind, key, i)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.place(values)
	stored, err := s.lookup("push", key)
	if err != nil {
		return err
	}
	for _, v := range values {
		if !slices.Equal(v.Shape(), stored.Shape()) || v.DType() != stored.DType() {
			return fmt.Errorf("kvstore %s: push of key %q with %v shape %v, stored %v shape %v", s.kind, key, v.DType(), v.Shape(), stored.DType(), stored.Shape())
		}
	}
	merged := SumOn(stored.Context(), values)
	defer merged.Release()
	if s.updater != nil {
		s.updater(key, merged, stored)
		return nil
	}
	nd.Assign(stored, merged)
	return nil
}

// Pull copies the stored value into each out.
func (s *store) Pull(key string, outs []*nd.NDArray) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, err := s.lookup("pull", key)
	if err != nil {
		if v := s.initial[key]; v != nil { // pulled before any push: the initial value
			stored, err = v, nil
		} else {
			return err
		}
	}
	for i, o := range outs {
		if o == nil {
			return fmt.Errorf("kvstore %s: pull of key %q: output %d is nil", s.kind, key, i)
		}
		if !slices.Equal(o.Shape(), stored.Shape()) {
			return fmt.Errorf("kvstore %s: pull of key %q into shape %v, stored shape %v", s.kind, key, o.Shape(), stored.Shape())
		}
		nd.Assign(o, stored)
	}
	return nil
}

// PushPull pushes then pulls.
func (s *store) PushPull(key string, values, outs []*nd.NDArray) error {
	if err := s.Push(key, values); err != nil {
		return err
	}
	return s.Pull(key, outs)
}

// PushPullList runs PushPull key by key.
func (s *store) PushPullList(keys []string, values, outs [][]*nd.NDArray) error {
	if len(values) != len(keys) || (outs != nil && len(outs) != len(keys)) {
		return fmt.Errorf("kvstore %s: %d keys but %d value lists and %d output lists", s.kind, len(keys), len(values), len(outs))
	}
	for i, k := range keys {
		if err := s.Push(k, values[i]); err != nil {
			return err
		}
		if outs != nil && outs[i] != nil {
			if err := s.Pull(k, outs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// moveTo returns v on dev (v itself when it is already there, otherwise a
// persistent copy, releasing v).
func moveTo(v *nd.NDArray, dev ctx.Context) *nd.NDArray {
	if v.Context() == dev {
		return v
	}
	c := nd.PersistentSession().CopyOf(v, dev)
	v.Release()
	return c
}

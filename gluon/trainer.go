package gluon

import (
	"math"
	"sync"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// TrainerOpts configures a Trainer.
type TrainerOpts struct {
	// UpdateOnKVStore runs the optimizer once, on the kvstore's copy of
	// each weight, and pulls the new weights to the devices. By default
	// the summed gradient is pulled to every device and each device
	// updates its own replica (identically).
	UpdateOnKVStore bool
	// BucketBytes is the most bytes of gradients per bucket (default
	// DefaultBucketBytes) and FirstBucketBytes that of the first bucket,
	// which holds the last layers (default DefaultFirstBucketBytes). A
	// bucket holds at least one parameter.
	BucketBytes, FirstBucketBytes int
	// NoOverlap sums the gradients in Step only, instead of starting each
	// bucket's sum during backward as soon as its gradients are final on
	// every context. CPU contexts at least as many as GOMAXPROCS are
	// summed in Step only in any case: no core is idle until the last
	// backward pass ends, and Step sums each bucket in shares, one per
	// context on its own core. Summing in Step only also allows a second
	// backward pass on some contexts between backward and Step, which
	// fails the step once its sums have started; set NoOverlap for the
	// same behaviour on every machine.
	NoOverlap bool
}

// Trainer applies an optimizer to a set of parameters that live on one
// set of contexts. Step(batchSize) sums each parameter's gradients over
// its replicas through a kvstore and updates every replica.
//
// The batch-size rule: batchSize is the number of samples this process
// used to produce the gradients, over all of its devices. Losses are
// per-sample and Backward sums them, so the summed gradient is divided by
// the global batch and the update uses the mean gradient, the same for one
// device or many. In one process the global batch is batchSize. With a
// distributed kvstore (dist_sync) every worker passes its own batchSize,
// the step's control exchange sums them, and the divisor is that sum: 4
// workers that each call Step(32) divide by 128, exactly as one process
// with Step(128) over the same samples, even when a last batch is short on
// some worker.
//
// With the update on the devices (the default), Step leaves the sum over
// the contexts in every replica's gradient, as Gluon does. Parameters with
// GradAdd on several contexts therefore need ZeroGrad after each Step:
// without it the next pass adds to the sum, which the next Step sums
// again.
type Trainer struct {
	mu      sync.Mutex   // held by Step, AllReduceGrads, Update and Snapshot
	all     *ParamDict   // every parameter it was created with (Snapshot)
	params  []*Parameter // every parameter, in order; a step skips those frozen (GradNull) at the time
	devs    []ctx.Context
	opt     optimizer.Optimizer
	kv      kvstore.KVStore
	opts    TrainerOpts
	ready   bool
	steps   []int               // per parameter: updates applied
	joined  []bool              // per parameter: in the kvstore, with optimizer state (join)
	updates int                 // steps and Updates applied (MXNet's num_update): the schedule's clock
	pending [][]int             // the fresh replicas AllReduceGrads summed, for the Update after it
	stamps  [][]uint64          // per parameter, per replica: GradStamp at the last step
	states  [][]optimizer.State // per parameter, per replica (or one on the kvstore)
	kvState []optimizer.State   // per parameter, when updating on the kvstore
	kvIndex map[string]int
	rescale float64 // 1/global batch of the current step, passed to every update

	buckets []*bucket            // gradient buckets (useBuckets), first to be reduced first
	slots   map[*nd.NDArray]slot // where each bucketed replica sits

	scaler   GradScaler // loss scale of mixed precision (trainer_scale.go)
	dtypes   []nd.DType // per parameter: its dtype when the optimizer state was made
	masters  []uint64   // per parameter: its version when its master copies were last in step
	unscaled bool       // UnscaleGrads ran this round
	// unscaledAt are the gradients' stamps (per parameter, per replica)
	// when UnscaleGrads divided them before any AllReduceGrads: a Step on
	// those same gradients would divide them again.
	unscaledAt [][]uint64
	// summedAt are the gradients' stamps when a failed step over several
	// processes had summed them (every bucket is summed before the step's
	// closing exchange finds the failure), nil otherwise.
	summedAt    [][]uint64
	skippedLast bool // the last step's gradients were not finite

	closed     bool
	presummed  map[*Parameter]bool // summed this round by the Trainer this one took them over from
	validMu    sync.Mutex
	validState int              // 0: not checked this round, 1: buckets valid, 2: not
	overlapped int              // buckets summed during the last backward
	fusedLast  int              // buckets updated whole in the last step
	sharedLast int              // buckets summed in shares in the last step
	marks      []nd.DeviceStats // per context: the counters at the end of the last step
	last       TrainerStats
	reduceTime time.Duration // Step's time in gradient reductions, this step

	chainMu    sync.Mutex // the ordered start of buckets over processes (bucket_chain.go)
	chainNext  int        // the next bucket to start this round
	chainBegun bool       // the round's handshake ran
	chainBusy  bool       // a goroutine is starting buckets
	chainErr   error      // a failed start: the round's later buckets fail too
}

// NewTrainer returns a Trainer over params using opt and a kvstore of the
// given kind ("local" or "device"). Every parameter must live on the same
// contexts (checked now for initialised parameters, at the first step for
// deferred ones).
func NewTrainer(params *ParamDict, opt optimizer.Optimizer, kvKind string, o TrainerOpts) (*Trainer, error) {
	if params == nil || params.Len() == 0 {
		return nil, errorf("trainer: no parameters")
	}
	if opt == nil {
		return nil, errorf("trainer: no optimizer")
	}
	if err := optimizer.Validate(opt); err != nil {
		return nil, errorf("trainer: %v", err)
	}
	kv, err := kvstore.Create(kvKind)
	if err != nil {
		return nil, errorf("trainer: %v", err)
	}
	t := &Trainer{opt: opt, kv: kv, opts: o, kvIndex: map[string]int{}, all: params, params: params.List()}
	if err := t.checkContexts(false); err != nil {
		return nil, err
	}
	if t.allInitialized() && t.useBuckets() && t.unowned() {
		// Now, so that the first step's backward overlaps too. Parameters
		// that another Trainer holds are taken over at this one's first
		// step instead: a Trainer that never steps must not sum them.
		t.buildBuckets()
	}
	t.markStats()
	if t.kv.NumWorkers() > 1 && t.allInitialized() {
		// Like PyTorch's DistributedDataParallel: start every worker from
		// rank 0's parameters before any gradient is computed.
		if err := t.Init(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Trainer) allInitialized() bool {
	for _, p := range t.params {
		if !p.Initialized() && p.GradReq() != nd.GradNull {
			return false
		}
	}
	return true
}

// Init creates the kvstore entries now; Step does it on first use
// otherwise. With a distributed kvstore it is collective (every worker
// calls it) and gives every worker rank 0's parameters.
// NewTrainer calls it for distributed kvstores when the parameters are
// initialised already; with deferred shapes, call it after the first
// forward pass and before the first backward pass. Load checkpointed
// parameters before Init: afterwards only the kvstore's copy counts.
//
// Called again later, it enters the parameters that were frozen and not
// ready (not initialised, or on other contexts) at the first use and are
// now unfrozen and ready; Step does that at the end of their first step
// unfrozen, after a forward pass that used each worker's own values. With
// a distributed kvstore, call Init after unfreezing such a parameter and
// before its first backward pass, unless every worker initialised it
// alike.
func (t *Trainer) Init() error {
	if err := t.init(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.join(false, false)
}

// init creates the kvstore entries and optimizer states at the first step.
func (t *Trainer) init() error { return t.initAt(false) }

// initAt sets the Trainer up at its first use and enters the parameters
// into the kvstore (join); lazy says it runs inside a step, after this
// step's gradients were computed.
func (t *Trainer) initAt(lazy bool) error {
	if t.ready {
		return nil
	}
	if err := t.checkContexts(true); err != nil {
		return err
	}
	t.steps = make([]int, len(t.params))
	t.stamps = make([][]uint64, len(t.params))
	t.states = make([][]optimizer.State, len(t.params))
	t.kvState = make([]optimizer.State, len(t.params))
	t.joined = make([]bool, len(t.params))
	for i, p := range t.params {
		t.kvIndex[p.Name()] = i
		t.stamps[i] = make([]uint64, len(t.devs))
		t.dtypes = append(t.dtypes, p.DType())
		t.masters = append(t.masters, p.version.Load())
	}
	if t.opts.UpdateOnKVStore {
		t.kv.SetUpdater(func(key string, merged, stored *nd.NDArray) {
			i := t.kvIndex[key]
			if t.kvState[i] == nil {
				t.kvState[i] = t.newState(stored)
			} else if st := t.kvState[i]; len(st) > 0 && st[0].Context() != stored.Context() {
				// State made before the kvstore placed the key (LoadStates
				// before the first Step) follows the stored value.
				for k, a := range st {
					st[k] = nd.PersistentSession().CopyOf(a, stored.Context())
					a.Release()
				}
			}
			p := t.params[i]
			optimizer.Apply(t.opt, optimizer.Param{Name: key, Step: t.steps[i] + 1, Update: t.updates + 1, LRMult: p.LRMult, WDMult: p.WDMult, Rescale: t.rescale},
				stored, merged, t.kvState[i])
		})
	}
	t.ready = true
	return t.join(true, lazy)
}

// Step sums the gradients over devices and updates the parameters, with
// gradients scaled by 1/batchSize (batchSize is the global batch). It
// fails, naming the parameter, when a gradient was not refreshed by a
// backward pass since the last step; StepIgnoreStale skips those instead.
//
// A parameter whose GradReq is GradNull when Step runs is frozen: Step
// skips it, as Gluon's Trainer skips grad_req 'null', and trains it again
// once its GradReq is set back, also when it was frozen when the Trainer
// was made (fine-tuning that unfreezes a backbone keeps one Trainer and
// its optimizer state). Freezing takes effect at the next Step, also
// after the backward pass; a gradient written before the parameter was
// unfrozen is not used. A parameter that was not ready when the Trainer
// was first used (not initialised, or on other contexts) trains from the
// step after its first one unfrozen (see Init).
func (t *Trainer) Step(batchSize int) error { return t.step(batchSize, false) }

// StepIgnoreStale is Step that skips parameters whose gradients are stale
// (Gluon's ignore_stale_grad=True).
func (t *Trainer) StepIgnoreStale(batchSize int) error { return t.step(batchSize, true) }

func (t *Trainer) step(batchSize int, ignoreStale bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errorf("trainer: Step after Close")
	}
	if batchSize <= 0 {
		return errorf("trainer: batch size %d must be positive", batchSize)
	}
	t.pending = nil
	if err := t.initAt(true); err != nil {
		return err
	}
	if err := t.checkMoved(); err != nil {
		t.endRound() // the contexts summed are not the parameters' any more
		return err
	}
	if t.unscaled && t.unscaledAt != nil && t.sameStamps(t.unscaledAt) {
		return errorf("trainer: Step after UnscaleGrads would divide these gradients by the loss scale a second time: run AllReduceGrads, UnscaleGrads, clipping and Update instead (or Step without UnscaleGrads)")
	}
	t.unscaled, t.unscaledAt = false, nil // Step sums afresh: its gradients carry the loss scale
	if err := t.syncMasters(); err != nil {
		t.endRound()
		return err
	}
	fresh, stale := t.freshReplicas(ignoreStale)
	if stale != nil && !(t.useBuckets() && t.ordered()) {
		// The round stays open: the buckets summed during backward are
		// summed, and a retry (StepIgnoreStale) must not sum them again.
		t.waitBuckets()
		return stale
	}
	global, err := t.reduceAll(fresh, batchSize, stale)
	if err != nil {
		return err
	}
	if ok, err := t.beginUpdate(global, fresh); !ok {
		return err
	}
	for i := range t.params {
		if len(fresh[i]) > 0 {
			t.ensureStates(i)
		}
	}
	if t.buckets != nil {
		if err := t.updateBuckets(fresh); err != nil {
			return errorf("trainer: %v", err)
		}
	}
	for i, p := range t.params {
		if len(fresh[i]) == 0 {
			continue
		}
		if !t.opts.UpdateOnKVStore && t.buckets == nil {
			t.updateReplicas(i, p)
		}
		t.steps[i]++
	}
	t.countUpdate(fresh)
	t.gradScaleDone(true)
	t.finishStats(t.overlapped)
	return t.settle()
}

// AllReduceGrads sums each parameter's gradients over its replicas and
// writes the sum back to every replica, without updating. Together with
// Update it splits Step in two, e.g. to clip gradients in between. It
// needs the default TrainerOpts (update on the devices).
func (t *Trainer) AllReduceGrads() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errorf("trainer: AllReduceGrads after Close")
	}
	if t.opts.UpdateOnKVStore {
		return errorf("trainer: AllReduceGrads is not available with UpdateOnKVStore; use Step")
	}
	if t.unscaled && t.unscaledAt != nil && t.sameStamps(t.unscaledAt) {
		return errorf("trainer: AllReduceGrads after UnscaleGrads on the same gradients would have Update divide them by the loss scale a second time: call UnscaleGrads after AllReduceGrads")
	}
	t.unscaled, t.unscaledAt = false, nil // a new round: its gradients carry the loss scale
	if err := t.initAt(true); err != nil {
		return err
	}
	if err := t.checkMoved(); err != nil {
		t.endRound() // the contexts summed are not the parameters' any more
		return err
	}
	t.pending = nil
	fresh, stale := t.freshReplicas(false)
	if stale != nil && !(t.useBuckets() && t.ordered()) {
		// The round stays open: the buckets summed during backward are
		// summed, and a retry (StepIgnoreStale) must not sum them again.
		t.waitBuckets()
		return stale
	}
	if _, err := t.reduceAll(fresh, 0, stale); err != nil {
		return err
	}
	t.pending = fresh
	return nil
}

// Update applies the optimizer to every replica with the gradients as they
// are (after AllReduceGrads), scaled by 1/batchSize. After AllReduceGrads
// it updates the parameters whose gradients that call summed, less those
// frozen since; without one, every parameter not frozen (GradNull).
func (t *Trainer) Update(batchSize int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errorf("trainer: Update after Close")
	}
	if t.opts.UpdateOnKVStore {
		return errorf("trainer: Update is not available with UpdateOnKVStore; use Step")
	}
	if batchSize <= 0 {
		return errorf("trainer: batch size %d must be positive", batchSize)
	}
	if err := t.init(); err != nil {
		return err
	}
	if err := t.checkMoved(); err != nil {
		return err
	}
	if err := t.syncMasters(); err != nil {
		return err
	}
	fresh := t.updatable(t.pending)
	t.pending = nil
	global, err := t.kv.BeginStep(nil, batchSize)
	if err != nil {
		return errorf("trainer: %v", err)
	}
	if ok, err := t.beginUpdate(global, fresh); !ok {
		return err
	}
	for i, p := range t.params {
		if len(fresh[i]) == 0 {
			continue
		}
		t.ensureStates(i)
		t.updateReplicas(i, p)
		t.steps[i]++
	}
	t.countUpdate(fresh)
	t.gradScaleDone(true)
	t.finishStats(t.overlapped)
	return t.settle()
}

// reduceAll pushes the fresh gradients of every parameter that has any
// and pulls the results in one PushPullList: the summed gradient into
// every replica's gradient, or (updating on the kvstore) the new weight
// into every replica. It returns the global batch: batch itself, or with a
// distributed kvstore the sum of every worker's batch.
//
// A parameter with a single replica skips the exchange when the kvstore is
// local and the devices update: the sum over one gradient is that gradient,
// so pushing it and pulling it back would only copy it twice (Gluon, too,
// creates no kvstore for a single device).
func (t *Trainer) reduceAll(fresh [][]int, batch int, stale error) (int, error) {
	t0 := time.Now()
	defer func() { t.reduceTime = time.Since(t0) }()
	if t.useBuckets() {
		if !t.bucketsValid(nil) {
			switch {
			case t.bucketsValid(fresh):
				// Parameters were only frozen, or unfrozen without a
				// gradient: this round ends with these buckets, skipping
				// them, and settle rebuilds the buckets at its end.
				// (Decided alike on every worker, whatever each one summed
				// already.)
			case !t.anyLaunched():
				t.buildBuckets()
			default:
				t.buildBuckets()
				return 0, errorf("trainer: parameters were changed (AttachGrad, SetGradReq other than freezing, ResetContext) after their gradients had been summed in backward and before Step; the step is skipped")
			}
		}
		if t.ordered() {
			return t.reduceOrdered(fresh, batch, stale)
		}
		global, err := t.kv.BeginStep(nil, batch)
		if err != nil {
			t.endRound()
			return 0, errorf("trainer: %v", err)
		}
		return global, t.reduceBuckets(fresh)
	}
	var keys []string
	var values, outs [][]*nd.NDArray
	multi := t.kv.NumWorkers() > 1
	skipSingle := !multi && !t.opts.UpdateOnKVStore
	for i, p := range t.params {
		if len(fresh[i]) == 0 {
			continue
		}
		grads := p.ListGrad()
		if skipSingle && len(grads) == 1 {
			continue
		}
		vs := make([]*nd.NDArray, len(fresh[i]))
		for k, d := range fresh[i] {
			vs[k] = grads[d]
		}
		out := grads
		if t.opts.UpdateOnKVStore {
			out = p.ListData()
		}
		keys, values, outs = append(keys, p.Name()), append(values, vs), append(outs, out)
	}
	global, err := t.kv.BeginStep(keys, batch)
	if err != nil {
		return 0, errorf("trainer: %v", err)
	}
	batch = global
	if t.opts.UpdateOnKVStore {
		// The updater reads the rescale factor during the exchange.
		t.rescale = 1 / float64(batch)
	}
	if len(keys) == 0 && !multi {
		return batch, nil
	}
	if err := t.kv.PushPullList(keys, values, outs); err != nil {
		return 0, errorf("trainer: %v", err)
	}
	return batch, nil
}

func (t *Trainer) updateReplicas(i int, p *Parameter) {
	info := t.paramInfo(i)
	for d, w := range p.ListData() {
		optimizer.Apply(t.opt, info, w, w.Grad(), t.states[i][d])
	}
}

// paramInfo describes parameter i's next update.
func (t *Trainer) paramInfo(i int) optimizer.Param {
	p := t.params[i]
	return optimizer.Param{Name: p.Name(), Step: t.steps[i] + 1, Update: t.updates + 1, LRMult: p.LRMult, WDMult: p.WDMult, Rescale: t.rescale}
}

// LearningRate returns the learning rate the next step will use: the
// schedule's at the Trainer's next update, counted over its steps (as
// MXNet's num_update), whichever parameters they updated.
func (t *Trainer) LearningRate() float64 {
	return t.opt.Hyperparams().LearningRate(t.updates + 1)
}

// SetLearningRate sets the base learning rate. With a scheduler the
// scheduler decides, so this is an error.
func (t *Trainer) SetLearningRate(lr float64) error {
	h := t.opt.Hyperparams()
	if h.Scheduler != nil {
		return errorf("trainer: the optimizer follows a learning-rate scheduler; change the scheduler instead")
	}
	if !(lr >= 0) || math.IsInf(lr, 1) {
		return errorf("trainer: learning rate %g must be finite and >= 0", lr)
	}
	h.LR = lr
	return nil
}

// Optimizer returns the trainer's optimizer.
func (t *Trainer) Optimizer() optimizer.Optimizer { return t.opt }

// KVStore returns the trainer's kvstore.
func (t *Trainer) KVStore() kvstore.KVStore { return t.kv }

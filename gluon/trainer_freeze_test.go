package gluon_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// freezePath is one way a Trainer sums and updates.
type freezePath struct {
	name  string
	devs  int
	cores int // GOMAXPROCS during the test (0: unchanged)
	kv    string
	opts  gluon.TrainerOpts
}

var freezePaths = []freezePath{
	{name: "1ctx", devs: 1, kv: "device"},
	{name: "2ctx/sums in Step", devs: 2, cores: 2, kv: "device"},
	{name: "2ctx/sums during backward", devs: 2, cores: 3, kv: "device", opts: gluon.TrainerOpts{FirstBucketBytes: 4 << 10}},
	{name: "2ctx/NoOverlap", devs: 2, cores: 3, kv: "device", opts: gluon.TrainerOpts{NoOverlap: true}},
	{name: "2ctx/local", devs: 2, cores: 3, kv: "local", opts: gluon.TrainerOpts{FirstBucketBytes: 4 << 10}},
	{name: "2ctx/UpdateOnKVStore", devs: 2, kv: "device", opts: gluon.TrainerOpts{UpdateOnKVStore: true}},
}

// newFreezeTrainer returns LeNet and a Trainer on path, with the first
// parameter frozen before the Trainer is made when atCreation is set.
func newFreezeTrainer(t *testing.T, path freezePath, atCreation bool) (gluon.Block, *gluon.ParamDict, *gluon.Trainer) {
	t.Helper()
	net, params, first := lenetTrainer(t, cpus(path.devs), gluon.TrainerOpts{})
	first.Close()
	if atCreation {
		params.List()[0].SetGradReq(nd.GradNull)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), path.kv, path.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return net, params, tr
}

// firstReplicas returns every parameter's first replica by name, and
// fails when some replica differs from it.
func firstReplicas(t *testing.T, params *gluon.ParamDict) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, p := range params.List() {
		reps := p.ListData()
		out[p.Name()] = reps[0].Float32s()
		for d, r := range reps[1:] {
			if !slices.Equal(out[p.Name()], r.Float32s()) {
				t.Errorf("%s: replica %d differs from replica 0", p.Name(), d+1)
			}
		}
	}
	return out
}

// TestTrainerFreeze: a parameter frozen (GradNull) when Step runs is
// skipped, as Gluon's Trainer skips grad_req 'null', on every path:
// frozen before the backward pass, after it (also when its bucket's sum
// had started), between two backward passes (the second skips it), or
// when the Trainer was made; or unfrozen after a backward pass that did
// not compute its gradient (StepIgnoreStale skips it). The parameter
// keeps its values; every other one ends bitwise equal to the same step
// with nothing frozen; replicas stay equal. Unfrozen, it is trained again
// by the same Trainer.
func TestTrainerFreeze(t *testing.T) {
	x, y := lenetBatch(8)
	for _, path := range freezePaths {
		for _, when := range []string{"before backward", "after backward", "between backward passes", "at creation", "unfrozen after backward"} {
			t.Run(path.name+"/"+when, func(t *testing.T) {
				if path.cores > 0 {
					defer withCores(path.cores)()
				}
				devs := cpus(path.devs)
				net, params, tr := newFreezeTrainer(t, path, false)
				if err := lenetBackward(net, x, y, devs); err != nil {
					t.Fatal(err)
				}
				if err := tr.Step(8); err != nil {
					t.Fatal(err)
				}
				want := firstReplicas(t, params)

				net, params, tr = newFreezeTrainer(t, path, when == "at creation" || when == "unfrozen after backward")
				frozen := params.List()[0]
				before := frozen.Data(devs[0]).Float32s()
				if when == "before backward" {
					frozen.SetGradReq(nd.GradNull)
				}
				if err := lenetBackward(net, x, y, devs); err != nil {
					t.Fatal(err)
				}
				switch when {
				case "after backward":
					frozen.SetGradReq(nd.GradNull)
				case "between backward passes":
					frozen.SetGradReq(nd.GradNull)
					if err := lenetBackward(net, x, y, devs); err != nil {
						t.Fatal(err)
					}
				case "unfrozen after backward":
					frozen.SetGradReq(nd.GradWrite)
				}
				step := tr.Step
				if when == "unfrozen after backward" {
					step = tr.StepIgnoreStale
				}
				if err := step(8); err != nil {
					t.Fatalf("step with %s frozen: %v", frozen.Name(), err)
				}
				got := firstReplicas(t, params)
				if !slices.Equal(got[frozen.Name()], before) {
					t.Errorf("the frozen %s changed", frozen.Name())
				}
				for _, p := range params.List()[1:] {
					if !slices.Equal(got[p.Name()], want[p.Name()]) {
						t.Errorf("%s differs from the step with nothing frozen (%.3g relative)", p.Name(), relDiff(want[p.Name()], got[p.Name()]))
					}
				}

				frozen.SetGradReq(nd.GradWrite)
				for step := range 2 {
					if err := lenetBackward(net, x, y, devs); err != nil {
						t.Fatal(err)
					}
					if err := tr.Step(8); err != nil {
						t.Fatalf("step %d after unfreezing: %v", step, err)
					}
				}
				if got := firstReplicas(t, params); slices.Equal(got[frozen.Name()], before) {
					t.Errorf("%s was not trained once unfrozen", frozen.Name())
				}
			})
		}
	}
}

// TestTrainerFreezeOldGradient: a gradient written before a parameter was
// frozen is not used once it is unfrozen: Step calls it stale.
func TestTrainerFreezeOldGradient(t *testing.T) {
	devs := cpus(1)
	net, params, tr := newFreezeTrainer(t, freezePaths[0], false)
	x, y := lenetBatch(8)
	if err := lenetBackward(net, x, y, devs); err != nil {
		t.Fatal(err)
	}
	frozen := params.List()[0]
	frozen.SetGradReq(nd.GradNull)
	if err := tr.Step(8); err != nil {
		t.Fatal(err)
	}
	frozen.SetGradReq(nd.GradWrite)
	if err := tr.Step(8); err == nil {
		t.Fatal("Step used a gradient written before the parameter was frozen")
	}
}

// TestTrainerFreezeUpdate: with AllReduceGrads and Update, a parameter
// frozen between them is not updated, and neither is one unfrozen between
// them (its gradient was not summed); the others are, and the replicas
// stay equal.
func TestTrainerFreezeUpdate(t *testing.T) {
	x, y := lenetBatch(8)
	for _, c := range []struct {
		name         string
		frozen, thaw bool // frozen before AllReduceGrads; its GradReq between the calls
	}{
		{"frozen between the calls", false, false},
		{"unfrozen between the calls", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			devs := cpus(2)
			net, params, tr := newFreezeTrainer(t, freezePaths[1], false)
			p := params.List()[0]
			if c.frozen {
				p.SetGradReq(nd.GradNull)
			}
			before := p.Data(devs[0]).Float32s()
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := tr.AllReduceGrads(); err != nil {
				t.Fatal(err)
			}
			if c.thaw {
				p.SetGradReq(nd.GradWrite)
			} else {
				p.SetGradReq(nd.GradNull)
			}
			last := params.List()[len(params.List())-1]
			lastBefore := last.Data(devs[0]).Float32s()
			if err := tr.Update(8); err != nil {
				t.Fatal(err)
			}
			got := firstReplicas(t, params)
			if !slices.Equal(got[p.Name()], before) {
				t.Errorf("%s was updated", p.Name())
			}
			if slices.Equal(got[last.Name()], lastBefore) {
				t.Errorf("%s was not updated", last.Name())
			}
		})
	}
}

// TestTrainerFreezeSchedule: the learning-rate schedule follows the
// Trainer's update count, as MXNet's num_update, not the count of the
// first parameter, which stands still while it is frozen; a step that
// updates nothing does not count.
func TestTrainerFreezeSchedule(t *testing.T) {
	sched, err := optimizer.NewFactor(optimizer.FactorOpts{Step: 1, Factor: 0.5, BaseLR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	devs := cpus(1)
	net, params, first := lenetTrainer(t, devs, gluon.TrainerOpts{})
	first.Close()
	opt := optimizer.NewSGD(0.1)
	opt.Scheduler = sched
	tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	params.List()[0].SetGradReq(nd.GradNull)
	x, y := lenetBatch(8)
	for step := range 3 {
		if got, want := tr.LearningRate(), sched.LR(step+1); got != want {
			t.Errorf("before step %d: learning rate %g, want %g", step+1, got, want)
		}
		if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		// StepIgnoreStale skips the first parameter also where freezing
		// did not: the schedule's clock is checked on its own.
		if err := tr.StepIgnoreStale(8); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := tr.LearningRate(), sched.LR(4); got != want {
		t.Errorf("after 3 steps: learning rate %g, want %g", got, want)
	}
	// A step that updates nothing (everything frozen) does not count.
	params.SetGradReq(nd.GradNull)
	if err := tr.Step(8); err != nil {
		t.Fatal(err)
	}
	if got, want := tr.LearningRate(), sched.LR(4); got != want {
		t.Errorf("after a step with everything frozen: learning rate %g, want %g", got, want)
	}
}

// TestTrainerFreezeStates: a Trainer whose parameter was frozen since
// before its first update saves no state for it; loaded into a new
// Trainer, training resumes bitwise as it would have (Adam, whose state
// and bias correction count per parameter), before and after unfreezing.
func TestTrainerFreezeStates(t *testing.T) {
	devs := cpus(1)
	x, y := lenetBatch(8)
	run := func(tr *gluon.Trainer, net gluon.Block, steps int) {
		t.Helper()
		for range steps {
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := tr.Step(8); err != nil {
				t.Fatal(err)
			}
		}
	}
	newAdam := func() (gluon.Block, *gluon.ParamDict, *gluon.Trainer) {
		net, params, first := lenetTrainer(t, devs, gluon.TrainerOpts{})
		first.Close()
		params.List()[0].SetGradReq(nd.GradNull)
		tr, err := gluon.NewTrainer(params, optimizer.NewAdam(0.01), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return net, params, tr
	}
	path := filepath.Join(t.TempDir(), "trainer.states")
	netA, paramsA, trA := newAdam()
	frozen := paramsA.List()[0]
	initial := frozen.Data(devs[0]).Float32s()
	run(trA, netA, 2)
	if err := trA.SaveStates(path); err != nil {
		t.Fatal(err)
	}
	netB, paramsB, trB := newAdam()
	weights := filepath.Join(t.TempDir(), "weights.params")
	if err := paramsA.Save(weights); err != nil {
		t.Fatal(err)
	}
	if err := paramsB.Load(weights, devs, gluon.LoadOpts{}); err != nil {
		t.Fatal(err)
	}
	if err := trB.LoadStates(path); err != nil {
		t.Fatal(err)
	}
	for _, both := range []struct {
		params *gluon.ParamDict
		tr     *gluon.Trainer
		net    gluon.Block
	}{{paramsA, trA, netA}, {paramsB, trB, netB}} {
		run(both.tr, both.net, 1)
		both.params.List()[0].SetGradReq(nd.GradWrite)
		run(both.tr, both.net, 2)
	}
	a, b := firstReplicas(t, paramsA), firstReplicas(t, paramsB)
	if slices.Equal(a[frozen.Name()], initial) {
		t.Errorf("%s was not trained once unfrozen", frozen.Name())
	}
	for name, w := range a {
		if !slices.Equal(w, b[name]) {
			t.Errorf("%s: resumed from the saved states differs (%.3g relative)", name, relDiff(w, b[name]))
		}
	}
	if trA.LearningRate() != trB.LearningRate() {
		t.Errorf("learning rate %g, resumed %g", trA.LearningRate(), trB.LearningRate())
	}
}

// TestTrainerFreezeRebuildsBuckets: the round that sees a parameter frozen
// (or unfrozen) after its sums started ends with the old buckets; the
// next steps run on buckets rebuilt without (or with) it, every one summed
// during backward and updated whole again.
func TestTrainerFreezeRebuildsBuckets(t *testing.T) {
	devs := cpus(2)
	defer withCores(len(devs) + 1)() // sums during backward
	net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{FirstBucketBytes: 4 << 10})
	defer tr.Close()
	x, y := lenetBatch(8)
	p := params.List()[0]
	for step := range 6 {
		if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		switch step {
		case 1:
			p.SetGradReq(nd.GradNull)
		case 3:
			p.SetGradReq(nd.GradWrite) // after backward: no gradient this step
		}
		if err := tr.StepIgnoreStale(8); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		// After step 3 the unfrozen parameter's update count lags; SGD's
		// update does not read it (optimizer.StepFree), so its bucket is
		// still updated whole.
		if s := tr.Stats(); step != 1 && step != 3 && (s.Overlapped != s.Buckets || s.Fused != s.Buckets) {
			t.Errorf("step %d: %d buckets, %d summed during backward, %d updated whole; want all", step, s.Buckets, s.Overlapped, s.Fused)
		}
	}
}

// TestTrainerFreezeFusedUpdates: after a freeze and an unfreeze, whole
// bucket updates (SGD with momentum: its update does not read the
// parameter's own count) and per-parameter ones (Adam: its bias
// correction does) end bitwise where the unbucketed update on the
// kvstore ends.
func TestTrainerFreezeFusedUpdates(t *testing.T) {
	devs := cpus(2)
	defer withCores(len(devs) + 1)() // sums during backward
	x, y := lenetBatch(8)
	for _, rule := range []string{"sgd", "adam"} {
		run := func(onKV bool) map[string][]float32 {
			net, params, first := lenetTrainer(t, devs, gluon.TrainerOpts{})
			first.Close()
			var opt optimizer.Optimizer = optimizer.NewAdam(0.01)
			if rule == "sgd" {
				sgd := optimizer.NewSGD(0.1)
				sgd.Momentum = 0.9
				opt = sgd
			}
			tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{UpdateOnKVStore: onKV, FirstBucketBytes: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			p := params.List()[len(params.List())-1] // in the first bucket
			for step := range 6 {
				switch step {
				case 1:
					p.SetGradReq(nd.GradNull)
				case 3:
					p.SetGradReq(nd.GradWrite)
				}
				if err := lenetBackward(net, x, y, devs); err != nil {
					t.Fatal(err)
				}
				if err := tr.Step(8); err != nil {
					t.Fatal(err)
				}
			}
			return firstReplicas(t, params)
		}
		want, got := run(true), run(false)
		for name, w := range want {
			if !slices.Equal(w, got[name]) {
				t.Errorf("%s: %s differs from the update on the kvstore (%.3g relative)", rule, name, relDiff(w, got[name]))
			}
		}
	}
}

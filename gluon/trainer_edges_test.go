package gluon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// TestGradSumsSettledAfterBackward: with a core to spare per context the
// buckets are summed during backward; once every context's pass has
// returned the sums are complete, so ZeroGrad between Backward and Step
// leaves the weights where they are and the replicas equal (the sums used
// to run on after Backward and land after ZeroGrad, moving some weights on
// some steps and splitting the replicas for good).
func TestGradSumsSettledAfterBackward(t *testing.T) {
	defer withCores(8)()
	devs := cpus(2)
	nd.Seed(3)
	net := nn.NewSequential(nn.NewDense(512, nn.DenseOpts{InUnits: 256}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(1), "device", gluon.TrainerOpts{FirstBucketBytes: 64 << 10, BucketBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	w := params.Get(params.Names()[0])
	x := nd.Ones(ctx.CPU(0), nd.Float32, 4, 256)
	for it := range 30 {
		before := w.Data(ctx.CPU(0)).Float32s()
		backwardOn(t, net, x, devs)
		params.ZeroGrad()
		if err := tr.Step(4); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(before, w.Data(ctx.CPU(0)).Float32s()) {
			t.Fatalf("step %d: zeroed gradients moved the weights", it)
		}
		if !slices.Equal(w.Data(ctx.CPU(0)).Float32s(), w.Data(ctx.CPU(1)).Float32s()) {
			t.Fatalf("step %d: the replicas differ", it)
		}
	}
}

// TestStepIgnoreStaleRetry: Step fails on a parameter no backward pass
// wrote, and the StepIgnoreStale its error suggests then updates as a
// StepIgnoreStale in its place would: the buckets summed during backward
// are not summed a second time.
func TestStepIgnoreStaleRetry(t *testing.T) {
	defer withCores(8)()
	devs := cpus(2)
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0, -1, -1, 1, 2, 2, 2}, 6, 3)
	run := func(retry bool) map[string][]float32 {
		net, _ := twoLayer(t, devs)
		unused := nn.NewDense(2, nn.DenseOpts{InUnits: 2})
		if err := gluon.CollectParams(unused).Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		params := gluon.CollectParams(nn.NewSequential(net, unused))
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{FirstBucketBytes: 16, BucketBytes: 16})
		if err != nil {
			t.Fatal(err)
		}
		backwardOn(t, net, x, devs)
		if retry {
			if err := tr.Step(6); err == nil || !strings.Contains(err.Error(), "stale") {
				t.Fatalf("Step with a parameter no pass wrote: %v", err)
			}
		}
		if err := tr.StepIgnoreStale(6); err != nil {
			t.Fatal(err)
		}
		out := map[string][]float32{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(ctx.CPU(1)).Float32s()
		}
		return out
	}
	want, got := run(false), run(true)
	for name, w := range want {
		if !slices.Equal(w, got[name]) {
			t.Errorf("%s after the retry: %v, want %v", name, got[name], w)
		}
	}
}

// TestLoadStatesUpdateOnDeviceKVStore: optimizer state loaded before the
// first Step of a Trainer that updates on the device kvstore follows the
// values the kvstore places on other contexts, and training resumes as if
// it had not stopped (it panicked with a context mismatch).
func TestLoadStatesUpdateOnDeviceKVStore(t *testing.T) {
	devs := cpus(2)
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	opts := gluon.TrainerOpts{UpdateOnKVStore: true}
	mk := func() (*nn.Sequential, *gluon.ParamDict, *gluon.Trainer) {
		net, params := twoLayer(t, devs)
		tr, err := gluon.NewTrainer(params, &optimizer.SGD{Hyper: optimizer.Hyper{LR: 0.1}, Momentum: 0.9}, "device", opts)
		if err != nil {
			t.Fatal(err)
		}
		return net, params, tr
	}
	net, params, tr := mk()
	backwardOn(t, net, x, devs)
	if err := tr.Step(4); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/trainer.states"
	if err := tr.SaveStates(path); err != nil {
		t.Fatal(err)
	}
	weights := map[string][]float32{}
	for _, p := range params.List() {
		weights[p.Name()] = p.Data(ctx.CPU(0)).Float32s()
	}
	backwardOn(t, net, x, devs)
	if err := tr.Step(4); err != nil {
		t.Fatal(err)
	}

	net2, params2, tr2 := mk()
	for _, p := range params2.List() {
		for _, d := range p.ListData() {
			nd.Assign(d, nd.FromSlice(d.Context(), weights[p.Name()], d.Shape()...))
		}
	}
	if err := tr2.LoadStates(path); err != nil {
		t.Fatal(err)
	}
	backwardOn(t, net2, x, devs)
	if err := nd.Catch(func() {
		if err := tr2.Step(4); err != nil {
			t.Fatal(err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range params.List() {
		for i, d := range devs {
			if got, want := params2.Get(p.Name()).Data(d).Float32s(), p.Data(d).Float32s(); !slices.Equal(got, want) {
				t.Errorf("%s on %v after resuming: %v, want %v", p.Name(), devs[i], got, want)
			}
		}
	}
}

// TestResetContextAfterStep: parameters moved to other contexts after the
// Trainer's first step make Step, AllReduceGrads and Update fail with an
// error that says what happened and what to do (a runtime panic, a false
// stale-gradient error or a context mismatch before).
func TestResetContextAfterStep(t *testing.T) {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	for _, c := range []struct {
		name     string
		from, to []ctx.Context
	}{
		{"1to2", cpus(1), cpus(2)},
		{"2to1", cpus(2), cpus(1)},
		{"other", []ctx.Context{ctx.CPU(0)}, []ctx.Context{ctx.CPU(1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			net, params := twoLayer(t, c.from)
			tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
			if err != nil {
				t.Fatal(err)
			}
			backwardOn(t, net, x, c.from)
			if err := tr.Step(4); err != nil {
				t.Fatal(err)
			}
			if err := params.ResetContext(c.to); err != nil {
				t.Fatal(err)
			}
			backwardOn(t, net, x, c.to)
			for name, f := range map[string]func() error{
				"Step":           func() error { return tr.Step(4) },
				"AllReduceGrads": tr.AllReduceGrads,
				"Update":         func() error { return tr.Update(4) },
			} {
				var err error
				if perr := nd.Catch(func() { err = f() }); perr != nil {
					t.Fatalf("%s panicked: %v", name, perr)
				}
				if err == nil || !strings.Contains(err.Error(), "moved from") || !strings.Contains(err.Error(), "new Trainer") {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}

// tiedDecoder projects back with its encoder's weight (tied weights).
type tiedDecoder struct {
	gluon.BlockMeta
	w *gluon.Parameter
}

func (d *tiedDecoder) Forward(h *nd.NDArray) *nd.NDArray {
	return nd.Dot(h, d.w.Data(h.Context()), false, false)
}

// tiedAE is x → tanh(x·Wᵀ) → ·W with one W registered in both halves.
type tiedAE struct {
	gluon.BlockMeta
	enc *nn.Dense
	dec *tiedDecoder
}

func newTiedAE() *tiedAE {
	m := &tiedAE{BlockMeta: gluon.NewBlockMeta("ae")}
	m.enc = m.AddChild(nn.NewDense(4, nn.DenseOpts{InUnits: 3, NoBias: true, Act: "tanh"})).(*nn.Dense)
	m.dec = &tiedDecoder{BlockMeta: gluon.NewBlockMeta("dec")}
	m.dec.w = m.dec.AddParam(m.enc.Weight)
	m.AddChild(m.dec)
	return m
}

func (m *tiedAE) Forward(x *nd.NDArray) *nd.NDArray { return m.dec.Forward(m.enc.Forward(x)) }

// TestTiedWeightsTrain: a parameter registered in two blocks is collected
// once, under its first name, and trains on one context and on two alike
// (the Trainer failed at the first Step: "initialised twice").
func TestTiedWeightsTrain(t *testing.T) {
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	run := func(devs []ctx.Context) []float32 {
		nd.Seed(5)
		m := newTiedAE()
		params := gluon.CollectParams(m)
		if got := params.Names(); !slices.Equal(got, []string{"dense0.weight"}) {
			t.Fatalf("tied parameters collected as %v", got)
		}
		if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			backwardOn(t, m, x, devs)
			if err := tr.Step(4); err != nil {
				t.Fatal(err)
			}
		}
		return params.List()[0].Data(devs[len(devs)-1]).Float32s()
	}
	one, two := run(cpus(1)), run(cpus(2))
	for i := range one {
		if d := one[i] - two[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("two contexts: %v, one: %v", two, one)
		}
	}
}

// TestLoadStatesExtraParameter: a states file saved for a network with a
// parameter this Trainer lacks is refused also when the optimizer keeps
// no state (it was accepted for plain SGD and refused with momentum).
func TestLoadStatesExtraParameter(t *testing.T) {
	devs := cpus(1)
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2}, 2, 3)
	net, _ := twoLayer(t, devs)
	extra := nn.NewDense(2, nn.DenseOpts{InUnits: 2})
	if err := gluon.CollectParams(extra).Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	big := gluon.CollectParams(nn.NewSequential(net, extra))
	tr, err := gluon.NewTrainer(big, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	backwardOn(t, net, x, devs)
	if err := tr.StepIgnoreStale(2); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/big.states"
	if err := tr.SaveStates(path); err != nil {
		t.Fatal(err)
	}
	net2, _ := twoLayer(t, devs)
	small := gluon.CollectParams(nn.NewSequential(net2))
	tr2, err := gluon.NewTrainer(small, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.LoadStates(path); err == nil || !strings.Contains(err.Error(), "does not have") {
		t.Fatalf("LoadStates of a file with another parameter: %v", err)
	}
}

// TestNewTrainerAfterMove: after parameters moved to other contexts, the
// new Trainer that the moved-parameters error asks for sums the new
// contexts' gradients (the old Trainer's sums during backward, on the old
// contexts, used to count as done, and the replicas split).
func TestNewTrainerAfterMove(t *testing.T) {
	defer withCores(8)()
	from, to := cpus(2), []ctx.Context{ctx.CPU(2), ctx.CPU(3)}
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	opts := gluon.TrainerOpts{FirstBucketBytes: 16, BucketBytes: 16}
	net, params := twoLayer(t, from)
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", opts)
	if err != nil {
		t.Fatal(err)
	}
	backwardOn(t, net, x, from)
	if err := tr.Step(4); err != nil {
		t.Fatal(err)
	}
	backwardOn(t, net, x, from)
	if err := params.ResetContext(to); err != nil {
		t.Fatal(err)
	}
	backwardOn(t, net, x, to)
	if err := tr.Step(4); err == nil || !strings.Contains(err.Error(), "moved from") {
		t.Fatalf("Step after the move: %v", err)
	}
	tr2, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.Step(4); err != nil {
		t.Fatal(err)
	}
	for _, p := range params.List() {
		if a, b := p.Data(to[0]).Float32s(), p.Data(to[1]).Float32s(); !slices.Equal(a, b) {
			t.Errorf("%s: the replicas differ: %v and %v", p.Name(), a, b)
		}
	}
}

// TestTwoPassesPerContext: each context runs two backward passes in a row
// (the second overwriting the first's gradients) inside one ForEachDevice
// callback; with a core to spare the buckets are summed during backward,
// once both contexts' second passes are in, and every step trains as
// summing in Step does (it failed most steps: a bucket launched with one
// context's second pass and the other's first).
func TestTwoPassesPerContext(t *testing.T) {
	defer withCores(8)()
	devs := cpus(2)
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	run := func(opts gluon.TrainerOpts) []float32 {
		net, params := twoLayer(t, devs)
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", opts)
		if err != nil {
			t.Fatal(err)
		}
		for step := range 40 {
			parts, err := gluon.SplitAndLoad(x, devs, false)
			if err != nil {
				t.Fatal(err)
			}
			autograd.Record(func() {
				err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
					l := nd.Sum(net.Forward(parts[i]))
					autograd.BackwardHeads([]*nd.NDArray{l}, autograd.BackwardOpts{RetainGraph: true})
					autograd.Backward(l)
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Step(4); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		return params.List()[0].Data(devs[1]).Float32s()
	}
	want := run(gluon.TrainerOpts{NoOverlap: true})
	got := run(gluon.TrainerOpts{FirstBucketBytes: 16, BucketBytes: 16})
	if !slices.Equal(got, want) {
		t.Fatalf("overlapped: %v, summed in Step: %v", got, want)
	}
}

// TestZeroGradAfterStaleError: after a Step that failed on a stale
// gradient (the others summed during backward), ZeroGrad and a backward
// pass on one context only train as summing in Step does; the summed
// buckets no longer count as summed once zeroed (the Step failed, saying
// other contexts held sums).
func TestZeroGradAfterStaleError(t *testing.T) {
	defer withCores(8)()
	devs := cpus(2)
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	run := func(opts gluon.TrainerOpts) map[string][]float32 {
		net, _ := twoLayer(t, devs)
		unused := nn.NewDense(2, nn.DenseOpts{InUnits: 2})
		if err := gluon.CollectParams(unused).Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		params := gluon.CollectParams(nn.NewSequential(net, unused))
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", opts)
		if err != nil {
			t.Fatal(err)
		}
		backwardOn(t, net, x, devs)
		if err := tr.Step(4); err == nil || !strings.Contains(err.Error(), "stale") {
			t.Fatalf("Step with a stale gradient: %v", err)
		}
		params.ZeroGrad()
		backwardOn(t, net, nd.SliceAxis(x, 0, 2, 0), devs[:1])
		if err := tr.StepIgnoreStale(2); err != nil {
			t.Fatal(err)
		}
		out := map[string][]float32{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(devs[1]).Float32s()
		}
		return out
	}
	want := run(gluon.TrainerOpts{NoOverlap: true})
	got := run(gluon.TrainerOpts{FirstBucketBytes: 16, BucketBytes: 16})
	for name, w := range want {
		if !slices.Equal(w, got[name]) {
			t.Errorf("%s: %v, summed in Step: %v", name, got[name], w)
		}
	}
}

// TestZeroGradPartlyThenAgain: a bucket summed during backward, one of its
// parameters zeroed, a second backward pass (summed again), then the rest
// zeroed: the restart forgets the zeros noted before the second sum, so
// Step does not sum that parameter's sums again (it doubled its update).
func TestZeroGradPartlyThenAgain(t *testing.T) {
	defer withCores(8)()
	devs := cpus(2)
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0, 2, 0.5, 1, -2, 3, 1, 0}, 4, 3)
	run := func(opts gluon.TrainerOpts) []float32 {
		net, params := twoLayer(t, devs)
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", opts)
		if err != nil {
			t.Fatal(err)
		}
		ps := params.List()
		backwardOn(t, net, x, devs)
		ps[0].ZeroGrad()
		backwardOn(t, net, x, devs)
		for _, p := range ps[1:] {
			p.ZeroGrad()
		}
		if err := tr.Step(4); err != nil {
			t.Fatal(err)
		}
		return ps[0].Data(devs[1]).Float32s()
	}
	want := run(gluon.TrainerOpts{NoOverlap: true})
	got := run(gluon.TrainerOpts{})
	if !slices.Equal(got, want) {
		t.Fatalf("overlapped: %v, summed in Step: %v", got, want)
	}
}

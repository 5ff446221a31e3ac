package estimator_test

import (
	"sync"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/goluon/goluon/autograd"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/data"
	"github.com/goluon/goluon/gluon/estimator"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/metric"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/progress"
	"github.com/goluon/goluon/nd"
)

// blobs is a 3-class problem: points around three centres in 4-D.
func blobs(n int, seed uint64) data.Dataset {
	r := rand.New(rand.NewPCG(seed, 7))
	centres := [][]float32{{2, 0, 0, 1}, {0, 2, 1, 0}, {-2, -2, 0, 0}}
	xs := make([]data.Tensor, n)
	ys := make([]float32, n)
	for i := range xs {
		c := i % 3
		v := make([]float32, 4)
		for j := range v {
			v[j] = centres[c][j] + float32(r.NormFloat64())*0.7
		}
		xs[i] = data.Tensor{Shape: []int{4}, F32: v}
		ys[i] = float32(c)
	}
	ds, err := data.NewArrayDataset(xs, ys)
	if err != nil {
		panic(err)
	}
	return ds
}

type setup struct {
	est    *estimator.Estimator
	params *gluon.ParamDict
	tr     *gluon.Trainer
	train  *data.DataLoader
	val    *data.DataLoader
	devs   []ctx.Context
}

func newSetup(t *testing.T, devs []ctx.Context) *setup {
	t.Helper()
	return newSetupIn(t, devs, nil)
}

// newSetupIn is newSetup with the estimator and its loaders in session
// sess (nil: the default session).
func newSetupIn(t *testing.T, devs []ctx.Context, sess *nd.Session) *setup {
	t.Helper()
	nd.Seed(9)
	net := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 4, Act: "relu"}), nn.NewDense(3, nn.DenseOpts{InUnits: 16}))
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	opt := optimizer.NewSGD(0.1)
	opt.Momentum = 0.9
	tr, err := gluon.NewTrainer(params, opt, "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	est, err := estimator.New(net, loss.NewSoftmaxCrossEntropy(), tr, devs, func() metric.Metric { return metric.NewAccuracy() })
	if err != nil {
		t.Fatal(err)
	}
	est.Session = sess
	train, _ := data.NewDataLoader(blobs(300, 1), data.LoaderOpts{BatchSize: 32, Shuffle: true, Seed: 3, Workers: 2, Session: sess})
	val, _ := data.NewDataLoader(blobs(90, 2), data.LoaderOpts{BatchSize: 32, Session: sess})
	return &setup{est, params, tr, train, val, devs}
}

func snapshot(p *gluon.ParamDict) map[string][]float32 {
	out := map[string][]float32{}
	for _, n := range p.Names() {
		out[n] = p.Get(n).ListData()[0].Float32s()
	}
	return out
}

// recorder logs the events it sees.
type recorder struct {
	estimator.NopHandler
	events []string
}

func (r *recorder) TrainBegin(*estimator.State) error {
	r.events = append(r.events, "train-begin")
	return nil
}
func (r *recorder) EpochBegin(s *estimator.State) error {
	r.events = append(r.events, "epoch-begin")
	return nil
}
func (r *recorder) EpochEnd(*estimator.State) error {
	r.events = append(r.events, "epoch-end")
	return nil
}
func (r *recorder) TrainEnd(_ *estimator.State, err error) error {
	r.events = append(r.events, "train-end")
	return nil
}

func TestFitLearnsAndLogs(t *testing.T) {
	s := newSetup(t, []ctx.Context{ctx.CPU(0), ctx.CPU(1)})
	var out bytes.Buffer
	rec := &recorder{}
	logPath := filepath.Join(t.TempDir(), "metrics.jsonl")
	err := s.est.Fit(context.Background(), s.train, s.val, 4, rec,
		&estimator.Logger{W: &out, Mode: progress.Lines}, &estimator.MetricsLog{Path: logPath, Trainer: s.tr})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"train-begin", "epoch-begin", "epoch-end", "epoch-begin", "epoch-end", "epoch-begin", "epoch-end", "epoch-begin", "epoch-end", "train-end"}
	if !slices.Equal(rec.events, want) {
		t.Errorf("events %v", rec.events)
	}
	text := out.String()
	if !strings.Contains(text, "Epoch 4/4 - ") || !strings.Contains(text, "val_accuracy: ") {
		t.Errorf("log lacks the Keras-like epoch line:\n%s", text)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d metric lines, want 4", len(lines))
	}
	var last map[string]float64
	if err := json.Unmarshal([]byte(lines[3]), &last); err != nil {
		t.Fatal(err)
	}
	if last["val_accuracy"] < 0.9 || last["accuracy"] < 0.9 || last["epoch"] != 4 || !(last["loss"] < 0.5) {
		t.Errorf("did not learn the blobs: %v", last)
	}
	vals, err := s.est.Evaluate(context.Background(), s.val)
	if err != nil || math.Abs(vals["accuracy"]-last["val_accuracy"]) > 1e-9 {
		t.Errorf("Evaluate = %v, %v; the last epoch logged val_accuracy %v", vals, err, last["val_accuracy"])
	}
}

func TestEarlyStopping(t *testing.T) {
	s := newSetup(t, []ctx.Context{ctx.CPU(0)})
	// No epoch can improve by 0.5: the best is epoch 1's, and Keras stops
	// after Patience epochs without improvement (Patience 0 as 1).
	for _, c := range []struct{ patience, stop int }{{0, 2}, {1, 2}, {2, 3}, {3, 4}} {
		es := &estimator.EarlyStopping{Monitor: "val_accuracy", Patience: c.patience, MinDelta: -0.5}
		for run := range 2 { // the same handler in a second Fit starts afresh
			s := newSetup(t, []ctx.Context{ctx.CPU(0)})
			if err := s.est.Fit(context.Background(), s.train, s.val, 10, es); err != nil {
				t.Fatal(err)
			}
			if es.StoppedEpoch != c.stop {
				t.Errorf("patience %d, Fit %d: stopped after epoch %d, want %d", c.patience, run+1, es.StoppedEpoch, c.stop)
			}
		}
	}
	bad := &estimator.EarlyStopping{Monitor: "val_nonsense"}
	if err := s.est.Fit(context.Background(), s.train, s.val, 1, bad); err == nil || !strings.Contains(err.Error(), "val_nonsense") {
		t.Errorf("unknown monitor: %v", err)
	}
}

// TestCheckpointResume: 2 epochs, stop, resume from the checkpoint for 2
// more equals 4 epochs straight.
func TestCheckpointResume(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	straight := newSetup(t, devs)
	if err := straight.est.Fit(context.Background(), straight.train, nil, 4); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := newSetup(t, devs)
	cp := &estimator.Checkpoint{Dir: dir, Params: first.params, Trainer: first.tr, Contexts: devs}
	if err := first.est.Fit(context.Background(), first.train, nil, 2, cp); err != nil {
		t.Fatal(err)
	}
	second := newSetup(t, []ctx.Context{ctx.CPU(2), ctx.CPU(3)}) // resume on other contexts
	cp2 := &estimator.Checkpoint{Dir: dir, Resume: true, Params: second.params, Trainer: second.tr, Contexts: second.devs}
	rec := &epochCounter{}
	if err := second.est.Fit(context.Background(), second.train, nil, 4, cp2, rec); err != nil {
		t.Fatal(err)
	}
	if cp2.ResumedFrom != 2 || !slices.Equal(rec.epochs, []int{3, 4}) {
		t.Fatalf("resumed from %d, ran epochs %v", cp2.ResumedFrom, rec.epochs)
	}
	want, got := snapshot(straight.params), snapshot(second.params)
	for n, w := range want {
		for i := range w {
			if math.Abs(float64(w[i]-got[n][i])) > 1e-5 {
				t.Fatalf("%s differs after resume: %v vs %v", n, got[n][:3], w[:3])
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 { // checkpoint.json + 2 kept checkpoints x 2 files
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("checkpoint dir holds %v", names)
	}
}

// TestCheckpointReadOnly: a read-only checkpoint (the non-zero ranks of a
// distributed job) resumes from the directory but writes nothing.
func TestCheckpointReadOnly(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0)}
	dir := t.TempDir()
	first := newSetup(t, devs)
	if err := first.est.Fit(context.Background(), first.train, nil, 1, &estimator.Checkpoint{Dir: dir, Params: first.params, Trainer: first.tr, Contexts: devs}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(dir)
	second := newSetup(t, devs)
	ro := &estimator.Checkpoint{Dir: dir, Resume: true, ReadOnly: true, Params: second.params, Trainer: second.tr, Contexts: devs}
	if err := second.est.Fit(context.Background(), second.train, nil, 3, ro); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadDir(dir)
	if ro.ResumedFrom != 1 || len(after) != len(before) {
		t.Errorf("resumed from %d; %d files before, %d after (a read-only checkpoint wrote)", ro.ResumedFrom, len(before), len(after))
	}
	missing := &estimator.Checkpoint{Dir: filepath.Join(dir, "absent"), ReadOnly: true, Params: second.params, Trainer: second.tr, Contexts: devs}
	if err := second.est.Fit(context.Background(), second.train, nil, 1, missing); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing.Dir); !os.IsNotExist(err) {
		t.Errorf("a read-only checkpoint created its directory: %v", err)
	}
}

type epochCounter struct {
	estimator.NopHandler
	epochs []int
}

func (c *epochCounter) EpochBegin(s *estimator.State) error {
	c.epochs = append(c.epochs, s.Epoch)
	return nil
}

func TestEpochLRAndErrors(t *testing.T) {
	s := newSetup(t, []ctx.Context{ctx.CPU(0)})
	var lrs []float64
	lr := &estimator.EpochLR{Trainer: s.tr, Schedule: func(e int) float64 { return 0.1 * (1 - float64(e)/3) }}
	probe := &lrProbe{tr: s.tr, seen: &lrs}
	if err := s.est.Fit(context.Background(), s.train, nil, 3, lr, probe); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.1, 0.1 * 2 / 3, 0.1 / 3}
	for i := range want {
		if math.Abs(lrs[i]-want[i]) > 1e-12 {
			t.Fatalf("learning rates %v, want %v", lrs, want)
		}
	}
	boom := errors.New("boom")
	if err := s.est.Fit(context.Background(), s.train, nil, 3, failing{err: boom}); !errors.Is(err, boom) {
		t.Errorf("handler error: %v", err)
	}
	goctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.est.Fit(goctx, s.train, nil, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Fit: %v", err)
	}
}

type lrProbe struct {
	estimator.NopHandler
	tr   *gluon.Trainer
	seen *[]float64
}

func (p *lrProbe) EpochBegin(*estimator.State) error {
	*p.seen = append(*p.seen, p.tr.LearningRate())
	return nil
}

type failing struct {
	estimator.NopHandler
	err error
}

func (f failing) EpochEnd(*estimator.State) error { return f.err }

// TestFitInSessions fits two estimators at once, one in the default
// session and one in a session of its own (loaders included), and checks
// that each learns exactly the parameters it learns alone.
func TestFitInSessions(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	fit := func(s *setup) map[string][]float32 {
		if err := s.est.Fit(context.Background(), s.train, s.val, 2); err != nil {
			t.Error(err)
		}
		return snapshot(s.params)
	}
	wantDef := fit(newSetupIn(t, devs, nil))
	wantOwn := fit(newSetupIn(t, devs, autograd.NewSession("evaluator")))

	a, b := newSetupIn(t, devs, nil), newSetupIn(t, devs, autograd.NewSession("evaluator"))
	var gotDef, gotOwn map[string][]float32
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); gotDef = fit(a) }()
	go func() { defer wg.Done(); gotOwn = fit(b) }()
	wg.Wait()
	for _, c := range []struct {
		name      string
		got, want map[string][]float32
	}{{"default session", gotDef, wantDef}, {"own session", gotOwn, wantOwn}} {
		for n, w := range c.want {
			if !slices.Equal(c.got[n], w) {
				t.Errorf("%s: %s differs from the parameters learnt alone", c.name, n)
			}
		}
	}
}

// TestFitBesideAPredictor: Fit publishes to a Predictor (the Publish
// handler) while goroutines call it; the calls all succeed, and Fit trains
// exactly as it does alone.
func TestFitBesideAPredictor(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	alone := newSetup(t, devs)
	if err := alone.est.Fit(context.Background(), alone.train, nil, 2); err != nil {
		t.Fatal(err)
	}
	want := snapshot(alone.params)

	s := newSetup(t, devs)
	newNet := func() *nn.Sequential {
		return nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 4, Act: "relu"}), nn.NewDense(3, nn.DenseOpts{InUnits: 16}))
	}
	pred, err := gluon.NewPredictor(newNet, gluon.PredictorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	snap := s.tr.Snapshot()
	if err := pred.Publish(snap); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var calls int
	var callErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, _, err := pred.PredictData([]float32{2, 0, 0, 1}, 1, 4); err != nil {
				callErr = err
				return
			}
			calls++
		}
	}()
	err = s.est.Fit(context.Background(), s.train, nil, 2, &estimator.Publish{Trainer: s.tr, Predictor: pred, Every: 3})
	close(stop)
	wg.Wait()
	if err != nil || callErr != nil {
		t.Fatalf("Fit: %v; a prediction: %v", err, callErr)
	}
	got := snapshot(s.params)
	for name, w := range want {
		if !slices.Equal(w, got[name]) {
			t.Errorf("%s differs from training alone", name)
		}
	}
	if steps := 2 * ((300 + 31) / 32); pred.Step() != steps {
		t.Errorf("the Predictor serves step %d, want %d", pred.Step(), steps)
	}
	y, _, _ := pred.PredictData([]float32{2, 0, 0, 1}, 1, 4)
	if !(y[0] > y[1] && y[0] > y[2]) {
		t.Errorf("the trained Predictor scores class 0's centre %v", y)
	}
	t.Logf("%d predictions during Fit", calls)
}

// TestReduceLROnPlateau: with a threshold no epoch can beat, every epoch
// after the first cuts the rate (patience 0), and the Trainer's steps use
// the Plateau's rate.
func TestReduceLROnPlateau(t *testing.T) {
	s := newSetup(t, []ctx.Context{ctx.CPU(0)})
	p, err := optimizer.NewPlateau(optimizer.PlateauOpts{LR: 0.1, Threshold: 0.99})
	if err != nil {
		t.Fatal(err)
	}
	s.tr.Optimizer().Hyperparams().Scheduler = p
	var epochs []int
	var lrs []float64
	h := &estimator.ReduceLROnPlateau{Monitor: "val_loss", Plateau: p, Reduced: func(e int, lr float64) {
		epochs, lrs = append(epochs, e), append(lrs, lr)
	}}
	if err := s.est.Fit(context.Background(), s.train, s.val, 3, h); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(epochs, []int{2, 3}) || math.Abs(lrs[0]-0.01) > 1e-15 || math.Abs(lrs[1]-0.001) > 1e-15 {
		t.Fatalf("reductions at epochs %v to %v, want [2 3] to [0.01 0.001]", epochs, lrs)
	}
	if lr := s.tr.LearningRate(); math.Abs(lr-0.001) > 1e-15 {
		t.Errorf("trainer's rate %v", lr)
	}
	bad := &estimator.ReduceLROnPlateau{Monitor: "val_nonsense", Plateau: p}
	if err := s.est.Fit(context.Background(), s.train, s.val, 1, bad); err == nil || !strings.Contains(err.Error(), "val_nonsense") {
		t.Errorf("unknown monitor: %v", err)
	}
	wrongWay := &estimator.ReduceLROnPlateau{Monitor: "val_accuracy", Plateau: p}
	if err := s.est.Fit(context.Background(), s.train, s.val, 1, wrongWay); err == nil || !strings.Contains(err.Error(), "Maximize") {
		t.Errorf("accuracy on a minimising plateau: %v", err)
	}
}

// TestProfileHandler profiles steps 3 to 5 of a Fit: a table of the ops
// and a Chrome trace; a window training ends inside is written at the end.
func TestProfileHandler(t *testing.T) {
	s := newSetup(t, []ctx.Context{ctx.CPU(0)})
	var tab bytes.Buffer
	trace := filepath.Join(t.TempDir(), "trace.json")
	h := &estimator.Profile{Skip: 2, Steps: 3, Top: 5, Table: &tab, TracePath: trace}
	if err := s.est.Fit(context.Background(), s.train, nil, 2, h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab.String(), "self/call") || strings.Count(tab.String(), "\n") != 6 {
		t.Errorf("table:\n%s", tab.String())
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var tr struct{ TraceEvents []map[string]any }
	if err := json.Unmarshal(b, &tr); err != nil || len(tr.TraceEvents) == 0 {
		t.Fatalf("trace: %v, %d events", err, len(tr.TraceEvents))
	}
	// 10 steps per epoch: a window of 100 steps ends with training.
	tab.Reset()
	long := &estimator.Profile{Steps: 100, Table: &tab}
	if err := s.est.Fit(context.Background(), s.train, nil, 1, long); err != nil {
		t.Fatal(err)
	}
	if tab.Len() == 0 {
		t.Error("no table when training ended inside the window")
	}
	// The profile was stopped: another may start.
	p, err := nd.StartProfile(nd.ProfileOpts{})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	if err := s.est.Fit(context.Background(), s.train, nil, 1, &estimator.Profile{}); err == nil {
		t.Error("a Profile without Steps was accepted")
	}
}

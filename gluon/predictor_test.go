package gluon_test

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// predictorNet is sessionNet's architecture, built without initialising:
// what a Predictor's build function returns.
func predictorNet() *nn.Sequential {
	return nn.NewSequential(
		nn.NewDense(16, nn.DenseOpts{Act: "relu", InUnits: 4}),
		nn.NewDropout(0.3),
		nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 16}),
		nn.NewDense(3, nn.DenseOpts{InUnits: 16}),
	)
}

// probe is the input the servers ask about: 2 samples, made the way an
// HTTP handler would, with the package-level functions.
var probeData = []float32{0.5, -0.25, 1, 0.125, -1, 0.75, 0.3, -0.6}

// learn trains sessionNet on one context in the default session, with
// scopes, for steps steps; every publishEvery steps it takes a snapshot,
// computes the probe's prediction alone (predict mode, default session)
// and calls publish with both. It returns the final parameters.
func learn(t *testing.T, steps, publishEvery int, publish func(*gluon.Snapshot, []float32)) []float32 {
	t.Helper()
	nd.Seed(7)
	devs := []ctx.Context{ctx.CPU(0)}
	net, params := sessionNet(devs)
	trainer, err := gluon.NewTrainer(params, &optimizer.SGD{Hyper: optimizer.Hyper{LR: 0.1}, Momentum: 0.9}, "local", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	lossFn := loss.NewSoftmaxCrossEntropy()
	for i := range steps {
		sc := nd.NewScope()
		x, y := batchIn(nd.DefaultSession(), i)
		autograd.Record(func() { autograd.Backward(lossFn.Forward(net.Forward(x), y)) })
		if err := trainer.Step(8); err != nil {
			t.Fatal(err)
		}
		if publish != nil && (i+1)%publishEvery == 0 {
			var want []float32
			autograd.PredictMode(func() { want = net.Forward(nd.FromSlice(ctx.CPU(0), probeData, 2, 4)).Float32s() })
			publish(trainer.Snapshot(), want)
		}
		sc.Close()
	}
	var out []float32
	for _, p := range params.List() {
		out = append(out, p.Data(ctx.CPU(0)).Float32s()...)
	}
	return out
}

// TestPredictorBesideTraining: a learner trains (dropout, batch norm,
// scopes, default session) and publishes snapshots while server goroutines
// call the Predictor with inputs made by the package-level functions. Every
// prediction must equal the one computed alone, in predict mode, for one
// of the snapshots published so far; the training must end with the
// parameters it reaches alone.
func TestPredictorBesideTraining(t *testing.T) {
	steps, every, servers := 400, 20, 3
	if testing.Short() {
		steps = 100
	}
	alone := learn(t, steps, every, nil)

	pred, err := gluon.NewPredictor(predictorNet, gluon.PredictorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var published [][]float32 // expected probe outputs, in publishing order
	done := make(chan struct{})
	var calls, wrong atomic.Int64
	var failures sync.Map
	var wg sync.WaitGroup
	for g := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var got []float32
				if g%2 == 0 {
					x := nd.FromSlice(ctx.CPU(0), probeData, 2, 4)
					outs, err := pred.Predict(x)
					if err != nil {
						if !strings.Contains(err.Error(), "nothing published") {
							failures.Store(err.Error(), true)
						}
						continue
					}
					got = outs[0].Float32s()
					outs[0].Release()
				} else {
					var err error
					if got, _, err = pred.PredictData(probeData, 2, 4); err != nil {
						if !strings.Contains(err.Error(), "nothing published") {
							failures.Store(err.Error(), true)
						}
						continue
					}
				}
				calls.Add(1)
				mu.Lock()
				ok := slices.ContainsFunc(published, func(w []float32) bool { return slices.Equal(w, got) })
				mu.Unlock()
				if !ok {
					wrong.Add(1)
				}
			}
		}()
	}
	final := learn(t, steps, every, func(s *gluon.Snapshot, want []float32) {
		mu.Lock()
		published = append(published, want)
		mu.Unlock()
		if err := pred.Publish(s); err != nil {
			t.Error(err)
		}
		s.Release()
	})
	// Let the servers see the last snapshot too.
	for calls.Load() < 1000 {
		if _, _, err := pred.PredictData(probeData, 2, 4); err != nil {
			t.Fatal(err)
		}
		calls.Add(1)
	}
	close(done)
	wg.Wait()
	failures.Range(func(k, _ any) bool { t.Errorf("a call failed: %v", k); return true })
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d of %d predictions matched no published snapshot's prediction made alone", n, calls.Load())
	}
	if !slices.Equal(alone, final) {
		t.Error("training beside the Predictor ended with other parameters than training alone")
	}
	if pred.Step() != steps {
		t.Errorf("the Predictor serves step %d, want %d", pred.Step(), steps)
	}
	t.Logf("%d predictions over %d snapshots", calls.Load(), len(published))
}

// TestSnapshotWaitsForStep: snapshots taken by another goroutine while the
// learner steps are each exactly the parameters after some whole number
// of steps, the number they report.
func TestSnapshotWaitsForStep(t *testing.T) {
	const steps = 60
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	run := func(snap func(*gluon.Trainer)) [][]float32 {
		nd.Seed(3)
		net := nn.NewSequential(nn.NewDense(8, nn.DenseOpts{Act: "tanh", InUnits: 4}), nn.NewDense(3, nn.DenseOpts{InUnits: 8}))
		params := gluon.CollectParams(net)
		if err := params.Initialize(nil, devs, false); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(params, optimizer.NewAdam(0.01), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		if snap != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						snap(tr)
					}
				}
			}()
		}
		var after [][]float32
		lossFn := loss.NewSoftmaxCrossEntropy()
		for i := range steps {
			x, y := batchIn(nd.DefaultSession(), i)
			xs, _ := gluon.SplitAndLoad(x, devs, true)
			ys, _ := gluon.SplitAndLoad(y, devs, true)
			autograd.Record(func() {
				_ = gluon.ForEachDevice(devs, func(d int, _ ctx.Context) error {
					autograd.Backward(lossFn.Forward(net.Forward(xs[d]), ys[d]))
					return nil
				})
			})
			if err := tr.Step(8); err != nil {
				t.Fatal(err)
			}
			if snap == nil {
				after = append(after, flatSnapshot(tr.Snapshot()))
			}
		}
		close(stop)
		wg.Wait()
		return after
	}
	want := run(nil)
	var taken, checked atomic.Int64
	var bad sync.Map
	run(func(tr *gluon.Trainer) {
		s := tr.Snapshot()
		taken.Add(1)
		if s.Step == 0 {
			return
		}
		if !slices.Equal(flatSnapshot(s), want[s.Step-1]) {
			bad.Store(s.Step, true)
		}
		checked.Add(1)
	})
	bad.Range(func(k, _ any) bool {
		t.Errorf("the snapshot of step %v is not the parameters after that step", k)
		return true
	})
	if checked.Load() == 0 {
		t.Fatalf("no snapshot taken during training (%d at step 0)", taken.Load())
	}
	t.Logf("%d snapshots checked", checked.Load())
}

func flatSnapshot(s *gluon.Snapshot) []float32 {
	var out []float32
	for _, n := range s.Names() {
		out = append(out, s.Get(n).Float32s()...)
	}
	return out
}

func TestPredictorErrors(t *testing.T) {
	pred, err := gluon.NewPredictor(predictorNet, gluon.PredictorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"predict before publish", func() error { _, err := pred.Predict(nd.Zeros(ctx.CPU(0), nd.Float32, 1, 4)); return err }, "nothing published"},
		{"nil snapshot", func() error { return pred.Publish(nil) }, "nil snapshot"},
		{"snapshot of another network", func() error {
			other := nn.NewDense(3, nn.DenseOpts{InUnits: 4}) // names "weight", "bias"
			ps := gluon.CollectParams(other)
			if err := ps.Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
				t.Fatal(err)
			}
			return pred.Publish(ps.Snapshot())
		}, "not in the snapshot"},
		{"snapshot before the first forward pass", func() error {
			deferred := nn.NewSequential( // predictorNet with shapes left to the first forward pass
				nn.NewDense(16, nn.DenseOpts{Act: "relu"}),
				nn.NewDropout(0.3),
				nn.NewBatchNorm(nn.BatchNormOpts{}),
				nn.NewDense(3, nn.DenseOpts{}),
			)
			ps := gluon.CollectParams(deferred)
			if err := ps.Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
				t.Fatal(err)
			}
			snap := ps.Snapshot()
			defer snap.Release()
			if len(snap.Unset()) == 0 {
				t.Errorf("the snapshot lists no unset parameters")
			}
			return pred.Publish(snap)
		}, "had no value when the snapshot was taken"},
		{"wrong input shape", func() error {
			_, params := sessionNet([]ctx.Context{ctx.CPU(0)})
			if err := pred.Publish(params.Snapshot()); err != nil {
				t.Fatal(err)
			}
			_, _, err := pred.PredictData([]float32{1, 2, 3}, 1, 3)
			return err
		}, "shape"},
		{"bad host data", func() error { _, _, err := pred.PredictData([]float32{1, 2}, 1, 4); return err }, "input"},
		{"nil build", func() error { _, err := gluon.NewPredictor[*nn.Sequential](nil, gluon.PredictorOpts{}); return err }, "no build function"},
		{"nil network", func() error {
			_, err := gluon.NewPredictor(func() *nn.Sequential { return nil }, gluon.PredictorOpts{})
			return err
		}, "no usable network"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	// After the errors the Predictor still serves.
	y, shape, err := pred.PredictData(probeData, 2, 4)
	if err != nil || len(y) != 6 || !slices.Equal(shape, []int{2, 3}) || math.IsNaN(float64(y[0])) {
		t.Fatalf("PredictData after errors: %v %v %v", y, shape, err)
	}
}

// TestPublishKeepsMemoryFlat: publishing and releasing snapshots does not
// grow the pool.
func TestPublishKeepsMemoryFlat(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	_, params := sessionNet(dev)
	pred, err := gluon.NewPredictor(predictorNet, gluon.PredictorOpts{})
	if err != nil {
		t.Fatal(err)
	}
	publish := func() {
		s := params.Snapshot()
		if err := pred.Publish(s); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	publish()
	before := nd.MemoryStats(ctx.CPU(0)).InUse
	for range 50 {
		publish()
	}
	if after := nd.MemoryStats(ctx.CPU(0)).InUse; after > before {
		t.Fatalf("50 publications grew the pool's memory in use from %d to %d bytes", before, after)
	}
}

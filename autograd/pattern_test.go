package autograd_test

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd"
)

// needGID skips a test that needs goroutines told apart (internal/gid).
func needGID(t *testing.T) {
	if !gid.Supported {
		t.Skip("goroutines cannot be told apart on this architecture")
	}
}

// packageInput is input(…, i) made with the package-level nd.FromSlice, as
// an HTTP handler or a data loader would make it.
func packageInput(i int) *nd.NDArray {
	v := make([]float64, 8*4)
	for j := range v {
		v[j] = math.Cos(float64(i*31 + j))
	}
	return nd.FromSlice(dev, v, 8, 4)
}

// trainPackage is train with package-made inputs in the default session.
func trainPackage(steps int) []float64 { return trainWith(autograd.Default(), steps, packageInput) }

// TestServeWithPackageInputs is the first pattern of issue 32: a server
// with its own session answers inside s.PredictMode, but makes each
// request's input with nd.FromSlice — inside the scope, or before it —
// while a learner trains on the default session with package-made inputs
// too. Every prediction must equal the one made alone (no dropout, running
// statistics), no array may be released under the server, and training
// must end bitwise as alone.
func TestServeWithPackageInputs(t *testing.T) {
	needGID(t)
	const steps, requests, minServed = 200, 16, 1000
	for _, before := range []bool{false, true} {
		name := "input-inside"
		if before {
			name = "input-before"
		}
		t.Run(name, func(t *testing.T) {
			serve := func(s *nd.Session, m *model, i int) (y []float64, err error) {
				err = nd.Catch(func() {
					sc := s.NewScope()
					defer sc.Close()
					var x *nd.NDArray
					if before {
						x = packageInput(i)
						defer x.Release()
					}
					s.PredictMode(func() {
						if !before {
							x = packageInput(i)
						}
						// Unary ops and views first: they take their
						// session from x alone, which is neutral.
						y = m.forward(nd.Reshape(nd.Dropout(nd.Relu(x), 0.5), 8, 4)).Float64s()
					})
				})
				return y, err
			}
			newServer := func() func(i int) ([]float64, error) {
				s, m := autograd.NewSession("server"), newModel()
				return func(i int) ([]float64, error) { return serve(s, m, i) }
			}
			besideLearner(t, 11, steps, requests, minServed, trainPackage, newServer)
		})
	}
}

// onWorker runs f on a goroutine started with nd.Go, as a per-device
// worker of the caller's tree, and waits for it.
func onWorker(f func()) {
	done := make(chan struct{})
	nd.Go(func() { defer close(done); f() })
	<-done
}

// TestServeBesideLearnerInDefaultSession is the second pattern of issue
// 32: a learner and a server both use the default session — autograd.Record
// in one goroutine, autograd.PredictMode or Pause in another, inputs made
// with nd.FromSlice, a scope per step and per request — as a user who never
// heard of sessions writes them. The learner's passes run on its own
// goroutine or on a worker started with nd.Go. Every prediction must equal
// the one made alone, no array may be released under the server, and
// training must end bitwise as alone.
func TestServeBesideLearnerInDefaultSession(t *testing.T) {
	needGID(t)
	const steps, requests, minServed = 200, 16, 1000
	for _, tc := range []struct {
		name           string
		pause, workers bool
	}{
		{"predict-mode", false, false},
		{"pause", true, false},
		{"predict-mode/learner-workers", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(f func()) { f() }
			if tc.workers {
				run = onWorker
			}
			serve := func(m *model, i int) (y []float64, err error) {
				err = nd.Catch(func() {
					sc := nd.NewScope()
					defer sc.Close()
					x := packageInput(i)
					f := func() { y = m.forward(nd.Reshape(nd.Dropout(nd.Relu(x), 0.5), 8, 4)).Float64s() }
					if tc.pause {
						autograd.Pause(f)
					} else {
						autograd.PredictMode(f)
					}
				})
				return y, err
			}
			learn := func(steps int) []float64 { return trainOn(autograd.Default(), steps, packageInput, run) }
			newServer := func() func(i int) ([]float64, error) {
				m := newModel()
				return func(i int) ([]float64, error) { return serve(m, i) }
			}
			besideLearner(t, 13, steps, requests, minServed, learn, newServer)
		})
	}
}

// besideLearner trains (learn) and answers requests 0..requests-1 (a
// server made by newServer) alone, each after nd.Seed(seed); then trains
// again while another server answers at least minServed requests until
// training ends. Training must end bitwise as alone, and every prediction
// must equal the one made alone, with no error.
func besideLearner(t *testing.T, seed uint64, steps, requests, minServed int, learn func(steps int) []float64, newServer func() func(i int) ([]float64, error)) {
	t.Helper()
	nd.Seed(seed)
	wantTrain := learn(steps)
	alone := newServer()
	want := make([][]float64, requests)
	for i := range want {
		var err error
		if want[i], err = alone(i); err != nil {
			t.Fatal(err)
		}
	}

	nd.Seed(seed)
	var done atomic.Bool
	var served, wrong, failed atomic.Int64
	var firstErr atomic.Value
	var gotTrain []float64
	var trainErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		trainErr = nd.Catch(func() { gotTrain = learn(steps) })
	}()
	go func() {
		defer wg.Done()
		serve := newServer()
		for i := 0; !done.Load() || i < minServed; i++ {
			y, err := serve(i % requests)
			served.Add(1)
			if err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
				continue
			}
			if !identical(y, want[i%requests]) {
				wrong.Add(1)
			}
		}
	}()
	wg.Wait()
	if trainErr != nil {
		t.Fatalf("training beside the server: %v", trainErr)
	}
	if !identical(gotTrain, wantTrain) {
		t.Errorf("training beside the server differs from training alone")
	}
	if wrong.Load() != 0 || failed.Load() != 0 {
		t.Errorf("%d wrong and %d failed of %d predictions (first error: %v)", wrong.Load(), failed.Load(), served.Load(), firstErr.Load())
	}
	t.Logf("%d predictions beside %d training steps", served.Load(), steps)
}

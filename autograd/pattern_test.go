package autograd_test

import (
	"errors"
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
	const steps, requests, minServed = 60, 16, 1000
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
						y = m.forward(x).Float64s()
					})
				})
				return y, err
			}
			nd.Seed(11)
			wantTrain := trainPackage(steps)
			sm := newModel()
			alone := autograd.NewSession("server")
			want := make([][]float64, requests)
			for i := range want {
				var err error
				if want[i], err = serve(alone, sm, i); err != nil {
					t.Fatal(err)
				}
			}

			nd.Seed(11)
			var done atomic.Bool
			var served, wrong, failed atomic.Int64
			var firstErr atomic.Value
			var gotTrain []float64
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer done.Store(true)
				gotTrain = trainPackage(steps)
			}()
			go func() {
				defer wg.Done()
				s := autograd.NewSession("server")
				m := newModel()
				for i := 0; !done.Load() || i < minServed; i++ {
					y, err := serve(s, m, i%requests)
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
			if !identical(gotTrain, wantTrain) {
				t.Errorf("training beside the server differs from training alone")
			}
			if wrong.Load() != 0 || failed.Load() != 0 {
				t.Errorf("%d wrong and %d failed of %d predictions (first error: %v)", wrong.Load(), failed.Load(), served.Load(), firstErr.Load())
			}
			t.Logf("%d predictions beside %d training steps", served.Load(), steps)
		})
	}
}

// TestServeOnDefaultSession is the second pattern of issue 32: learner
// and server both on the default session, the server inside
// autograd.PredictMode. Whichever scope opens second while the other is
// open fails as it opens, with ErrSession; nothing runs in the wrong mode:
// every prediction that succeeds equals the one made alone, and the
// learner either ends bitwise as alone or stops with ErrSession.
func TestServeOnDefaultSession(t *testing.T) {
	needGID(t)
	const steps, requests, minServed = 60, 16, 1000
	serve := func(m *model, i int) (y []float64, err error) {
		err = nd.Catch(func() {
			sc := nd.NewScope()
			defer sc.Close()
			autograd.PredictMode(func() {
				x := packageInput(i)
				y = m.forward(x).Float64s()
			})
		})
		return y, err
	}
	isSession := func(err error) bool {
		var ne *nd.Error
		return errors.As(err, &ne) && ne.Kind == nd.ErrSession
	}
	nd.Seed(13)
	wantTrain := trainPackage(steps)
	sm := newModel()
	want := make([][]float64, requests)
	for i := range want {
		var err error
		if want[i], err = serve(sm, i); err != nil {
			t.Fatal(err)
		}
	}

	nd.Seed(13)
	var done atomic.Bool
	var served, wrong, refused atomic.Int64
	var otherErr atomic.Value
	var gotTrain []float64
	var trainErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		trainErr = nd.Catch(func() { gotTrain = trainPackage(steps) })
	}()
	go func() {
		defer wg.Done()
		m := newModel()
		for i := 0; !done.Load() || i < minServed; i++ {
			y, err := serve(m, i%requests)
			served.Add(1)
			switch {
			case isSession(err):
				refused.Add(1)
			case err != nil:
				otherErr.CompareAndSwap(nil, err)
			case !identical(y, want[i%requests]):
				wrong.Add(1)
			}
		}
	}()
	wg.Wait()
	switch {
	case trainErr != nil && !isSession(trainErr):
		t.Errorf("the learner failed with %v, want ErrSession or success", trainErr)
	case trainErr == nil && !identical(gotTrain, wantTrain):
		t.Errorf("training beside the server ended differently from training alone, without an error")
	}
	if wrong.Load() != 0 {
		t.Errorf("%d of %d predictions differ from the ones made alone", wrong.Load(), served.Load())
	}
	if e := otherErr.Load(); e != nil {
		t.Errorf("a prediction failed with %v, want ErrSession or success", e)
	}
	t.Logf("learner: %v; %d predictions, %d refused with ErrSession", trainErr, served.Load(), refused.Load())
}

package autograd_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/nd"
)

// These tests run two goroutine trees at once — one training (recording,
// dropout and batch norm in training mode, a scope per step), one serving
// (predict mode or paused, a scope per request) — and compare each with
// the results it gives alone. Run them with -race (make test does).

// model is a tiny network with every piece of mode-dependent state:
// x·w → Dropout(0.5) → BatchNorm (batch statistics in training, running
// statistics in predict mode).
type model struct{ w, gamma, beta, runMean, runVar *nd.NDArray }

func newModel() *model {
	w := make([]float64, 4*3)
	for i := range w {
		w[i] = math.Sin(float64(i+1)) / 2
	}
	p := nd.PersistentSession() // long-lived arrays: no scope of any goroutine may take them
	m := &model{
		w:       p.FromSlice(dev, w, 4, 3),
		gamma:   p.FromSlice(dev, []float64{1, 0.5, 2}),
		beta:    p.FromSlice(dev, []float64{0, 0.1, -0.1}),
		runMean: p.FromSlice(dev, []float64{0.2, -0.1, 0}),
		runVar:  p.FromSlice(dev, []float64{1, 2, 0.5}),
	}
	m.w.AttachGrad(nd.GradWrite)
	m.gamma.AttachGrad(nd.GradWrite)
	return m
}

func (m *model) forward(x *nd.NDArray) *nd.NDArray {
	h := nd.Dropout(nd.MatMul(x, m.w), 0.5)
	return nd.BatchNorm(h, m.gamma, m.beta, m.runMean, m.runVar, nd.BatchNormOpts{})
}

// input returns request or batch number i (8 samples of 4 features).
func input(s *nd.Session, i int) *nd.NDArray {
	v := make([]float64, 8*4)
	for j := range v {
		v[j] = math.Cos(float64(i*31 + j))
	}
	return s.FromSlice(dev, v, 8, 4)
}

// train runs steps training steps in s on a fresh model and returns every
// loss and gradient it saw, in order.
func train(s *nd.Session, steps int) []float64 {
	return trainWith(s, steps, func(i int) *nd.NDArray { return input(s, i) })
}

// trainWith is train with each step's input made by in.
func trainWith(s *nd.Session, steps int, in func(i int) *nd.NDArray) []float64 {
	return trainOn(s, steps, in, func(f func()) { f() })
}

// trainOn is trainWith with each step's forward and backward pass run by
// run (on the calling goroutine, or on a worker it starts and waits for).
func trainOn(s *nd.Session, steps int, in func(i int) *nd.NDArray, run func(func())) []float64 {
	m := newModel()
	var out []float64
	for i := range steps {
		sc := s.NewScope()
		x := in(i)
		s.Record(func() {
			run(func() {
				loss := nd.Sum(nd.Square(m.forward(x)))
				out = append(out, loss.Scalar())
				nd.Backward([]*nd.NDArray{loss}, nil, false)
			})
		})
		out = append(out, m.w.Grad().Float64s()...)
		out = append(out, m.gamma.Grad().Float64s()...)
		sc.Close()
		if x.Released() == false {
			panic("the step's scope did not release its input")
		}
	}
	return out
}

// serve answers request i in s with pause (recording off, predict mode)
// or PredictMode, on its own model.
func serve(s *nd.Session, m *model, i int, pause bool) []float64 {
	sc := s.NewScope()
	defer sc.Close()
	x := input(s, i)
	var y []float64
	f := func() { y = m.forward(x).Float64s() }
	if pause {
		s.Pause(f)
	} else {
		s.PredictMode(f)
	}
	return y
}

func identical(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestConcurrentTrainAndServe trains in one goroutine tree while another
// serves predictions, in every pairing of the default session and own
// sessions, and checks that both get exactly what they get alone.
func TestConcurrentTrainAndServe(t *testing.T) {
	const steps, requests, minServed = 60, 16, 1000
	for _, tc := range []struct {
		name               string
		trainOwn, serveOwn bool // use an own session (else the default one)
		pause              bool // serve inside Pause rather than PredictMode
	}{
		{"train-default/serve-session", false, true, false},
		{"train-default/serve-session-paused", false, true, true},
		{"train-session/serve-default", true, false, false},
		{"train-session/serve-default-paused", true, false, true},
		{"train-session/serve-session", true, true, false},
		{"train-default/serve-default", false, false, false},
		{"train-default/serve-default-paused", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessions := func() (tr, sv *nd.Session) {
				tr, sv = autograd.Default(), autograd.Default()
				if tc.trainOwn {
					tr = autograd.NewSession("learner")
				}
				if tc.serveOwn {
					sv = autograd.NewSession("server")
				}
				return tr, sv
			}
			// Alone: train, then serve every request once.
			nd.Seed(7)
			tr, sv := sessions()
			wantTrain := train(tr, steps)
			sm := newModel()
			wantServe := make([][]float64, requests)
			for i := range wantServe {
				wantServe[i] = serve(sv, sm, i, tc.pause)
			}

			// Together: the server answers requests until training ends.
			nd.Seed(7)
			tr, sv = sessions()
			var done atomic.Bool
			var served, wrong atomic.Int64
			var gotTrain []float64
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer done.Store(true)
				gotTrain = train(tr, steps)
			}()
			go func() {
				defer wg.Done()
				m := newModel()
				for i := 0; !done.Load() || i < minServed; i++ {
					if !identical(serve(sv, m, i%requests, tc.pause), wantServe[i%requests]) {
						wrong.Add(1)
					}
					served.Add(1)
				}
			}()
			wg.Wait()
			if !identical(gotTrain, wantTrain) {
				t.Errorf("training beside a server differs from training alone")
			}
			if wrong.Load() != 0 {
				t.Errorf("%d of %d predictions made beside training differ from predictions made alone", wrong.Load(), served.Load())
			}
		})
	}
}

// TestConcurrentScopes opens and closes scopes of two sessions and of the
// default session in three goroutines at once: each scope releases exactly
// its own arrays.
func TestConcurrentScopes(t *testing.T) {
	sessions := []*nd.Session{autograd.Default(), autograd.NewSession("a"), autograd.NewSession("b")}
	var wg sync.WaitGroup
	errs := make(chan error, len(sessions))
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kept := s.FromSlice(dev, []float32{1, 2, 3}) // made outside any scope of s: lives on
			for i := range 300 {
				outer := s.NewScope()
				a := s.Zeros(dev, nd.Float32, 4)
				inner := s.NewScope()
				b := nd.AddScalar(a, 1)
				c := nd.Mul(b, nd.Reshape(kept, 3, 1)) // broadcast [3 1]×[4]
				inner.Keep(c)
				inner.Close()
				if !b.Released() || c.Released() || a.Released() {
					errs <- fmt.Errorf("%v, step %d: inner scope released the wrong arrays (b %v, c %v, a %v)", s, i, b.Released(), c.Released(), a.Released())
					return
				}
				if got := c.Float32s(); got[0] != 1 || got[11] != 3 {
					errs <- fmt.Errorf("%v, step %d: values %v", s, i, got)
					return
				}
				outer.Close()
				if !a.Released() || !c.Released() || kept.Released() {
					errs <- fmt.Errorf("%v, step %d: outer scope released the wrong arrays", s, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSessionMixError checks that an op on arrays of two sessions, and the
// other conflicts the design cannot resolve, fail up front with an error
// naming both sessions.
func TestSessionMixError(t *testing.T) {
	a, b := autograd.NewSession("learner"), autograd.NewSession("server")
	x, y := a.Ones(dev, nd.Float32, 2), b.Ones(dev, nd.Float32, 2)
	neutral := nd.Ones(dev, nd.Float32, 2)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"Add", func() { nd.Add(x, y) }, `nd.Add: session mismatch: arrays of session "learner" and session "server" mixed`},
		{"Concat", func() { nd.Concat([]*nd.NDArray{neutral, x, y}, 0) }, `nd.Concat: session mismatch: arrays of session "learner" and session "server"`},
		{"Adopt", func() { b.Adopt(x) }, `nd.Adopt: session mismatch: array of shape [2] belongs to session "learner", not session "server"`},
		{"Use", func() { b.Use(x) }, `nd.Use: session mismatch`},
		{"Backward", func() {
			w := nd.Ones(dev, nd.Float32, 2)
			w.AttachGrad(nd.GradWrite)
			var l1, l2 *nd.NDArray
			a.Record(func() { l1 = nd.Sum(nd.Mul(w, x)) })
			b.Record(func() { l2 = nd.Sum(nd.Mul(w, y)) })
			autograd.BackwardHeads([]*nd.NDArray{l1, l2}, autograd.BackwardOpts{})
		}, `nd.Backward: session mismatch`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := nd.Catch(tc.f)
			var ne *nd.Error
			if !errors.As(err, &ne) || ne.Kind != nd.ErrSession {
				t.Fatalf("got %v, want an ErrSession", err)
			}
			if msg := err.Error(); len(msg) < len(tc.want) || msg[:len(tc.want)] != tc.want {
				t.Errorf("error %q does not start with %q", msg, tc.want)
			}
		})
	}
	// Neutral arrays mix with either session, and the result is that
	// session's.
	if got := nd.Add(neutral, x).Session(); got != a {
		t.Errorf("neutral + learner's array belongs to %v", got)
	}
}

// TestSessionUse records an op on parameters alone in a session through a
// Use view, so the weight penalty's gradient reaches the parameter while
// the default session is not recording.
func TestSessionUse(t *testing.T) {
	s := autograd.NewSession("")
	w := nd.FromSlice(dev, []float64{1, -2, 3})
	w.AttachGrad(nd.GradWrite)
	s.Record(func() { autograd.Backward(nd.Sum(nd.Square(s.Use(w)))) }) // d/dw Σw² = 2w
	if got := w.Grad().Float64s(); !identical(got, []float64{2, -4, 6}) {
		t.Errorf("gradient %v, want [2 -4 6]", got)
	}
	if autograd.IsRecording() {
		t.Error("the default session records")
	}
}

// TestDefaultSessionTrees opens a learner's Record and a server's
// PredictMode in the default session at once, with a fixed interleaving:
// each goroutine tree sees its own state, a goroutine started with nd.Go
// sees its parent's, and a goroutine of no tree (a plain go statement)
// works in the default state, as a new thread does in PyTorch and MXNet.
// Scopes that interleave inside one tree are still an error.
func TestDefaultSessionTrees(t *testing.T) {
	needGID(t)
	type state struct{ rec, train bool }
	now := func() state { return state{autograd.IsRecording(), autograd.IsTraining()} }
	x := nd.FromSlice(dev, []float32{-1, 2})
	x.AttachGrad(nd.GradWrite)
	inServer, release, serverDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var server, child, orphan state
	var orphanBackErr error
	err := nd.Catch(func() {
		autograd.Record(func() {
			go func() { // a plain goroutine: a tree of its own once it opens a scope
				defer close(serverDone)
				autograd.PredictMode(func() {
					server = now()
					close(inServer)
					<-release
				})
			}()
			<-inServer
			done := make(chan struct{})
			nd.Go(func() { defer close(done); child = now() })
			<-done
			done = make(chan struct{})
			go func() { // a plain goroutine that opens nothing
				defer close(done)
				orphan = now()
				orphanBackErr = nd.Catch(func() { autograd.Backward(nd.Sum(nd.Relu(x))) })
			}()
			<-done
			if got := now(); got != (state{true, true}) {
				t.Errorf("learner with a server open: %+v, want recording in training mode", got)
			}
		})
	})
	close(release)
	<-serverDone
	if err != nil {
		t.Fatalf("a learner's and a server's scopes in the default session: %v", err)
	}
	if server != (state{false, false}) {
		t.Errorf("server: %+v, want predict mode, not recording", server)
	}
	if child != (state{true, true}) {
		t.Errorf("goroutine started with nd.Go: %+v, want its parent's state", child)
	}
	if orphan != (state{false, false}) || orphanBackErr == nil {
		t.Errorf("goroutine of no tree: %+v, Backward through its op: %v; want the default state, nothing recorded", orphan, orphanBackErr)
	}
	if autograd.IsRecording() || autograd.IsTraining() {
		t.Error("the default session's state was not restored")
	}

	// One tree: a goroutine it started with nd.Go opens PredictMode and
	// the Record ends before it — each ran under the other's mode.
	inChild, end, childDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	err = nd.Catch(func() {
		autograd.Record(func() {
			nd.Go(func() {
				defer close(childDone)
				autograd.PredictMode(func() { close(inChild); <-end })
			})
			<-inChild
		})
	})
	close(end)
	<-childDone
	var ne *nd.Error
	if !errors.As(err, &ne) || ne.Kind != nd.ErrSession {
		t.Fatalf("interleaved scopes in one tree: got %v, want an ErrSession", err)
	}
	for _, want := range []string{`session "default"`, "Record(train)", "PredictMode", "same goroutine tree"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// Two workers of one tree: the same kind of scope, the first opened
	// ending first.
	in1, end1, done1 := make(chan struct{}), make(chan struct{}), make(chan struct{})
	in2, end2 := make(chan struct{}), make(chan struct{})
	var errs [2]error
	var wg sync.WaitGroup
	wg.Add(2)
	sc := nd.NewScope() // the test goroutine's tree, which both workers join
	defer sc.Close()
	nd.Go(func() {
		defer wg.Done()
		defer close(done1)
		errs[0] = nd.Catch(func() { autograd.Record(func() { close(in1); <-end1 }) })
	})
	nd.Go(func() {
		defer wg.Done()
		<-in1
		errs[1] = nd.Catch(func() { autograd.Record(func() { close(in2); <-end2 }) })
	})
	<-in2
	close(end1) // the first worker's Record ends while the second's is open
	<-done1
	close(end2)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("same-kind scopes of one tree: %v, %v", errs[0], errs[1])
	}
}

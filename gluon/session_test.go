package gluon_test

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// sessionNet is a small classifier with dropout and batch norm, with all
// shapes given so that nothing is initialised during a forward pass.
func sessionNet(devs []ctx.Context) (gluon.Block, *gluon.ParamDict) {
	net := nn.NewSequential(
		nn.NewDense(16, nn.DenseOpts{Act: "relu", InUnits: 4}),
		nn.NewDropout(0.3),
		nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 16}),
		nn.NewDense(3, nn.DenseOpts{InUnits: 16}),
	)
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Uniform{Scale: 0.5}, devs, false); err != nil {
		panic(err)
	}
	return net, params
}

// batchIn returns batch i (8 samples, 4 features, labels 0..2) made by s.
func batchIn(s *nd.Session, i int) (x, y *nd.NDArray) {
	xv, yv := make([]float32, 8*4), make([]int64, 8)
	for j := range xv {
		xv[j] = float32(math.Sin(float64(i*17 + j)))
	}
	for j := range yv {
		yv[j] = int64((i + j) % 3)
	}
	return s.FromSlice(ctx.CPU(0), xv, 8, 4), s.FromSlice(ctx.CPU(0), yv)
}

// trainIn trains sessionNet over two CPU contexts for steps steps in s —
// SplitAndLoad, ForEachDevice, a device kvstore, SGD with momentum — and
// returns the final parameters. Every loss must belong to s: the
// per-device goroutines inherit the session through the arrays.
func trainIn(t *testing.T, s *nd.Session, steps int) []float32 {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	net, params := sessionNet(devs)
	trainer, err := gluon.NewTrainer(params, &optimizer.SGD{Hyper: optimizer.Hyper{LR: 0.1}, Momentum: 0.9}, "device", gluon.TrainerOpts{})
	if err != nil {
		t.Fatal(err)
	}
	lossFn := loss.NewSoftmaxCrossEntropy()
	var foreign atomic.Int64
	for i := range steps {
		sc := s.NewScope()
		x, y := batchIn(s, i)
		xs, _ := gluon.SplitAndLoad(x, devs, true)
		ys, _ := gluon.SplitAndLoad(y, devs, true)
		s.Record(func() {
			err = gluon.ForEachDevice(devs, func(d int, _ ctx.Context) error {
				l := lossFn.Forward(net.Forward(xs[d]), ys[d])
				if l.Session() != s {
					foreign.Add(1)
				}
				autograd.Backward(l)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := trainer.Step(8); err != nil {
			t.Fatal(err)
		}
		sc.Close()
	}
	if n := foreign.Load(); n != 0 {
		t.Errorf("%d per-device losses did not belong to %v", n, s)
	}
	var out []float32
	for _, p := range params.List() {
		out = append(out, p.Data(ctx.CPU(1)).Float32s()...)
	}
	return out
}

// TestSessionTrainingBesideServing trains over two contexts in one
// goroutine tree while another predicts with its own network, and checks
// that training gives the parameters it gives alone and that every
// prediction equals the one made alone — with the learner in the default
// session and the server in its own, the other way round, and both in the
// default session (each a goroutine tree of its own).
func TestSessionTrainingBesideServing(t *testing.T) {
	const steps, requests = 25, 8
	for _, tc := range []struct {
		name               string
		trainOwn, serveOwn bool
	}{
		{"train-default/serve-session", false, true},
		{"train-session/serve-default", true, false},
		{"train-default/serve-default", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pick := func(own bool, name string) *nd.Session {
				if own {
					return autograd.NewSession(name)
				}
				return autograd.Default()
			}
			nd.Seed(5)
			want := trainIn(t, pick(tc.trainOwn, "learner"), steps)

			server := pick(tc.serveOwn, "server")
			snet, _ := sessionNet([]ctx.Context{ctx.CPU(0)})
			predict := func(i int) []float32 {
				sc := server.NewScope()
				defer sc.Close()
				x, _ := batchIn(server, i)
				var y []float32
				server.PredictMode(func() { y = snet.Forward(x).Float32s() })
				return y
			}
			alone := make([][]float32, requests)
			for i := range alone {
				alone[i] = predict(i)
			}

			nd.Seed(5)
			learner := pick(tc.trainOwn, "learner")
			var done atomic.Bool
			var served, wrong atomic.Int64
			var got []float32
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer done.Store(true)
				got = trainIn(t, learner, steps)
			}()
			go func() {
				defer wg.Done()
				for i := 0; !done.Load() || i < requests; i++ {
					if !equalF32(predict(i%requests), alone[i%requests]) {
						wrong.Add(1)
					}
					served.Add(1)
				}
			}()
			wg.Wait()
			if !equalF32(got, want) {
				t.Errorf("parameters trained beside a server differ from those trained alone")
			}
			if wrong.Load() != 0 {
				t.Errorf("%d of %d predictions made beside training differ from those made alone", wrong.Load(), served.Load())
			}
		})
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

package nn_test

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// sessionNet is a Dense layer whose weight is reparameterised by kind
// ("plain", "weight" or "spectral"), built the same on every call.
type sessionNet struct {
	d      *nn.Dense
	sn     *nn.SpectralNorm
	leaves []*gluon.Parameter // the parameters that take gradients
}

func newSessionNet(t *testing.T, kind string, devs ...ctx.Context) *sessionNet {
	t.Helper()
	nd.Seed(3)
	n := &sessionNet{d: nn.NewDense(3, nn.DenseOpts{InUnits: 4, Act: "tanh"})}
	switch kind {
	case "weight":
		wn := nn.ApplyWeightNorm(n.d, nn.WeightNormOpts{})
		n.leaves = []*gluon.Parameter{wn.V, wn.G}
	case "spectral":
		n.sn = nn.ApplySpectralNorm(n.d, nn.SpectralNormOpts{})
		n.leaves = []*gluon.Parameter{n.sn.Orig}
	default:
		n.leaves = []*gluon.Parameter{n.d.Weight}
	}
	n.leaves = append(n.leaves, n.d.Bias)
	initNet(t, n.d, initializer.Xavier{}, nd.Float64, devs...)
	return n
}

var sessionX = []float64{1, -2, 3, 0.5, -1, 2, 0.25, 4}

// TestNormsFollowInputSession: a weight- or spectrally normalised layer
// computes its weight in the session of its input, like Dropout and
// BatchNorm take their mode from it. On a goroutine that works on the
// arrays of a session of its own (a plain go statement inside s.Record,
// as nd.Session's documentation describes), the derived weight's ops used
// to run in the default session, unrecorded: weight_v (or weight_orig)
// got no gradient. Every way of running the pass must give the gradients
// (and the power method's U) of the same pass on the default session.
func TestNormsFollowInputSession(t *testing.T) {
	runs := []struct {
		name string
		run  func(t *testing.T, net gluon.Block)
	}{
		{"session-goroutine", func(t *testing.T, net gluon.Block) {
			s := autograd.NewSession("learner")
			x := s.FromSlice(cpu0, sessionX, 2, 4)
			var err error
			s.Record(func() {
				done := make(chan struct{})
				go func() { // a plain goroutine: it works in s through x
					defer close(done)
					err = nd.Catch(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(x)))) })
				}()
				<-done
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"session-record-same-goroutine", func(t *testing.T, net gluon.Block) {
			s := autograd.NewSession("learner")
			x := s.FromSlice(cpu0, sessionX, 2, 4)
			s.Record(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(x)))) })
		}},
		{"session-foreachdevice", func(t *testing.T, net gluon.Block) {
			s := autograd.NewSession("learner")
			x := nd.FromSlice(cpu0, sessionX, 2, 4)
			var err error
			s.Record(func() {
				err = gluon.ForEachDevice([]ctx.Context{cpu0}, func(int, ctx.Context) error {
					autograd.Backward(nd.Sum(nd.Square(net.Forward(x))))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, kind := range []string{"plain", "weight", "spectral"} {
		for _, hybrid := range []bool{false, true} {
			for _, r := range runs {
				name := kind + "/" + r.name
				if hybrid {
					name += "/hybridized"
				}
				t.Run(name, func(t *testing.T) {
					want := newSessionNet(t, kind)
					autograd.Record(func() {
						autograd.Backward(nd.Sum(nd.Square(want.d.Forward(nd.FromSlice(cpu0, sessionX, 2, 4)))))
					})
					got := newSessionNet(t, kind)
					var net gluon.Block = got.d
					var h *gluon.HybridBlock
					if hybrid {
						h = gluon.Hybridize(got.d, gluon.HybridOpts{})
						forward(h, nd.FromSlice(cpu0, sessionX, 2, 4)) // a predict-mode call: U stays
						net = h
					}
					r.run(t, net)
					if h != nil && nd.TraceSupported {
						if st := h.Stats(); st.Eager != 0 || st.Traces != 2 {
							t.Errorf("hybridized calls %+v, want 2 traces", st)
						}
					}
					for i, p := range got.leaves {
						g := p.Grad(cpu0)
						if nd.Sum(nd.Abs(g)).Scalar() == 0 {
							t.Fatalf("%s: no gradient", p.Name())
						}
						closeSlice(t, p.Name()+" gradient", g.Float64s(), want.leaves[i].Grad(cpu0).Float64s(), 1e-12)
					}
					if got.sn != nil {
						closeSlice(t, "U after the pass", got.sn.U.Data(cpu0).Float64s(), want.sn.U.Data(cpu0).Float64s(), 1e-12)
					}
				})
			}
		}
	}
}

// TestSpectralNormModeFromInput: the power method runs when the input's
// session trains, wherever the pass runs, and not when it predicts, even
// on a goroutine whose default session trains (it used to ask the
// parameter's session: the calling goroutine's default state).
func TestSpectralNormModeFromInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		run   func(d *nn.Dense)
		moves bool
	}{
		{"training-session-on-plain-goroutine", func(d *nn.Dense) {
			s := autograd.NewSession("learner")
			x := s.FromSlice(cpu0, sessionX, 2, 4)
			s.Record(func() {
				done := make(chan struct{})
				go func() { defer close(done); d.Forward(x) }()
				<-done
			})
		}, true},
		{"predict-session-on-plain-goroutine", func(d *nn.Dense) {
			e := autograd.NewSession("eval")
			x := e.FromSlice(cpu0, sessionX, 2, 4)
			autograd.Record(func() {
				done := make(chan struct{})
				go func() { defer close(done); d.Forward(x) }()
				<-done
			})
		}, false},
		{"predict-session-on-training-goroutine", func(d *nn.Dense) {
			e := autograd.NewSession("eval")
			x := e.FromSlice(cpu0, sessionX, 2, 4)
			autograd.Record(func() { d.Forward(x) })
		}, false},
		{"default-session-training", func(d *nn.Dense) {
			autograd.Record(func() { d.Forward(nd.FromSlice(cpu0, sessionX, 2, 4)) })
		}, true},
		{"default-session-predict", func(d *nn.Dense) {
			autograd.Pause(func() { d.Forward(nd.FromSlice(cpu0, sessionX, 2, 4)) })
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newSessionNet(t, "spectral")
			u0 := n.sn.U.Data(cpu0).Float64s()
			c.run(n.d)
			u1 := n.sn.U.Data(cpu0).Float64s()
			moved := false
			for i := range u0 {
				moved = moved || u0[i] != u1[i]
			}
			if moved != c.moves {
				t.Errorf("U moved: %v, want %v", moved, c.moves)
			}
		})
	}
}

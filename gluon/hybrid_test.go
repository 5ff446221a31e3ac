package gluon_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// TestHybridizeTrainsLikeEager trains networks for a few steps eagerly and
// hybridized, on one context and on two, and requires every parameter to
// end bit for bit the same: forward, backward (through the replayed
// backward kernels), dropout masks and the trainer's update.
func TestHybridizeTrainsLikeEager(t *testing.T) {
	one, two := []ctx.Context{ctx.CPU(0)}, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	cases := []struct {
		name  string
		net   func() gluon.Block
		opt   func() optimizer.Optimizer
		shape []int
		devs  []ctx.Context
	}{
		{"lenet", func() gluon.Block { return modelzoo.LeNet() }, func() optimizer.Optimizer { return optimizer.NewSGD(0.05) }, []int{8, 1, 28, 28}, one},
		{"lenet-2ctx", func() gluon.Block { return modelzoo.LeNet() }, func() optimizer.Optimizer { return optimizer.NewSGD(0.05) }, []int{8, 1, 28, 28}, two},
		{"mlp", func() gluon.Block { return modelzoo.MLP(10, 32, 16) }, func() optimizer.Optimizer { return optimizer.NewAdam(1e-3) }, []int{8, 1, 28, 28}, one},
		{"keras-cifar-dropout", func() gluon.Block { return modelzoo.KerasCIFARCNN() }, func() optimizer.Optimizer { return optimizer.NewRMSProp(1e-3) }, []int{4, 3, 32, 32}, two},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(hybrid bool) (map[string][]float32, gluon.HybridStats) {
				var net gluon.Block = c.net()
				params := gluon.CollectParams(net)
				var h *gluon.HybridBlock
				if hybrid {
					h = gluon.Hybridize(net, gluon.HybridOpts{})
					net = h
				}
				step, err := traintest.NewStep(net, c.opt(), c.shape, c.devs)
				if err != nil {
					t.Fatal(err)
				}
				for range 4 {
					if err := step(); err != nil {
						t.Fatal(err)
					}
				}
				snap, err := traintest.Snapshot(params)
				if err != nil {
					t.Fatal(err)
				}
				var st gluon.HybridStats
				if h != nil {
					st = h.Stats()
				}
				return snap, st
			}
			want, _ := run(false)
			got, st := run(true)
			// One trace per context: the Trainer packing the parameters
			// into its flat buffers after the first step does not make the
			// graphs stale (calls bind the parameters where they are).
			if st.Replays == 0 || st.Traces != len(c.devs) {
				t.Fatalf("stats %+v: want one trace per context, and replays", st)
			}
			for name, w := range want {
				g := got[name]
				for i := range w {
					if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
						t.Fatalf("%s[%d] = %v hybridized, %v eager", name, i, g[i], w[i])
					}
				}
			}
		})
	}
}

// TestHybridizeAutocast trains LeNet under float16 and bfloat16 autocast
// eagerly and hybridized: the traced casts replay to the same parameters,
// bit for bit.
func TestHybridizeAutocast(t *testing.T) {
	for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
		run := func(hybrid bool) map[string][]float32 {
			defer nd.EnterAutocast(dt)()
			var net gluon.Block = modelzoo.LeNet()
			params := gluon.CollectParams(net)
			if hybrid {
				net = gluon.Hybridize(net, gluon.HybridOpts{})
			}
			step, err := traintest.NewStep(net, optimizer.NewSGD(0.05), []int{8, 1, 28, 28}, []ctx.Context{ctx.CPU(0)})
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			if h, ok := net.(*gluon.HybridBlock); ok && h.Stats().Replays == 0 {
				t.Fatalf("%v: no replays: %+v", dt, h.Stats())
			}
			s, err := traintest.Snapshot(params)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		want, got := run(false), run(true)
		for k, w := range want {
			for i := range w {
				if math.Float32bits(w[i]) != math.Float32bits(got[k][i]) {
					t.Fatalf("%v: %s[%d] = %v hybridized, %v eager", dt, k, i, got[k][i], w[i])
				}
			}
		}
	}
}

package nn_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// bnLayer is what the test needs of BatchNorm and SyncBatchNorm.
type bnLayer interface {
	gluon.Block
	params() []*gluon.Parameter
}

type plainBN struct{ *nn.BatchNorm }

func (b plainBN) params() []*gluon.Parameter {
	return []*gluon.Parameter{b.Gamma, b.Beta, b.RunningMean, b.RunningVar}
}

type syncBN struct{ *nn.SyncBatchNorm }

func (b syncBN) params() []*gluon.Parameter {
	return []*gluon.Parameter{b.Gamma, b.Beta, b.RunningMean, b.RunningVar}
}

// runBN runs two training passes of layer over the whole batch split over
// devs (traintest.BNPasses) and returns the second's results.
func runBN(t *testing.T, layer bnLayer, devs []ctx.Context, x, w, gamma, beta []float64, shape []int) (y, dx, dg, db []float64, runs [][]float64) {
	r := traintest.BNPasses(t, layer, layer.params(), devs, x, w, gamma, beta, shape, 0, shape[0])
	return r.Y, r.DX, r.DGamma, r.DBeta, r.Runs
}

// syncBNCase is the batch the SyncBatchNorm tests normalise: its shape
// (8 samples, 3 channels), input, output-gradient weights, gamma, beta
// and the layer's options.
func syncBNCase() (shape []int, x, w, gamma, beta []float64, o nn.BatchNormOpts) {
	shape = []int{8, 3, 2, 2}
	size := 8 * 3 * 2 * 2
	x, w = make([]float64, size), make([]float64, size)
	for i := range x {
		x[i] = math.Sin(float64(i)*0.7) + 0.3*float64(i%5)
		w[i] = math.Cos(float64(i) * 1.3)
	}
	return shape, x, w, []float64{1.5, -0.5, 0.8}, []float64{0.1, 0.2, -0.3}, nn.BatchNormOpts{Momentum: new(0.8), Epsilon: new(1e-3)}
}

// TestSyncBatchNormMatchesOneContext: SyncBatchNorm on 4 contexts with 2
// samples each gives the output, input gradient, gamma and beta gradients
// and running statistics of BatchNorm on one context over all 8 samples.
func TestSyncBatchNormMatchesOneContext(t *testing.T) {
	shape, x, w, gamma, beta, o := syncBNCase()
	one := []ctx.Context{ctx.CPU(0)}
	four := []ctx.Context{ctx.CPU(0), ctx.CPU(1), ctx.CPU(2), ctx.CPU(3)}
	y1, dx1, dg1, db1, run1 := runBN(t, plainBN{nn.NewBatchNorm(o)}, one, x, w, gamma, beta, shape)
	y4, dx4, dg4, db4, run4 := runBN(t, syncBN{nn.NewSyncBatchNorm(o)}, four, x, w, gamma, beta, shape)
	check := func(name string, want, got []float64) {
		t.Helper()
		if len(want) != len(got) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		for i := range want {
			if d := math.Abs(want[i] - got[i]); d > 1e-10*(1+math.Abs(want[i])) {
				t.Fatalf("%s[%d] = %.12g, one context %.12g", name, i, got[i], want[i])
			}
		}
	}
	check("output", y1, y4)
	check("input gradient", dx1, dx4)
	check("gamma gradient", dg1, dg4)
	check("beta gradient", db1, db4)
	for d := range four {
		check("running mean", run1[0], run4[2*d])
		check("running variance", run1[1], run4[2*d+1])
	}
	// Plain BatchNorm on 4 contexts normalises each part alone: different.
	y4p, _, _, _, _ := runBN(t, plainBN{nn.NewBatchNorm(o)}, four, x, w, gamma, beta, shape)
	same := true
	for i := range y1 {
		same = same && math.Abs(y1[i]-y4p[i]) < 1e-6
	}
	if same {
		t.Fatal("per-context BatchNorm matched the whole batch's: the test data cannot tell the layers apart")
	}
}

// TestSyncBatchNormMissingContext: a context that does not run the layer
// makes the others fail with an error that says why, after SyncTimeout.
func TestSyncBatchNormMissingContext(t *testing.T) {
	old := nn.SyncTimeout
	nn.SyncTimeout = 50e6 // 50ms
	defer func() { nn.SyncTimeout = old }()
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	b := nn.NewSyncBatchNorm(nn.BatchNormOpts{InChannels: 2})
	if err := gluon.CollectParams(b).Initialize(initializer.Zero(), devs, false); err != nil {
		t.Fatal(err)
	}
	var err error
	nd.DefaultSession().Record(func() {
		err = nd.Catch(func() { b.Forward(nd.Ones(ctx.CPU(0), nd.Float32, 2, 2)) })
	})
	if err == nil {
		t.Fatal("SyncBatchNorm with one of two contexts running did not fail")
	}
	t.Log(err)
	// The contexts are out of step now: the layer fails at once, on both.
	for _, d := range devs {
		start := time.Now()
		nd.DefaultSession().Record(func() {
			err = nd.Catch(func() { b.Forward(nd.Ones(d, nd.Float32, 2, 2)) })
		})
		if err == nil || !strings.Contains(err.Error(), "until Reset") || time.Since(start) > 40*time.Millisecond {
			t.Fatalf("after a timeout, on %v: %v after %v, want the earlier failure at once", d, err, time.Since(start))
		}
	}
	// After Reset both contexts in step work again (with the default
	// timeout: 50ms is too short for a loaded machine under -race).
	nn.SyncTimeout = old
	b.Reset()
	nd.DefaultSession().Record(func() {
		err = gluon.ForEachDevice(devs, func(_ int, d ctx.Context) error {
			b.Forward(nd.FromSlice(d, []float32{1, 2, 3, 5}, 2, 2))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("after Reset: %v", err)
	}
}

// syncBNReluFwd runs SyncBatchNorm's ForwardRelu.
type syncBNReluFwd struct{ *nn.SyncBatchNorm }

func (b syncBNReluFwd) Forward(x *nd.NDArray) *nd.NDArray { return b.ForwardRelu(x) }

// syncBNThenRelu runs Relu(SyncBatchNorm.Forward(x)).
type syncBNThenRelu struct{ *nn.SyncBatchNorm }

func (b syncBNThenRelu) Forward(x *nd.NDArray) *nd.NDArray {
	return nd.Relu(b.SyncBatchNorm.Forward(x))
}

// TestSyncBatchNormForwardRelu checks that SyncBatchNorm's ForwardRelu
// exchanges the statistics as Forward does (the embedded BatchNorm's
// would normalise each context alone): the outputs, gradients and running
// statistics of Relu(Forward) on four contexts.
func TestSyncBatchNormForwardRelu(t *testing.T) {
	shape, x, w, gamma, beta, o := syncBNCase()
	four := []ctx.Context{ctx.CPU(0), ctx.CPU(1), ctx.CPU(2), ctx.CPU(3)}
	a, b := nn.NewSyncBatchNorm(o), nn.NewSyncBatchNorm(o)
	want := traintest.BNPasses(t, syncBNThenRelu{a}, syncBN{a}.params(), four, x, w, gamma, beta, shape, 0, shape[0])
	got := traintest.BNPasses(t, syncBNReluFwd{b}, syncBN{b}.params(), four, x, w, gamma, beta, shape, 0, shape[0])
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"y", got.Y, want.Y}, {"dx", got.DX, want.DX}, {"dgamma", got.DGamma, want.DGamma}, {"running mean", got.Runs[0], want.Runs[0]}} {
		for i := range c.want {
			if c.got[i] != c.want[i] {
				t.Fatalf("%s[%d]: ForwardRelu %v, Relu(Forward) %v", c.name, i, c.got[i], c.want[i])
			}
		}
	}
}

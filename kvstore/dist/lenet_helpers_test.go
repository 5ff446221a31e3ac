//go:build mpi

package dist_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/amp"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/nd"
)

// globalBatch is the number of samples per step over all workers and
// devices in the LeNet runs.
const globalBatch = 32

// lenetJob describes one LeNet training run of the equivalence tests: this
// process's part of a job of size workers.
type lenetJob struct {
	devices    int     // CPU contexts in this process
	kv         string  // kvstore kind
	rank, size int     // this worker and the number of workers
	first      int     // index of the first step (to resume)
	steps      int     // steps to run
	momentum   float64 // SGD momentum
	onKV       bool    // update on the kvstore
	seed       uint64  // nd seed for the initial parameters
	resumeFrom string  // checkpoint directory to resume from ("" for none)
	saveTo     string  // checkpoint directory rank 0 writes at the end ("" for none)
	outDir     string  // every rank writes its final parameters here ("" for none)
	die        int     // rank `die` calls dieHook before step dieAt (-1: none)
	dieAt      int
	dieHook    func()
	deferred   bool   // leave the shapes deferred until the first step
	expectErr  string // step errAt must fail with an error containing this
	errAt      int
	skip       bool // rank `die` runs no backward pass before step dieAt (instead of dieHook)
	ignore     bool // StepIgnoreStale instead of Step
	bucket     int  // TrainerOpts.BucketBytes and FirstBucketBytes (0: default)
	twice      bool // two backward passes before each step (the second overwrites)
	overflow   bool // every rank has a GradScaler; rank `die` feeds an Inf at step dieAt
	// The first parameter is frozen after the backward pass of step
	// freezeAt and unfrozen before that of step thawAt (freezeAt 0:
	// never), on every rank, or on freezeRank alone when it is >= 0.
	freezeAt, thawAt, freezeRank int
	frozen                       bool // the first parameter is frozen from the start, on every rank
	thawAfter                    bool // unfreeze after the backward pass of step thawAt (not before)
	short                        bool // rank `die` trains on one sample at step dieAt (a stale context)
	// lazyWrite: the shapes stay deferred until after NewTrainer, then rank
	// 0 alone writes the frozen first parameter (a backbone it loaded),
	// and no worker calls Init.
	lazyWrite bool
	// late: a Dense layer on the input, frozen and not initialised at the
	// first use, is initialised (seeded by rank) and unfrozen before step
	// late, followed by Trainer.Init.
	late int
	// unused: a Dense layer that trains but that no forward pass uses, so
	// its gradient is stale on every rank at every step; with retry, each
	// step first calls Step, which must fail on it, then StepIgnoreStale.
	unused, retry bool
}

// freezes reports whether this rank freezes a parameter during the job.
func (j lenetJob) freezes() bool {
	return j.freezeAt > 0 && (j.freezeRank < 0 || j.freezeRank == j.rank)
}

// stepData returns the global batch of step s: images and labels drawn
// from a generator seeded by s, the same in every process.
func stepData(s int) ([]float32, []float32) {
	r := rand.New(rand.NewPCG(7, uint64(s)))
	x := make([]float32, globalBatch*28*28)
	for i := range x {
		x[i] = r.Float32()
	}
	y := make([]float32, globalBatch)
	for i := range y {
		y[i] = float32(r.IntN(10))
	}
	return x, y
}

// trainLeNet runs j and returns the final parameters by name.
func trainLeNet(t testing.TB, j lenetJob) map[string][]float32 {
	t.Helper()
	nd.Seed(j.seed)
	devs := make([]ctx.Context, j.devices)
	for i := range devs {
		devs[i] = ctx.CPU(i)
	}
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	if !j.deferred {
		// Materialise the deferred shapes with one forward pass.
		autograd.Pause(func() { net.Forward(nd.Zeros(devs[0], nd.Float32, 1, 1, 28, 28)).Release() })
	}
	// Only rank 0 reads the parameters; the Trainer broadcasts them.
	if j.resumeFrom != "" && j.rank == 0 {
		if err := params.Load(filepath.Join(j.resumeFrom, "params.safetensors"), devs, gluon.LoadOpts{}); err != nil {
			t.Fatal(err)
		}
	}
	if j.frozen {
		params.List()[0].SetGradReq(nd.GradNull)
	}
	var lw *traintest.LateNet
	var trainNet gluon.Block = net
	trParams := params
	if j.late > 0 {
		lw = traintest.NewLateNet(net, false)
		trParams, trainNet = gluon.CollectParams(lw), lw
		gluon.CollectParams(lw.Late).SetGradReq(nd.GradNull)
	}
	if j.unused {
		lw = traintest.NewLateNet(net, false)
		if err := gluon.CollectParams(lw.Late).Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		trParams, trainNet = gluon.CollectParams(lw), lw
	}
	opt := optimizer.NewSGD(0.1)
	opt.Momentum = j.momentum
	tr, err := gluon.NewTrainer(trParams, opt, j.kv, gluon.TrainerOpts{UpdateOnKVStore: j.onKV, BucketBytes: j.bucket, FirstBucketBytes: j.bucket})
	if err != nil {
		t.Fatal(err)
	}
	if j.lazyWrite {
		autograd.Pause(func() { net.Forward(nd.Zeros(devs[0], nd.Float32, 1, 1, 28, 28)).Release() })
		if j.rank == 0 {
			p := params.List()[0]
			p.SetData(nd.MulScalar(p.Data(devs[0]), 2))
		}
	}
	if j.overflow {
		if err := tr.SetGradScaler(amp.NewLossScaler(amp.ScalerOpts{DType: nd.BFloat16})); err != nil {
			t.Fatal(err)
		}
	}
	if j.resumeFrom != "" {
		if err := tr.LoadStates(filepath.Join(j.resumeFrom, "trainer.states")); err != nil {
			t.Fatal(err)
		}
	}
	lo, hi := j.rank*globalBatch/j.size, (j.rank+1)*globalBatch/j.size
	for s := j.first; s < j.first+j.steps; s++ {
		skip := j.rank == j.die && s == j.dieAt
		lo, hi := lo, hi
		if skip && j.short {
			hi = lo + 1
		}
		if skip && !j.skip && !j.overflow && !j.short {
			j.dieHook()
		}
		scope := nd.NewScope()
		xs, ys := stepData(s)
		if skip && j.overflow {
			xs[lo*28*28] = float32(math.Inf(1)) // this rank's gradients become NaN
		}
		x := nd.FromSlice(ctx.CPU(0), xs[lo*28*28:hi*28*28], hi-lo, 1, 28, 28)
		y := nd.FromSlice(ctx.CPU(0), ys[lo:hi])
		if j.late > 0 && s == j.late {
			nd.Seed(j.seed + 77)
			lp := gluon.CollectParams(lw.Late)
			if err := lp.Initialize(initializer.Xavier{}, devs, false); err != nil {
				t.Fatal(err)
			}
			lp.SetGradReq(nd.GradWrite)
			lw.Use = true
			if err := tr.Init(); err != nil { // every worker starts it from rank 0's values
				t.Fatal(err)
			}
		}
		if (j.freezes() || j.frozen) && s == j.thawAt && !j.thawAfter {
			params.List()[0].SetGradReq(nd.GradWrite)
		}
		if !(skip && j.skip) {
			for range 1 + b2i(j.twice) {
				if err := traintest.Backward(trainNet, traintest.SoftmaxCE, x, y, devs, !j.short); err != nil {
					t.Fatal(err)
				}
			}
		}
		if j.freezes() && s == j.freezeAt {
			params.List()[0].SetGradReq(nd.GradNull)
		}
		if j.frozen && s == j.thawAt && j.thawAfter {
			params.List()[0].SetGradReq(nd.GradWrite)
		}
		switch {
		case j.retry:
			if err = tr.Step(hi - lo); err == nil || !strings.Contains(err.Error(), "stale") {
				t.Fatalf("step %d: Step with a parameter no pass wrote: %v", s, err)
			}
			err = tr.StepIgnoreStale(hi - lo)
		case j.ignore:
			err = tr.StepIgnoreStale(hi - lo)
		default:
			err = tr.Step(hi - lo)
		}
		if j.expectErr != "" && s == j.first+j.errAt {
			if err == nil || !strings.Contains(err.Error(), j.expectErr) {
				t.Fatalf("step %d: got error %v, want one containing %q", s, err, j.expectErr)
			}
			fmt.Printf("rank %d: expected error: %v\n", j.rank, err)
			return nil
		}
		if err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		if j.overflow {
			if skipped := tr.Stats().Skipped; skipped != (s == j.dieAt) {
				t.Fatalf("step %d: skipped %v (rank %d fed an Inf at step %d)", s, skipped, j.die, j.dieAt)
			} else if skipped {
				fmt.Printf("rank %d: skipped step %d\n", j.rank, s)
			}
		}
		scope.Close()
	}
	if ds, ok := tr.KVStore().(*dist.Store); ok && j.freezeAt == 0 && !j.frozen && j.late == 0 && !j.unused {
		// LeNet's ten tensors cost one allreduce per step: one gradient
		// bucket, or (updating on the kvstore) one fusion buffer. Init
		// costs two control exchanges; a step one (the key check and batch
		// sum), and with buckets one more, the bucket check before the
		// first bucket starts during backward.
		st := ds.Stats()
		controls, allreduces := j.steps+2, j.steps
		if !j.onKV {
			controls += j.steps
			ts := tr.Stats()
			allreduces *= ts.Buckets * (1 + b2i(j.twice))
			if (j.bucket == 0 && ts.Buckets != 1) || ts.Overlapped != ts.Buckets {
				t.Errorf("last step: %d buckets, %d summed during backward; want all summed during backward (and 1 bucket by default)", ts.Buckets, ts.Overlapped)
			}
		}
		if st.Allreduces != allreduces || st.Controls != controls {
			t.Errorf("%d steps took %d allreduces and %d control exchanges, want %d and %d", j.steps, st.Allreduces, st.Controls, allreduces, controls)
		}
		// The last bucket of each step's first backward pass starts
		// without background progress; every other start (a second
		// pass's included) has it.
		if want := j.steps * b2i(!j.onKV); st.Foreground != want {
			t.Errorf("%d steps started %d buckets without background progress, want %d", j.steps, st.Foreground, want)
		}
	}
	if j.saveTo != "" && j.rank == 0 {
		if err := params.Save(filepath.Join(j.saveTo, "params.safetensors")); err != nil {
			t.Fatal(err)
		}
		if err := tr.SaveStates(filepath.Join(j.saveTo, "trainer.states")); err != nil {
			t.Fatal(err)
		}
	}
	if j.outDir != "" {
		if err := params.Save(rankFile(j.outDir, j.rank)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := traintest.Snapshot(params)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// relDiff is ‖a−b‖ / ‖a‖.
var relDiff = traintest.RelDiff

// compare fails t when any parameter of got differs from want by more than
// tol relative, and returns the largest difference.
func compare(t testing.TB, what string, want, got map[string][]float32, tol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d parameters, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for name, w := range want {
		g, ok := got[name]
		if !ok || len(g) != len(w) {
			t.Fatalf("%s: parameter %s missing or resized", what, name)
		}
		d := relDiff(w, g)
		worst = max(worst, d)
		if d > tol {
			t.Errorf("%s: %s differs by %.3g relative (tolerance %g)", what, name, d, tol)
		}
	}
	return worst
}

// loadParams reads a parameter file written by gluon's Save.
func loadParams(t testing.TB, path string) map[string][]float32 {
	t.Helper()
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Load(path, []ctx.Context{ctx.CPU(0)}, gluon.LoadOpts{}); err != nil {
		t.Fatal(err)
	}
	out := map[string][]float32{}
	for _, name := range params.Names() {
		out[name] = params.Get(name).ListData()[0].Float32s()
	}
	return out
}

func rankFile(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("rank%d.safetensors", rank))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

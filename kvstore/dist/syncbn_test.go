//go:build mpi

package dist_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/kvstore/dist"
	"github.com/goluon/goluon/kvstore/mpi"
	"github.com/goluon/goluon/kvstore/mpi/mpitest"
)

// TestSyncBatchNormAcrossWorkers: SyncBatchNorm in 2 processes × 2
// contexts normalises, differentiates and updates its running statistics
// as BatchNorm does on one context over the whole batch.
func TestSyncBatchNormAcrossWorkers(t *testing.T) {
	mpitest.Run(t, 2, "TestSyncBatchNormWorker", nil).Check(t, 2, "TestSyncBatchNormWorker")
}

// bnStep runs two training passes of layer (traintest.BNPasses) over rows
// lo..hi of x, split over devs, with gamma 1+0.3c and beta 0.1c−0.2.
func bnStep(t *testing.T, layer gluon.Block, ps []*gluon.Parameter, devs []ctx.Context, x, w []float64, shape []int, lo, hi int) (y, dx, dg, db []float64, runs [][]float64) {
	t.Helper()
	c := shape[1]
	gamma, beta := make([]float64, c), make([]float64, c)
	for i := range gamma {
		gamma[i], beta[i] = 1+0.3*float64(i), 0.1*float64(i)-0.2
	}
	r := traintest.BNPasses(t, layer, ps, devs, x, w, gamma, beta, shape, lo, hi)
	return r.Y, r.DX, r.DGamma, r.DBeta, r.Runs
}

func TestSyncBatchNormWorker(t *testing.T) {
	if !mpitest.Worker() {
		t.Skip("runs under mpirun, launched by TestSyncBatchNormAcrossWorkers")
	}
	defer dist.Finalize()
	comm, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	rank := comm.Rank()
	shape := []int{8, 3, 2, 2}
	x, w := make([]float64, 8*12), make([]float64, 8*12)
	for i := range x {
		x[i] = math.Sin(float64(i)*0.7) + 0.3*float64(i%5)
		w[i] = math.Cos(float64(i) * 1.3)
	}
	o := nn.BatchNormOpts{Momentum: new(0.8), Epsilon: new(1e-3)}
	ref := nn.NewBatchNorm(o)
	// The reference runs alone in this process: no exchange.
	y1, dx1, dg1, db1, run1 := bnStep(t, ref, []*gluon.Parameter{ref.Gamma, ref.Beta, ref.RunningMean, ref.RunningVar}, []ctx.Context{ctx.CPU(0)}, x, w, shape, 0, 8)
	sb := nn.NewSyncBatchNorm(o)
	lo, hi := 4*rank, 4*rank+4
	y, dx, dg, db, runs := bnStep(t, sb, []*gluon.Parameter{sb.Gamma, sb.Beta, sb.RunningMean, sb.RunningVar}, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, x, w, shape, lo, hi)
	// gamma's and beta's gradients: this process's part, summed over both.
	b, err := mpi.Alloc(8 * 6)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	copy(b.Float64s(), append(append([]float64{}, dg...), db...))
	if err := comm.Allreduce(b, mpi.Float64, 6, mpi.Sum); err != nil {
		t.Fatal(err)
	}
	dg, db = b.Float64s()[:3], b.Float64s()[3:6]
	check := func(name string, want, got []float64) {
		t.Helper()
		if len(want) != len(got) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		for i := range want {
			if d := math.Abs(want[i] - got[i]); d > 1e-10*(1+math.Abs(want[i])) {
				t.Fatalf("rank %d: %s[%d] = %.12g, one context %.12g", rank, name, i, got[i], want[i])
			}
		}
	}
	row := 12
	check("output", y1[lo*row:hi*row], y)
	check("input gradient", dx1[lo*row:hi*row], dx)
	check("gamma gradient", dg1, dg)
	check("beta gradient", db1, db)
	for d := range 2 {
		check("running mean", run1[0], runs[2*d])
		check("running variance", run1[1], runs[2*d+1])
	}
	// ProcessLocal normalises each process's half alone: different.
	pl := nn.NewSyncBatchNorm(o)
	pl.ProcessLocal = true
	yl, _, _, _, _ := bnStep(t, pl, []*gluon.Parameter{pl.Gamma, pl.Beta, pl.RunningMean, pl.RunningVar}, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, x, w, shape, lo, hi)
	same := true
	for i := range yl {
		same = same && math.Abs(yl[i]-y[i]) < 1e-6
	}
	if same {
		t.Fatal("the process-local statistics matched the global ones: the data cannot tell them apart")
	}
}

package traintest

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// BNResult is what BNPasses returns: the output and input gradient of the
// rows run here (in order), gamma's and beta's gradients summed over the
// contexts, and each context's running mean and variance.
type BNResult struct {
	Y, DX, DGamma, DBeta []float64
	Runs                 [][]float64 // per context: mean, then variance
}

// BNPasses initialises a batch-norm layer whose parameters are ps (gamma,
// beta, running mean, running variance) on devs in float64 with the given
// gamma and beta, and runs two training passes of Σ y·w over rows lo..hi
// of the batch x (shape, rows first), split evenly over devs with each
// context in its own goroutine. It returns the second pass's results.
func BNPasses(t testing.TB, layer gluon.Block, ps []*gluon.Parameter, devs []ctx.Context, x, w, gamma, beta []float64, shape []int, lo, hi int) BNResult {
	t.Helper()
	for _, p := range ps {
		p.SetDType(nd.Float64)
	}
	if err := gluon.CollectParams(layer).Initialize(initializer.Zero(), devs, false); err != nil {
		t.Fatal(err)
	}
	ps[0].SetData(nd.FromSlice(ctx.CPU(0), gamma, len(gamma)))
	ps[1].SetData(nd.FromSlice(ctx.CPU(0), beta, len(beta)))
	row := len(x) / shape[0]
	per := (hi - lo) / len(devs)
	local := append([]int{per}, shape[1:]...)
	var r BNResult
	for range 2 {
		ys, xs := make([]*nd.NDArray, len(devs)), make([]*nd.NDArray, len(devs))
		nd.DefaultSession().Record(func() {
			err := gluon.ForEachDevice(devs, func(i int, d ctx.Context) error {
				a, b := (lo+i*per)*row, (lo+(i+1)*per)*row
				xs[i] = nd.FromSlice(d, x[a:b], local...)
				xs[i].AttachGrad(nd.GradWrite)
				ys[i] = layer.Forward(xs[i])
				nd.Backward([]*nd.NDArray{nd.Sum(nd.Mul(ys[i], nd.FromSlice(d, w[a:b], local...)))}, nil, false)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
		r.Y, r.DX = nil, nil
		for i := range devs {
			r.Y = append(r.Y, ys[i].Float64s()...)
			r.DX = append(r.DX, xs[i].Grad().Float64s()...)
		}
	}
	r.DGamma, r.DBeta = make([]float64, len(gamma)), make([]float64, len(beta))
	for _, d := range devs {
		for i, v := range ps[0].Grad(d).Float64s() {
			r.DGamma[i] += v
		}
		for i, v := range ps[1].Grad(d).Float64s() {
			r.DBeta[i] += v
		}
		r.Runs = append(r.Runs, ps[2].Data(d).Float64s(), ps[3].Data(d).Float64s())
	}
	return r
}

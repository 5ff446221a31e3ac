package gluon_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// TestLBFGSGoldens follows torch.optim.LBFGS step by step
// (testdata/make_goldens_lbfgs.py) on the Rosenbrock function and on a
// linear least-squares problem, with a fixed step and with the strong-Wolfe
// line search: the losses Step returns and the parameters after each
// step, in float64.
func TestLBFGSGoldens(t *testing.T) {
	b, err := os.ReadFile("testdata/goldens_lbfgs.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Name string
			Opts map[string]any
			Init []struct {
				Shape []int
				Data  []float64
			}
			Data  map[string][]float64
			Steps []struct {
				Loss   float64
				Params [][]float64
			}
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	dev := ctx.CPU(0)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var ps []*gluon.Parameter
			for i, in := range c.Init {
				p := gluon.NewParameter(string(rune('a'+i)), in.Shape...)
				p.SetDType(nd.Float64)
				if err := p.Initialize(nil, []ctx.Context{dev}, false); err != nil {
					t.Fatal(err)
				}
				p.SetData(nd.FromSlice(dev, in.Data, in.Shape...))
				ps = append(ps, p)
			}
			o := gluon.LBFGSDefaults()
			for k, v := range c.Opts {
				num, _ := v.(float64)
				switch k {
				case "lr":
					o.LR = num
				case "max_iter":
					o.MaxIter, o.MaxEval = int(num), int(num)*5/4
				case "history_size":
					o.HistorySize = int(num)
				case "tolerance_change":
					o.ToleranceChange = num
				case "tolerance_grad":
					o.ToleranceGrad = num
				case "line_search_fn":
					o.LineSearch = v.(string)
				}
			}
			l, err := gluon.NewLBFGS(ps, o)
			if err != nil {
				t.Fatal(err)
			}
			loss := func() *nd.NDArray {
				x := ps[0].Data(dev)
				a := nd.FromSlice(dev, c.Data["A"], 20, 4)
				y := nd.FromSlice(dev, c.Data["B"], 20, 3)
				pred := nd.Add(nd.MatMul(a, nd.SwapAxes(x, 0, 1)), ps[1].Data(dev))
				return nd.Mean(nd.Square(nd.Sub(pred, y)))
			}
			closure := func() (float64, error) {
				if cs := c.Data["C"]; cs != nil { // ½Σ c·x², as the generator writes it out
					x := ps[0].Data(dev).Float64s()
					f, g := 0.0, make([]float64, len(x))
					for i, v := range x {
						f += 0.5 * cs[i] * v * v
						g[i] = cs[i] * v
					}
					nd.Assign(ps[0].Grad(dev), nd.FromSlice(dev, g, len(g)))
					return f, nil
				}
				if !strings.HasPrefix(c.Name, "least_squares") {
					// The generator's Rosenbrock, value and gradient
					// written out (see make_goldens_lbfgs.py).
					x := ps[0].Data(dev).Float64s()
					a, b := x[0], x[1]
					nd.Assign(ps[0].Grad(dev), nd.FromSlice(dev, []float64{-2*(1-a) - 400*a*(b-a*a), 200 * (b - a*a)}, 2))
					return (1-a)*(1-a) + 100*((b-a*a)*(b-a*a)), nil
				}
				var v *nd.NDArray
				err := nd.Catch(func() {
					autograd.Record(func() { v = loss() })
					autograd.Backward(v)
				})
				if err != nil {
					return 0, err
				}
				return v.Scalar(), nil
			}
			for k, want := range c.Steps {
				got, err := l.Step(closure)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got-want.Loss) > 1e-12*math.Max(1, math.Abs(want.Loss)) {
					t.Fatalf("step %d: loss %v, torch %v", k, got, want.Loss)
				}
				for i, p := range ps {
					v := p.Data(dev).Float64s()
					for j := range v {
						if math.Abs(v[j]-want.Params[i][j]) > 1e-12*math.Max(1, math.Abs(want.Params[i][j])) {
							t.Fatalf("step %d: parameter %d element %d = %v, torch %v", k, i, j, v[j], want.Params[i][j])
						}
					}
				}
			}
		})
	}
}

// TestLBFGSErrors: invalid options, parameters on two contexts, none that
// take a gradient, and a closure's own error are errors of NewLBFGS or
// Step.
func TestLBFGSErrors(t *testing.T) {
	p := gluon.NewParameter("w", 2)
	if err := p.Initialize(nil, []ctx.Context{ctx.CPU(0), ctx.CPU(1)}, false); err != nil {
		t.Fatal(err)
	}
	q := gluon.NewParameter("v", 2)
	if err := q.Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	frozen := gluon.NewParameter("f", 2)
	frozen.SetGradReq(nd.GradNull)
	if err := frozen.Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	bad := gluon.LBFGSDefaults()
	bad.MaxIter = 0
	for name, c := range map[string]struct {
		ps []*gluon.Parameter
		o  gluon.LBFGSOpts
	}{
		"zero value": {[]*gluon.Parameter{q}, gluon.LBFGSOpts{}},
		"max iter":   {[]*gluon.Parameter{q}, bad},
		"contexts":   {[]*gluon.Parameter{p}, gluon.LBFGSDefaults()},
		"frozen":     {[]*gluon.Parameter{frozen}, gluon.LBFGSDefaults()},
	} {
		if _, err := gluon.NewLBFGS(c.ps, c.o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	l, err := gluon.NewLBFGS([]*gluon.Parameter{q}, gluon.LBFGSDefaults())
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := l.Step(func() (float64, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("a failing closure: %v, want its error", err)
	}
}

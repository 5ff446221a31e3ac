package optimizer

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// updates3 applies three updates of o to each of ws (with its gradients
// gs[k][s] at step s) and returns the weights and states after them.
// step(s) is the Param.Step of update s (1-based); Update is s.
func updates3(o Optimizer, names []string, ws [][]float64, gs [][][]float64, step func(s int) int) [][]float64 {
	dev := ctx.CPU(0)
	var out [][]float64
	for k, w0 := range ws {
		w := nd.FromSlice(dev, w0, len(w0))
		st := o.CreateState(w)
		for s := 1; s <= 3; s++ {
			g := nd.FromSlice(dev, gs[k][s-1], len(w0))
			o.Update(Param{Name: names[k], Step: step(s), Update: s, LRMult: 1, WDMult: 1, Rescale: 0.5}, w, g, st)
			g.Release()
		}
		out = append(out, w.Float64s())
		w.Release()
		for _, a := range st {
			out = append(out, a.Float64s())
			a.Release()
		}
	}
	return out
}

// randoms returns n values in [lo, hi) from a fixed seed.
func randoms(seed uint64, n int, lo, hi float64) []float64 {
	nd.Seed(seed)
	a := nd.RandomUniform(ctx.CPU(0), nd.Float64, lo, hi, n)
	defer a.Release()
	return a.Float64s()
}

// TestElementwiseClaims updates two parameters side by side in one flat
// array and one by one: a rule that claims Elementwise must give the same
// weights and states bit for bit (the Trainer's fused buckets rely on it),
// and the rules that take per-parameter norms must not claim it.
func TestElementwiseClaims(t *testing.T) {
	w1, w2 := randoms(1, 7, -1, 1), randoms(2, 5, -3, 3)
	var g1, g2 [][]float64
	for s := range 3 {
		g1 = append(g1, randoms(uint64(10+s), 7, -2, 2))
		g2 = append(g2, randoms(uint64(20+s), 5, -0.5, 0.5))
	}
	flatW := slices.Concat(w1, w2)
	var flatG [][]float64
	for s := range 3 {
		flatG = append(flatG, slices.Concat(g1[s], g2[s]))
	}
	at := func(s int) int { return s }
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			o := r.make()
			o.Hyperparams().WD, o.Hyperparams().ClipGradient = 0.02, 0.6
			apart := updates3(o, []string{"a.weight", "b.weight"}, [][]float64{w1, w2}, [][][]float64{g1, g2}, at)
			flat := updates3(o, []string{"a.weight"}, [][]float64{flatW}, [][][]float64{flatG}, at)
			same := true
			n := len(apart) / 2 // the weight and its states, per parameter
			for k := range n {
				joined := slices.Concat(apart[k], apart[n+k])
				for i := range joined {
					same = same && math.Float64bits(joined[i]) == math.Float64bits(flat[k][i])
				}
			}
			e, ok := o.(Elementwise)
			claims := ok && e.Elementwise()
			if claims && !same {
				t.Fatal("claims Elementwise, but a flat update of two parameters differs from two updates")
			}
			if !claims && same {
				// The rules that do not claim it (LAMB, LARS) take norms
				// over each parameter, which packing must change.
				t.Fatal("does not claim Elementwise, yet the flat update agrees: the test misses what makes it not elementwise")
			}
		})
	}
}

// TestStepFreeClaims updates with Param.Step running ahead of Param.Update
// (a parameter frozen for a while): a rule that claims StepFree must not
// notice.
func TestStepFreeClaims(t *testing.T) {
	w := randoms(3, 6, -1, 1)
	var g [][]float64
	for s := range 3 {
		g = append(g, randoms(uint64(30+s), 6, -2, 2))
	}
	for _, r := range rules() {
		t.Run(r.name, func(t *testing.T) {
			o := r.make()
			o.Hyperparams().WD = 0.02
			a := updates3(o, []string{"w"}, [][]float64{w}, [][][]float64{g}, func(s int) int { return s })
			b := updates3(o, []string{"w"}, [][]float64{w}, [][][]float64{g}, func(s int) int { return s + 40 })
			same := true
			for k := range a {
				for i := range a[k] {
					same = same && math.Float64bits(a[k][i]) == math.Float64bits(b[k][i])
				}
			}
			sf, ok := o.(StepFree)
			if ok && sf.StepFree() && !same {
				t.Fatal("claims StepFree, but the update depends on Param.Step")
			}
		})
	}
}

// TestNadamProduct checks the cached schedule product against the plain
// sequential one: equal while it matters, and giving the same 1 − Π after
// the cache stops growing.
func TestNadamProduct(t *testing.T) {
	for _, c := range []struct{ beta1, psi float64 }{{0.9, 0.004}, {0.999, 0.004}, {0.5, 0.1}, {0, 0.004}} {
		o := &Nadam{Beta1: c.beta1, ScheduleDecay: c.psi}
		prod := 1.0
		for n := 1; n <= 3000; n++ {
			prod *= o.momentum(n)
			got := o.product(n)
			if got != prod && (1-got != 1-prod || 1-got*o.momentum(n+1) != 1-prod*o.momentum(n+1)) {
				t.Fatalf("β1 %g, ψ %g, t %d: product %v, sequential %v", c.beta1, c.psi, n, got, prod)
			}
		}
	}
	// Out of order and concurrently (the Trainer updates replicas from
	// several goroutines): the same values.
	o := NewNadam(1e-3)
	o.ScheduleDecay = 0.0123
	want := []float64{o.product(1), o.product(7), o.product(500)}
	done := make(chan [3]float64, 4)
	for range 4 {
		go func() { done <- [3]float64{o.product(500), o.product(1), o.product(7)} }()
	}
	for range 4 {
		if got := <-done; got != [3]float64{want[2], want[0], want[1]} {
			t.Fatalf("concurrent products %v, want %v", got, want)
		}
	}
}

// TestAdaDeltaLearningRate: MXNet 1.x's AdaDelta has no learning rate, its
// TorchForm has.
func TestAdaDeltaLearningRate(t *testing.T) {
	for _, torch := range []bool{false, true} {
		mk := func(lr float64) Optimizer {
			o := NewAdaDelta(lr)
			o.TorchForm = torch
			if !torch {
				o.WD = 0.1
			}
			return o
		}
		a := run(mk(1), Param{LRMult: 1, WDMult: 1}, testG, 3)
		b := run(mk(0.25), Param{LRMult: 1, WDMult: 1}, testG, 3)
		frozen := run(mk(1), Param{LRMult: 0, WDMult: 1}, testG, 3)
		if !torch {
			near(t, "MXNet 1.x form, lr 1 vs 0.25", a, b, 0)
			near(t, "MXNet 1.x form, LRMult 0", frozen, a, 0)
			continue
		}
		near(t, "TorchForm, LRMult 0", frozen, testW, 0)
		for i := range a { // without decay the steps do not depend on w
			if da, db := a[i]-testW[i], b[i]-testW[i]; math.Abs(da-4*db) > 1e-12 {
				t.Fatalf("TorchForm: element %d moved %g with lr 1 and %g with lr 0.25", i, da, db)
			}
		}
	}
}

// TestFTRLByHand checks the first FTRL step, its threshold, and that a zero
// learning rate changes nothing.
func TestFTRLByHand(t *testing.T) {
	const lr, l1, beta, wd = 0.1, 0.5, 1.0, 0.05
	o := NewFTRL(lr)
	o.Lamda1, o.Beta, o.WD = l1, beta, wd
	got := run(o, Param{LRMult: 1, WDMult: 1}, testG, 1)
	zeroed := 0
	for i, g := range testG {
		z := g - math.Abs(g)*testW[i]/lr // n was 0: sqrt(g²) − 0
		want := 0.0
		if math.Abs(z) > l1 {
			want = (math.Copysign(l1, z) - z) / ((beta+math.Abs(g))/lr + wd)
		} else {
			zeroed++
		}
		if d := math.Abs(got[i] - want); d > 1e-15 {
			t.Fatalf("element %d: got %.17g, want %.17g", i, got[i], want)
		}
	}
	if zeroed == 0 {
		t.Fatal("no element under the threshold: the test data misses the case")
	}
	near(t, "lr 0", run(o, Param{LRMult: 0, WDMult: 1}, testG, 2), testW, 0)
}

// TestLAMBAndLARSTrustRatio checks the per-parameter ratio by hand where it
// is simple: LAMB from a zero weight (ratio 1), LARS's first step, and the
// names LARS exempts.
func TestLAMBAndLARSTrustRatio(t *testing.T) {
	dev := ctx.CPU(0)
	t.Run("lamb zero weight", func(t *testing.T) {
		o := NewLAMB(0.1)
		w := nd.Zeros(dev, nd.Float64, 6)
		g := nd.FromSlice(dev, testG, 6)
		st := o.CreateState(w)
		o.Update(Param{Step: 1, LRMult: 1, WDMult: 1}, w, g, st)
		want := make([]float64, 6)
		for i, x := range testG {
			want[i] = -0.1 * x / (math.Abs(x) + 1e-6) // m̂ = g, v̂ = g²
		}
		near(t, "weights", w.Float64s(), want, 1e-15)
	})
	lars := func(name string) []float64 {
		o := NewLARS(0.5)
		o.Eta, o.WD = 0.01, 0.1
		return run(o, Param{Name: name, LRMult: 1, WDMult: 1}, testG, 1)
	}
	var wn, gn float64
	for i := range testW {
		wn += testW[i] * testW[i]
		gn += testG[i] * testG[i]
	}
	wn, gn = math.Sqrt(wn), math.Sqrt(gn)
	ratio := 0.01 * wn / (gn + 0.1*wn)
	want := make([]float64, 6)
	plain := make([]float64, 6)
	for i := range testW {
		want[i] = testW[i] - 0.5*ratio*(testG[i]+0.1*testW[i])
		plain[i] = testW[i] - 0.5*(testG[i]+0.1*testW[i])
	}
	near(t, "lars conv0.weight", lars("conv0.weight"), want, 1e-14)
	for _, n := range []string{"conv0.bias", "bn0.gamma", "bn0.beta", "dense_bias"} {
		near(t, "lars "+n, lars(n), plain, 1e-15)
	}
}

// TestSignumByHand checks one step of each form.
func TestSignumByHand(t *testing.T) {
	const lr, wd, wdlh = 0.1, 0.2, 0.3
	for _, mom := range []float64{0, 0.9} {
		t.Run(fmt.Sprint("momentum ", mom), func(t *testing.T) {
			o := NewSignum(lr)
			o.Momentum, o.WD, o.WDLH = mom, wd, wdlh
			got := run(o, Param{LRMult: 1, WDMult: 1}, testG, 1)
			for i, w := range testW {
				var want float64
				if mom == 0 {
					want = (1-lr*(wd+wdlh))*w - lr*math.Copysign(1, testG[i])
				} else {
					want = (1-lr*wdlh)*w - lr*math.Copysign(1, testG[i]+wd*w)
				}
				if math.Abs(got[i]-want) > 1e-15 {
					t.Fatalf("element %d: got %v, want %v", i, got[i], want)
				}
			}
		})
	}
}

// TestAMSGradState: the maximum is a third state array, only with AMSGrad,
// and a state made without it is refused.
func TestAMSGradState(t *testing.T) {
	w := nd.FromSlice(ctx.CPU(0), testW, 6)
	g := nd.FromSlice(ctx.CPU(0), testG, 6)
	for _, o := range []Optimizer{&Adam{Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}, &AdamW{Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}} {
		if n := len(o.CreateState(w)); n != 2 {
			t.Errorf("%s: %d state arrays, want 2", o.Name(), n)
		}
		short := o.CreateState(w)
		switch a := o.(type) {
		case *Adam:
			a.AMSGrad = true
		case *AdamW:
			a.AMSGrad = true
		}
		if n := len(o.CreateState(w)); n != 3 {
			t.Errorf("%s with AMSGrad: %d state arrays, want 3", o.Name(), n)
		}
		if err := nd.Catch(func() { o.Update(Param{Step: 1, LRMult: 1, WDMult: 1}, w, g, short) }); err == nil {
			t.Errorf("%s with AMSGrad accepted a state of 2 arrays", o.Name())
		}
	}
}

// TestApplyHalf runs every rule on a float16 and a bfloat16 weight through
// Apply (a float32 master copy with float32 state) and checks it against
// the rule run on float32 arrays directly, rounded once at the end.
func TestApplyHalf(t *testing.T) {
	dev := ctx.CPU(0)
	for _, r := range rules() {
		for _, dt := range []nd.DType{nd.Float16, nd.BFloat16} {
			t.Run(fmt.Sprintf("%s/%v", r.name, dt), func(t *testing.T) {
				o, ref := r.make(), r.make()
				o.Hyperparams().WD, ref.Hyperparams().WD = 0.01, 0.01
				w := nd.FromSlice(dev, testW, 6).AsType(dt)
				w32 := w.AsType(nd.Float32)
				st, st32 := NewState(o, w), ref.CreateState(w32)
				if len(st) != len(st32)+1 || st[0].DType() != nd.Float32 {
					t.Fatalf("state of %d arrays, the first %v; want the float32 master and %d more", len(st), st[0].DType(), len(st32))
				}
				for s := 1; s <= 3; s++ {
					g := nd.FromSlice(dev, scaled(testG, float64(s)), 6).AsType(dt)
					p := Param{Name: "w", Step: s, LRMult: 1, WDMult: 1}
					Apply(o, p, w, g, st)
					ref.Update(p, w32, g.AsType(nd.Float32), st32)
				}
				if w.DType() != dt {
					t.Fatalf("weight became %v", w.DType())
				}
				near(t, "master", st[0].Float64s(), w32.Float64s(), 0)
				near(t, "weight", w.Float64s(), w32.AsType(dt).Float64s(), 0)
			})
		}
	}
}

package gluon_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

func values(params *gluon.ParamDict) map[string][]float32 {
	out := map[string][]float32{}
	for _, n := range params.Names() {
		out[n] = params.Get(n).ListData()[0].Float32s()
	}
	return out
}

// TestSaveLoadOnOtherContexts saves a network trained on two contexts and
// loads it into a fresh, uninitialised copy on three others.
func TestSaveLoadOnOtherContexts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "net.safetensors")
	src := modelzoo.LeNet()
	srcParams := gluon.CollectParams(src)
	if err := srcParams.Initialize(initializer.Xavier{}, cpus(2), false); err != nil {
		t.Fatal(err)
	}
	src.Forward(nd.Ones(ctx.CPU(0), nd.Float32, 1, 1, 28, 28)) // materialise deferred shapes
	if err := gluon.SaveParameters(src, path); err != nil {
		t.Fatal(err)
	}
	dst := modelzoo.LeNet()
	devs := []ctx.Context{ctx.CPU(3), ctx.CPU(4), ctx.CPU(5)}
	if err := gluon.LoadParameters(dst, path, devs...); err != nil {
		t.Fatal(err)
	}
	want, got := values(srcParams), values(gluon.CollectParams(dst))
	for name, w := range want {
		if !slices.Equal(w, got[name]) {
			t.Errorf("%s differs after the round trip", name)
		}
		if c := gluon.CollectParams(dst).Get(name).Contexts(); !slices.Equal(c, devs) {
			t.Errorf("%s loaded onto %v", name, c)
		}
	}
	out := dst.Forward(nd.Ones(ctx.CPU(5), nd.Float32, 1, 1, 28, 28))
	ref := src.Forward(nd.Ones(ctx.CPU(1), nd.Float32, 1, 1, 28, 28))
	if !slices.Equal(out.Float32s(), ref.Float32s()) {
		t.Error("the loaded network computes something else")
	}
}

// TestLoadErrorsLoseNothing checks every refusal and that a refused load
// leaves the parameters as they were.
func TestLoadErrorsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	mk := func(units ...int) *nn.Sequential {
		net := nn.NewSequential()
		for _, u := range units {
			net.Add(nn.NewDense(u, nn.DenseOpts{InUnits: 3}))
		}
		return net
	}
	save := func(net *nn.Sequential, name string) string {
		p := filepath.Join(dir, name)
		if err := gluon.CollectParams(net).Initialize(initializer.One(), cpus(1), true); err != nil {
			t.Fatal(err)
		}
		if err := gluon.SaveParameters(net, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := save(mk(4, 4), "two.safetensors")
	one := save(mk(4), "one.safetensors")
	wide := save(mk(5), "wide.safetensors")
	raw, _ := os.ReadFile(two)
	truncated := filepath.Join(dir, "truncated.safetensors")
	os.WriteFile(truncated, raw[:len(raw)-7], 0o644)
	garbage := filepath.Join(dir, "garbage.safetensors")
	os.WriteFile(garbage, []byte("this is not a safetensors file"), 0o644)

	cases := []struct {
		name, file, want string
		opts             gluon.LoadOpts
	}{
		{"missing", one, "no values for dense1.weight", gluon.LoadOpts{}},
		{"extra", two, "unknown parameters", gluon.LoadOpts{}},
		{"misshaped", wide, "shape [4 3] but the file holds [5 3]", gluon.LoadOpts{AllowMissing: true}},
		{"truncated", truncated, "truncated.safetensors", gluon.LoadOpts{}},
		{"garbage", garbage, "garbage.safetensors", gluon.LoadOpts{}},
		{"absent", filepath.Join(dir, "nope"), "nope", gluon.LoadOpts{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := mk(4, 4)
			if c.name == "extra" {
				target = mk(4)
			}
			params := gluon.CollectParams(target)
			if err := params.Initialize(initializer.Zero(), cpus(1), false); err != nil {
				t.Fatal(err)
			}
			before := values(params)
			err := params.Load(c.file, cpus(1), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
			for n, v := range values(params) {
				if !slices.Equal(v, before[n]) {
					t.Errorf("%s changed although the load failed", n)
				}
			}
		})
	}
	// The relaxed options accept what the strict load refused.
	partial := gluon.CollectParams(mk(4, 4))
	_ = partial.Initialize(initializer.Zero(), cpus(1), false)
	if err := partial.Load(one, cpus(1), gluon.LoadOpts{AllowMissing: true}); err != nil {
		t.Fatal(err)
	}
	if v := partial.Get("dense0.weight").ListData()[0].Float32s()[0]; v != 1 {
		t.Errorf("AllowMissing load did not load dense0.weight: %v", v)
	}
}

// TestSaveIsAtomic: a save that cannot complete leaves the old file.
func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.safetensors")
	net := nn.NewSequential(nn.NewDense(2, nn.DenseOpts{InUnits: 2}))
	_ = gluon.Initialize(net, initializer.One(), ctx.CPU(0))
	if err := gluon.SaveParameters(net, path); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	deferred := nn.NewSequential(nn.NewDense(2, nn.DenseOpts{})) // not initialised: save must fail
	if err := gluon.SaveParameters(deferred, path); err == nil {
		t.Fatal("saving uninitialised parameters succeeded")
	}
	after, _ := os.ReadFile(path)
	if !slices.Equal(before, after) {
		t.Error("a failed save changed the existing file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestTrainerStatesResume: training 6 steps straight equals training 3,
// saving the trainer and parameters, loading them into fresh objects on
// other contexts, and training 3 more.
func TestTrainerStatesResume(t *testing.T) {
	dir := t.TempDir()
	x := nd.FromSlice(ctx.CPU(0), []float32{1, 2, 3, -1, 0.5, 2, 0, 1}, 4, 2)
	build := func(devs []ctx.Context) (*nn.Sequential, *gluon.ParamDict, *gluon.Trainer) {
		nd.Seed(3)
		net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2, Act: "tanh"}), nn.NewDense(1, nn.DenseOpts{InUnits: 3}))
		params := gluon.CollectParams(net)
		if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		opt := optimizer.NewSGD(0.1)
		opt.Momentum = 0.9
		tr, err := gluon.NewTrainer(params, opt, "local", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		return net, params, tr
	}
	steps := func(net gluon.Block, tr *gluon.Trainer, devs []ctx.Context, n int) {
		for range n {
			backwardOn(t, net, x, devs)
			if err := tr.Step(4); err != nil {
				t.Fatal(err)
			}
		}
	}
	// From 2 contexts (bucketed gradients, weights and state) to 1, and back.
	for _, pair := range [][2][]ctx.Context{{cpus(2), {ctx.CPU(6)}}, {{ctx.CPU(6)}, cpus(2)}} {
		devsA, devsB := pair[0], pair[1]
		net, params, tr := build(devsA)
		steps(net, tr, devsA, 6)
		want := values(params)

		net, params, tr = build(devsA)
		steps(net, tr, devsA, 3)
		if err := params.Save(filepath.Join(dir, "p")); err != nil {
			t.Fatal(err)
		}
		if err := tr.SaveStates(filepath.Join(dir, "s")); err != nil {
			t.Fatal(err)
		}
		net2, params2, tr2 := build(devsB)
		if err := params2.Load(filepath.Join(dir, "p"), devsB, gluon.LoadOpts{}); err != nil {
			t.Fatal(err)
		}
		if err := tr2.LoadStates(filepath.Join(dir, "s")); err != nil {
			t.Fatal(err)
		}
		steps(net2, tr2, devsB, 3)
		for n, w := range want {
			got := values(params2)[n]
			for i := range w {
				if d := w[i] - got[i]; d > 1e-6 || d < -1e-6 {
					t.Fatalf("%s after resume: %v, straight run %v", n, got, w)
				}
			}
		}
	}
	// A trainer with another optimizer refuses the file.
	_, p3, _ := build([]ctx.Context{ctx.CPU(6)})
	tr3, _ := gluon.NewTrainer(p3, optimizer.NewSGD(0.1), "local", gluon.TrainerOpts{}) // no momentum: no state
	if err := tr3.LoadStates(filepath.Join(dir, "s")); err == nil || !strings.Contains(err.Error(), "unexpected state") {
		t.Errorf("loading momentum state into a momentum-free SGD: %v", err)
	}
}

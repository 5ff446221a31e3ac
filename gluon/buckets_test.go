package gluon_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

// TestBucketsBitwise: the gradient buckets sum in context order whatever
// the bucket sizes, the overlap or the kind, so LeNet trained on 4
// contexts ends bitwise equal to the unbucketed path (the update on the
// kvstore, which sums each parameter with kvstore.SumOn).
func TestBucketsBitwise(t *testing.T) {
	steps := 4
	ref := trainLeNet(t, runConfig{devices: 4, kv: "device", onKV: true, momentum: 0.9}, steps)
	small := gluon.TrainerOpts{FirstBucketBytes: 256, BucketBytes: 8 << 10}
	for _, c := range []runConfig{
		{devices: 4, kv: "device"},
		{devices: 4, kv: "device", opts: small},
		{devices: 4, kv: "device", opts: gluon.TrainerOpts{NoOverlap: true, BucketBytes: 1, FirstBucketBytes: 1}},
		{devices: 4, kv: "local", opts: small},
		{devices: 2, kv: "device", opts: small},
		{devices: 4, kv: "device", opts: small, adam: true},
		{devices: 4, kv: "device", opts: small, lrMults: true},
	} {
		c.momentum = 0.9
		t.Run(fmt.Sprintf("%dctx/%s/%+v", c.devices, c.kv, c.opts), func(t *testing.T) {
			want := ref
			if c.devices != 4 || c.adam || c.lrMults {
				want = trainLeNet(t, runConfig{devices: c.devices, kv: "device", onKV: true, momentum: 0.9, adam: c.adam, lrMults: c.lrMults}, steps)
			}
			got := trainLeNet(t, c, steps)
			for name, w := range want {
				if !slices.Equal(w, got[name]) {
					t.Errorf("%s differs from the unbucketed sums (%.3g relative)", name, relDiff(w, got[name]))
				}
			}
		})
	}
}

// withCores sets GOMAXPROCS to n and returns what restores it. CPU
// contexts at least as many as GOMAXPROCS are summed in Step only
// (TestBucketHostStep); with a core to spare, during backward.
func withCores(n int) (restore func()) {
	old := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}

// TestBucketHostStep: CPU contexts that take every core (GOMAXPROCS at
// most the number of contexts) are summed in Step only, each context
// summing its share of every bucket on its own goroutine, and train
// bitwise equal to the sums during backward (a core to spare) and to the
// unbucketed path; a second backward pass on one context before Step just
// replaces its gradients (nothing had been summed yet), and freezing a
// parameter between backward and Step rebuilds the buckets and steps.
func TestBucketHostStep(t *testing.T) {
	small := gluon.TrainerOpts{FirstBucketBytes: 4 << 10, BucketBytes: 16 << 10}
	for _, n := range []int{2, 4} {
		want := trainLeNet(t, runConfig{devices: n, kv: "device", onKV: true, momentum: 0.9}, 3)
		for _, cores := range []int{n, n + 1} {
			for _, kv := range []string{"device", "local"} {
				t.Run(fmt.Sprintf("%dctx/%dcores/%s", n, cores, kv), func(t *testing.T) {
					defer withCores(cores)()
					got := trainLeNet(t, runConfig{devices: n, kv: kv, momentum: 0.9, opts: small}, 3)
					for name, w := range want {
						if !slices.Equal(w, got[name]) {
							t.Errorf("%s differs from the unbucketed sums (%.3g relative)", name, relDiff(w, got[name]))
						}
					}
				})
			}
		}
	}
	t.Run("stats", func(t *testing.T) {
		devs := cpus(2)
		defer withCores(len(devs))()
		net, _, tr := lenetTrainer(t, devs, small)
		x, y := lenetBatch(8)
		for step := range 2 {
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := tr.Step(8); err != nil {
				t.Fatal(err)
			}
			if s := tr.Stats(); s.Buckets < 2 || s.Overlapped != 0 || s.Shared != s.Buckets || s.Fused != s.Buckets {
				t.Errorf("step %d: %d buckets, %d summed during backward, %d in shares, %d fused updates; want all in shares, all fused", step, s.Buckets, s.Overlapped, s.Shared, s.Fused)
			}
		}
	})
	t.Run("stale replicas and float16", func(t *testing.T) {
		// A backward pass on cpu(0) and cpu(1) only leaves cpu(2) stale;
		// its gradients add nothing. float16 buckets are declined by the
		// CPU collective and summed by the kvstore's copies, share by
		// share.
		for _, dt := range []nd.DType{nd.Float32, nd.Float16} {
			run := func(onKV bool) map[string][]float32 {
				devs := cpus(3)
				defer withCores(len(devs))()
				net, params, first := lenetTrainer(t, devs, gluon.TrainerOpts{})
				first.Close() // a Trainer of its own below, made after the cast
				if dt != nd.Float32 {
					if err := gluon.Cast(net, dt); err != nil {
						t.Fatal(err)
					}
				}
				tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{UpdateOnKVStore: onKV, FirstBucketBytes: 4 << 10})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				x, y := lenetBatch(2)
				if dt != nd.Float32 {
					x = x.AsType(dt)
				}
				for step := range 2 {
					if err := lenetBackward(net, x, y, devs[:2]); err != nil {
						t.Fatal(err)
					}
					if err := tr.StepIgnoreStale(2); err != nil {
						t.Fatal(err)
					}
					if s := tr.Stats(); !onKV && (s.Shared != s.Buckets || s.Buckets == 0) {
						t.Errorf("%v step %d: %d of %d buckets summed in shares", dt, step, s.Shared, s.Buckets)
					}
				}
				out := map[string][]float32{}
				for _, p := range params.List() {
					for d, r := range p.ListData() {
						if !slices.Equal(r.AsType(nd.Float32).Float32s(), p.ListData()[0].AsType(nd.Float32).Float32s()) {
							t.Errorf("%v: %s: replica %d differs from replica 0", dt, p.Name(), d)
						}
					}
					out[p.Name()] = p.ListData()[0].AsType(nd.Float32).Float32s()
				}
				return out
			}
			want, got := run(true), run(false)
			for name, w := range want {
				if !slices.Equal(w, got[name]) {
					t.Errorf("%v: %s differs from the unbucketed sums (%.3g relative)", dt, name, relDiff(w, got[name]))
				}
			}
		}
	})
	t.Run("second backward on one context", func(t *testing.T) {
		devs := cpus(2)
		defer withCores(len(devs))()
		net, _, tr := lenetTrainer(t, devs, gluon.TrainerOpts{})
		x, y := lenetBatch(8)
		if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		if err := lenetBackward(net, x, y, devs[:1]); err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(8); err != nil {
			t.Fatalf("step after a second backward pass on cpu(0) only: %v", err)
		}
	})
	t.Run("frozen after backward", func(t *testing.T) {
		devs := cpus(2)
		defer withCores(len(devs))()
		net, params, tr := lenetTrainer(t, devs, small)
		x, y := lenetBatch(8)
		if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		other := params.List()[len(params.List())-1]
		before := other.Data(devs[1]).Float32s()
		params.List()[0].SetGradReq(nd.GradNull)
		if err := tr.Step(8); err != nil {
			t.Fatalf("step after freezing between backward and Step: %v", err)
		}
		if slices.Equal(before, other.Data(devs[1]).Float32s()) {
			t.Error("the other parameters did not change")
		}
		if r := other.ListData(); !slices.Equal(r[0].Float32s(), r[1].Float32s()) {
			t.Error("the replicas differ after the step")
		}
	})
}

// lenetTrainer returns LeNet, materialised on devs, and a trainer over it.
func lenetTrainer(t *testing.T, devs []ctx.Context, o gluon.TrainerOpts) (gluon.Block, *gluon.ParamDict, *gluon.Trainer) {
	t.Helper()
	nd.Seed(5)
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
		t.Fatal(err)
	}
	autograd.Pause(func() {
		for _, d := range devs {
			net.Forward(nd.Zeros(d, nd.Float32, 1, 1, 28, 28))
		}
	})
	tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", o)
	if err != nil {
		t.Fatal(err)
	}
	return net, params, tr
}

// lenetBatch returns a batch of n LeNet inputs and labels on cpu(0).
func lenetBatch(n int) (*nd.NDArray, *nd.NDArray) {
	x := nd.RandomUniform(ctx.CPU(0), nd.Float32, 0, 1, n, 1, 28, 28)
	lab := make([]float32, n)
	for i := range lab {
		lab[i] = float32(i % 10)
	}
	return x, nd.FromSlice(ctx.CPU(0), lab)
}

// TestBucketLayoutAndOverlap: buckets follow reverse registration order
// within their size limits, the first one small; with every gradient
// final on every context and a core to spare, each bucket's sum starts
// during backward.
func TestBucketLayoutAndOverlap(t *testing.T) {
	devs := cpus(2)
	defer withCores(len(devs) + 1)()
	net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{FirstBucketBytes: 4 << 10, BucketBytes: 64 << 10})
	x, y := lenetBatch(8)
	for step := range 2 {
		if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(8); err != nil {
			t.Fatal(err)
		}
		s := tr.Stats()
		if s.Buckets < 3 || s.Buckets != len(s.BucketBytes) {
			t.Fatalf("step %d: %d buckets (%v), want at least 3", step, s.Buckets, s.BucketBytes)
		}
		total := 0
		for _, p := range params.List() {
			total += p.Data(devs[0]).Size() * 4
		}
		sum := 0
		for i, b := range s.BucketBytes {
			sum += b
			if i > 0 && b > 64<<10 && !isOneParam(params, b) {
				t.Errorf("bucket %d holds %d bytes, over the 64 KiB limit", i, b)
			}
		}
		if sum != total {
			t.Errorf("buckets hold %d bytes, the parameters %d", sum, total)
		}
		if s.BucketBytes[0] > 4<<10 && !isOneParam(params, s.BucketBytes[0]) {
			t.Errorf("first bucket holds %d bytes, over its 4 KiB limit", s.BucketBytes[0])
		}
		if s.Overlapped != s.Buckets || s.Shared != 0 {
			t.Errorf("step %d: %d of %d buckets were summed during backward, %d in shares", step, s.Overlapped, s.Buckets, s.Shared)
		}
		if s.Fused != s.Buckets {
			t.Errorf("step %d: %d of %d buckets were updated with one call per context", step, s.Fused, s.Buckets)
		}
	}
	// The last layer's parameters come first: the first bucket holds the
	// output layer's bias (10 floats), the last one the first convolution.
	last := params.List()[len(params.List())-1]
	if !strings.Contains(last.Name(), "bias") {
		t.Fatalf("last registered parameter is %s", last.Name())
	}
	w := last.Data(devs[0]).Grad()
	flat0 := tr.Stats().BucketBytes[0]
	if w.Size()*4 > flat0 {
		t.Errorf("the last parameter (%d bytes) is not in the first bucket (%d bytes)", w.Size()*4, flat0)
	}
}

// isOneParam reports whether some parameter alone has the given size in
// bytes (a parameter larger than the limit gets a bucket of its own).
func isOneParam(params *gluon.ParamDict, bytes int) bool {
	for _, p := range params.List() {
		if p.Shape() != nil && numel(p.Shape())*4 == bytes {
			return true
		}
	}
	return false
}

func numel(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// lenetBackward runs the data-parallel forward and backward of LeNet's
// softmax cross-entropy.
func lenetBackward(net gluon.Block, x, y *nd.NDArray, devs []ctx.Context) error {
	return traintest.Backward(net, traintest.SoftmaxCE, x, y, devs, false)
}

// TestBucketSecondBackward: a second backward pass before Step (a GAN's
// generator pass through the discriminator) restarts the sums of the
// buckets it rewrites, and the step equals one after the second pass
// alone; a second pass on only some contexts fails the step, which changes
// no parameter, and the next step works.
func TestBucketSecondBackward(t *testing.T) {
	devs := cpus(2)
	defer withCores(len(devs) + 1)() // sums during backward
	x, y := lenetBatch(8)
	x2, y2 := lenetBatch(8)
	final := func(passes [][2]*nd.NDArray) map[string][]float32 {
		net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{FirstBucketBytes: 4 << 10})
		for _, p := range passes {
			if err := lenetBackward(net, p[0], p[1], devs); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.Step(8); err != nil {
			t.Fatal(err)
		}
		out := map[string][]float32{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(devs[1]).Float32s()
		}
		return out
	}
	want, got := final([][2]*nd.NDArray{{x2, y2}}), final([][2]*nd.NDArray{{x, y}, {x2, y2}})
	for name, w := range want {
		if !slices.Equal(w, got[name]) {
			t.Errorf("%s after two backward passes differs from the second pass alone", name)
		}
	}

	net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{})
	if err := lenetBackward(net, x, y, devs); err != nil {
		t.Fatal(err)
	}
	if err := lenetBackward(net, x2, y2, devs[:1]); err != nil { // cpu(0) only
		t.Fatal(err)
	}
	name := params.List()[0].Name()
	before := params.Get(name).Data(devs[0]).Float32s()
	err := tr.Step(8)
	if err == nil || !strings.Contains(err.Error(), "on every context") {
		t.Fatalf("step after a second backward pass on one context: %v, want the not-on-every-context error", err)
	}
	if !slices.Equal(before, params.Get(name).Data(devs[0]).Float32s()) {
		t.Fatal("the failed step changed a parameter")
	}
	if err := lenetBackward(net, x, y, devs); err != nil {
		t.Fatal(err)
	}
	if err := tr.Step(8); err != nil {
		t.Fatalf("the step after the failed one: %v", err)
	}
}

// TestBucketChangesBetweenSteps: freezing a parameter between steps, or a
// second Trainer packing the same parameters, makes the next step rebuild
// the buckets and sum in Step, with the results of a trainer that saw no
// change.
func TestBucketChangesBetweenSteps(t *testing.T) {
	devs := cpus(2)
	x, y := lenetBatch(8)
	run := func(change func(params *gluon.ParamDict)) map[string][]float32 {
		net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{FirstBucketBytes: 4 << 10})
		for step := range 3 {
			if step == 1 {
				change(params)
			}
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := tr.StepIgnoreStale(8); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		out := map[string][]float32{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(devs[1]).Float32s()
		}
		return out
	}
	frozen := func(params *gluon.ParamDict) { params.List()[0].SetGradReq(nd.GradNull) }
	a, b := run(func(*gluon.ParamDict) {}), run(frozen)
	first := run(func(*gluon.ParamDict) {})
	for name := range a {
		if !slices.Equal(a[name], first[name]) {
			t.Fatalf("%s: two identical runs differ", name)
		}
	}
	if name := firstParamName(t, devs); slices.Equal(a[name], b[name]) {
		t.Errorf("freezing %s after the first step did not keep it from the later updates", name)
	}
	second := run(func(params *gluon.ParamDict) {
		tr2, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		_ = tr2 // packs the same gradients and weights into its own buffers
	})
	for name, w := range a {
		if !slices.Equal(w, second[name]) {
			t.Errorf("%s: a second trainer over the same parameters changed the first one's results", name)
		}
	}
}

// TestBucketTrainersTakeTurns: two Trainers with identical settings over
// the same parameters, stepping in turn, train exactly as one does: each
// takes the parameters over at its step and does not sum again what the
// other summed during backward.
func TestBucketTrainersTakeTurns(t *testing.T) {
	devs := cpus(2)
	x, y := lenetBatch(8)
	run := func(two bool) map[string][]float32 {
		net, params, a := lenetTrainer(t, devs, gluon.TrainerOpts{FirstBucketBytes: 4 << 10})
		trainers := []*gluon.Trainer{a}
		if two {
			b, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{FirstBucketBytes: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			trainers = append(trainers, b)
		}
		for step := range 6 {
			if err := lenetBackward(net, x, y, devs); err != nil {
				t.Fatal(err)
			}
			if err := trainers[step%len(trainers)].Step(8); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		out := map[string][]float32{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(devs[1]).Float32s()
		}
		return out
	}
	one, two := run(false), run(true)
	for name, w := range one {
		if !slices.Equal(w, two[name]) {
			t.Errorf("%s: two trainers taking turns differ from one (%.3g relative)", name, relDiff(w, two[name]))
		}
	}
}

// TestBucketChangeAfterBackward: a parameter switched to GradAdd between
// backward and Step skips that step (its sum had started; freezing is
// allowed, see TestTrainerFreeze); set back, the next step works.
func TestBucketChangeAfterBackward(t *testing.T) {
	devs := cpus(2)
	defer withCores(len(devs) + 1)() // sums during backward
	x, y := lenetBatch(8)
	net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{FirstBucketBytes: 4 << 10})
	p := params.List()[0]
	if err := lenetBackward(net, x, y, devs); err != nil {
		t.Fatal(err)
	}
	p.SetGradReq(nd.GradAdd)
	if err := tr.Step(8); err == nil || !strings.Contains(err.Error(), "skipped") {
		t.Fatalf("step after a GradReq change between backward and Step: %v, want the skipped-step error", err)
	}
	p.SetGradReq(nd.GradWrite)
	for step := range 2 {
		if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(8); err != nil {
			t.Fatalf("step %d after setting GradWrite back: %v", step, err)
		}
	}
}

// firstParamName is the name of LeNet's first parameter.
func firstParamName(t *testing.T, devs []ctx.Context) string {
	_, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{})
	defer tr.Close()
	return params.List()[0].Name()
}

// TestBucketGradAdd: with GradAdd, gradients accumulate over two backward
// passes before the sum (no bucket is summed during backward); the result
// equals one pass over both halves of the batch.
func TestBucketGradAdd(t *testing.T) {
	devs := cpus(2)
	x, y := lenetBatch(16)
	run := func(accumulate bool) map[string][]float32 {
		net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{})
		if accumulate {
			for _, p := range params.List() {
				p.SetGradReq(nd.GradAdd)
			}
			for h := range 2 {
				xh, yh := nd.SliceAxis(x, 8*h, 8*h+8, 0), nd.SliceAxis(y, 8*h, 8*h+8, 0)
				if err := lenetBackward(net, xh, yh, devs); err != nil {
					t.Fatal(err)
				}
			}
		} else if err := lenetBackward(net, x, y, devs); err != nil {
			t.Fatal(err)
		}
		if err := tr.Step(16); err != nil {
			t.Fatal(err)
		}
		if s := tr.Stats(); accumulate && s.Overlapped != 0 {
			t.Errorf("%d buckets of GradAdd parameters were summed during backward", s.Overlapped)
		}
		out := map[string][]float32{}
		for _, p := range params.List() {
			out[p.Name()] = p.Data(devs[1]).Float32s()
		}
		return out
	}
	want, got := run(false), run(true)
	for name, w := range want {
		if d := relDiff(w, got[name]); d > 1e-6 {
			t.Errorf("%s: accumulated over two passes differs by %.3g relative", name, d)
		}
	}
}

// TestBucketCopies: on CPU contexts the backend's collective sums the
// buckets in place, so a step copies nothing into a context besides its
// part of the batch (the reduction by copies, and its bound of 2(N−1)/N of
// the gradients' bytes per context, is kvstore's TestAllReduceOnBytes).
func TestBucketCopies(t *testing.T) {
	for _, n := range []int{2, 4} {
		for _, overlap := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dctx/overlap=%v", n, overlap), func(t *testing.T) {
				devs := cpus(n)
				net, params, tr := lenetTrainer(t, devs, gluon.TrainerOpts{NoOverlap: !overlap, FirstBucketBytes: 4 << 10})
				x, y := lenetBatch(32)
				total := 0
				for _, p := range params.List() {
					total += p.Data(devs[0]).Size() * 4
				}
				for step := range 3 {
					if err := lenetBackward(net, x, y, devs); err != nil {
						t.Fatal(err)
					}
					if err := tr.Step(32); err != nil {
						t.Fatal(err)
					}
					if step == 0 {
						continue // the first step's interval starts at NewTrainer
					}
					s := tr.Stats()
					for d, c := range s.Contexts {
						batch := 0 // the batch's rows and labels copied from cpu(0)
						if d > 0 {
							batch = 32 / n * (28*28 + 1) * 4
						}
						if got := int(c.BytesIn) - batch; got != 0 {
							t.Errorf("step %d, context %d: %d bytes in besides the batch, want 0 (gradients %d bytes)", step, d, got, total)
						}
						if c.HostSyncs != 0 {
							t.Errorf("context %d: %d host syncs on the CPU", d, c.HostSyncs)
						}
					}
				}
			})
		}
	}
}

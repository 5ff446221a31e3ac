package gluon_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/nd"
)

// gradsOfRun runs one recorded training pass of net on x (train mode,
// dropout on) from seed, and returns the loss, the input's gradient and
// every parameter's gradient.
func gradsOfRun(t *testing.T, net gluon.Block, params *gluon.ParamDict, x *nd.NDArray, seed uint64) (float64, []float64, map[string][]float64) {
	t.Helper()
	nd.Seed(seed)
	params.ZeroGrad()
	xin := x.Copy()
	xin.AttachGrad(nd.GradWrite)
	var l *nd.NDArray
	autograd.Record(func() { l = nd.Sum(nd.Square(net.Forward(xin))) })
	autograd.Backward(l)
	gs := map[string][]float64{}
	for _, n := range params.Names() {
		if g := params.Get(n).Grad(ctx.CPU(0)); g != nil {
			gs[n] = g.Float64s()
		}
	}
	return l.Float64s()[0], xin.Grad().Float64s(), gs
}

// TestCheckpoint: a checkpointed network (nested, with dropout) gives the
// loss and gradients of the plain one bit for bit, holds fewer arrays after its forward pass,
// replays its dropout masks in the backward pass, and a transformer layer
// with masks works too.
func TestCheckpoint(t *testing.T) {
	dev := ctx.CPU(0)
	block := func() *nn.Sequential {
		return nn.NewSequential(nn.NewDense(32, nn.DenseOpts{InUnits: 16, Act: "relu"}), nn.NewDropout(0.3),
			nn.NewDense(32, nn.DenseOpts{Act: "tanh"}), nn.NewDense(16, nn.DenseOpts{}))
	}
	b1, b2, b3 := block(), block(), block()
	plain := nn.NewSequential(b1, b2, b3)
	params := gluon.CollectParams(plain)
	nd.Seed(1)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	ck := nn.NewSequential(gluon.Checkpoint(b1), gluon.Checkpoint(b2), gluon.Checkpoint(b3))
	// b3 checkpointed inside a checkpointed pair.
	nested := nn.NewSequential(gluon.Checkpoint(b1), gluon.Checkpoint(nn.NewSequential(b2, gluon.Checkpoint(b3))))
	if got, want := gluon.CollectParams(ck).Names(), params.Names(); !slices.Equal(got, want) {
		t.Fatalf("checkpointed parameter names %v, want %v", got, want)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 8, 16)
	l1, gx1, gp1 := gradsOfRun(t, plain, params, x, 5)
	for name, net := range map[string]gluon.Block{"checkpointed": ck, "nested": nested} {
		l2, gx2, gp2 := gradsOfRun(t, net, params, x, 5)
		if l1 != l2 || !slices.Equal(gx1, gx2) {
			t.Fatalf("%s: loss %v vs %v, or input gradients differ", name, l1, l2)
		}
		for n, g := range gp1 {
			if !slices.Equal(g, gp2[n]) {
				t.Fatalf("%s: gradient of %s differs", name, n)
			}
		}
	}
	// After the forward pass, the plain network's scope holds every
	// intermediate; the checkpointed one only the blocks' outputs.
	count := func(net gluon.Block) int {
		sc := nd.NewScope()
		defer sc.Close()
		xin := x.Copy()
		xin.AttachGrad(nd.GradWrite)
		autograd.Record(func() { net.Forward(xin) })
		return sc.Len()
	}
	if p, c := count(plain), count(ck); !(c < p) {
		t.Errorf("arrays held after the forward pass: checkpointed %d, plain %d", c, p)
	}
	// Dropout: the gradient of Σ c·dropout(x) is c·mask, the mask of the
	// forward pass (y = x·mask), however the recomputation draws.
	drop := gluon.Checkpoint(nn.NewDropout(0.5))
	xd := nd.RandomUniform(dev, nd.Float64, 1, 2, 64)
	xd.AttachGrad(nd.GradWrite)
	c := nd.RandomUniform(dev, nd.Float64, -1, 1, 64)
	var yd, ld *nd.NDArray
	nd.Seed(7)
	autograd.Record(func() { yd = drop.Forward(xd); ld = nd.Sum(nd.Mul(yd, c)) })
	autograd.Backward(ld)
	gv, xv, yv, cv := xd.Grad().Float64s(), xd.Float64s(), yd.Float64s(), c.Float64s()
	zeros := 0
	for i := range gv {
		if math.Abs(gv[i]*xv[i]-yv[i]*cv[i]) > 1e-12 {
			t.Fatalf("element %d: gradient %v, but the forward pass kept x·%v", i, gv[i], yv[i]/xv[i])
		}
		if yv[i] == 0 {
			zeros++
		}
	}
	if zeros == 0 || zeros == 64 {
		t.Errorf("%d of 64 dropped: not a dropout", zeros)
	}
	// Nothing outlives a step: the memory in use comes back to what it was
	// (the recomputation's fresh leaves' gradient buffers leaked).
	mdev := ctx.CPU(40)
	mb := nn.NewSequential(gluon.Checkpoint(nn.NewDense(8, nn.DenseOpts{InUnits: 8, Act: "relu"})), gluon.Checkpoint(nn.NewDense(8, nn.DenseOpts{InUnits: 8})))
	if err := gluon.CollectParams(mb).Initialize(initializer.Xavier{}, []ctx.Context{mdev}, false); err != nil {
		t.Fatal(err)
	}
	mx := nd.RandomNormal(mdev, nd.Float32, 0, 1, 4, 8)
	inUse := func() int64 {
		sc := nd.NewScope()
		var l *nd.NDArray
		autograd.Record(func() { l = nd.Sum(mb.Forward(mx)) })
		autograd.Backward(l)
		sc.Close()
		return nd.MemoryStats(mdev).InUse
	}
	if first, second := inUse(), inUse(); second != first {
		t.Errorf("memory in use after a step grew from %d to %d bytes", first, second)
	}
	// Outside a recording scope it is the block.
	y1, y2 := plain.Forward(x).Float32s(), ck.Forward(x).Float32s()
	if !slices.Equal(y1, y2) {
		t.Error("predictions differ")
	}

	// A transformer layer with a key-padding mask, through gluon.Call.
	enc := nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC"})
	ep := gluon.CollectParams(enc)
	if err := ep.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	src := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 5, 8)
	pad := nd.FromSlice(dev, []bool{false, false, false, false, true, false, false, false, true, true}, 2, 5)
	run := func(c gluon.Component) []float64 {
		nd.Seed(9)
		ep.ZeroGrad()
		var l *nd.NDArray
		autograd.Record(func() { l = nd.Sum(gluon.Call(c, src, pad)[0]) })
		autograd.Backward(l)
		return ep.Get("self_attn.in_proj_weight").Grad(dev).Float64s()
	}
	if !slices.Equal(run(enc), run(gluon.Checkpoint(enc))) {
		t.Error("checkpointed transformer layer's gradient differs")
	}

	// A weight the block reads but does not own is an error, not a lost
	// gradient.
	foreign := nd.RandomNormal(dev, nd.Float32, 0, 1, 16)
	foreign.AttachGrad(nd.GradWrite)
	borrow := gluon.Checkpoint(nn.NewLambda(func(x *nd.NDArray) *nd.NDArray { return nd.Mul(x, foreign) }))
	err := nd.Catch(func() {
		xin := x.Copy()
		xin.AttachGrad(nd.GradWrite)
		var l *nd.NDArray
		autograd.Record(func() { l = nd.Sum(borrow.Forward(xin)) })
		autograd.Backward(l)
	})
	var e *nd.Error
	if !errors.As(err, &e) || e.Kind != nd.ErrGraph {
		t.Errorf("borrowed weight: %v, want an ErrGraph error", err)
	}
}

// TestCheckpointTrainer: training on two contexts with the Trainer's
// gradient buckets gives the same weights with and without checkpoints,
// and hybridized checkpoints are the blocks.
func TestCheckpointTrainer(t *testing.T) {
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	train := func(wrap bool) []float32 {
		nd.Seed(3)
		b1 := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 8, Act: "relu"}))
		b2 := nn.NewSequential(nn.NewDense(4, nn.DenseOpts{InUnits: 16}))
		var net *nn.Sequential
		if wrap {
			net = nn.NewSequential(gluon.Checkpoint(b1), gluon.Checkpoint(b2))
		} else {
			net = nn.NewSequential(b1, b2)
		}
		params := gluon.CollectParams(net)
		if err := params.Initialize(initializer.Xavier{}, devs, false); err != nil {
			t.Fatal(err)
		}
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		x := nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 8, 8)
		for range 3 {
			xs, _ := gluon.SplitAndLoad(x, devs, false)
			autograd.Record(func() {
				_ = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
					autograd.Backward(nd.Sum(nd.Square(net.Forward(xs[i]))))
					return nil
				})
			})
			if err := tr.Step(8); err != nil {
				t.Fatal(err)
			}
		}
		if wrap {
			h := gluon.Hybridize(net, gluon.HybridOpts{})
			want := net.Forward(x).Float32s()
			if got := h.Forward(x).Float32s(); !slices.Equal(got, want) {
				t.Error("hybridized checkpointed network differs")
			}
		}
		return params.List()[0].Data(devs[1]).Float32s()
	}
	if !slices.Equal(train(false), train(true)) {
		t.Error("weights differ after training with checkpoints")
	}
}

// benchContexts counts the contexts BenchmarkCheckpoint has used.
var benchContexts int

// BenchmarkCheckpoint times a training step of a 16-block MLP (width 512,
// batch 256) with and without checkpointing each block, and reports the
// context's peak memory (each run on a fresh context, so its pool starts
// empty; -count repeats too).
func BenchmarkCheckpoint(b *testing.B) {
	for _, wrap := range []bool{false, true} {
		name := "plain"
		if wrap {
			name = "checkpointed"
		}
		b.Run(name, func(b *testing.B) {
			benchContexts++
			dev := ctx.CPU(100 + benchContexts)
			var blocks []gluon.Block
			for range 16 {
				var blk gluon.Block = nn.NewSequential(nn.NewDense(512, nn.DenseOpts{Act: "relu"}), nn.NewDense(512, nn.DenseOpts{Act: "tanh"}))
				if wrap {
					blk = gluon.Checkpoint(blk)
				}
				blocks = append(blocks, blk)
			}
			net := nn.NewSequential(blocks...)
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				b.Fatal(err)
			}
			x := nd.RandomNormal(dev, nd.Float32, 0, 1, 256, 512)
			step := func() {
				sc := nd.NewScope()
				defer sc.Close()
				autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(net.Forward(x)))) })
			}
			step()
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(nd.MemoryStats(dev).Peak)/(1<<20), "peak-MiB")
		})
	}
}

// TestCheckpointModes: the recomputation runs in the training mode and
// autocast state of the forward pass, whatever the caller does when the
// backward pass comes (a review found float32 recomputations of half
// forwards, and zero gradients for a backward pass inside Pause), and
// outputs of two dtypes (attention under autocast) are handed out.
func TestCheckpointModes(t *testing.T) {
	dev := ctx.CPU(0)
	inner := nn.NewSequential(nn.NewDense(16, nn.DenseOpts{InUnits: 8, Act: "relu"}), nn.NewDense(8, nn.DenseOpts{Act: "tanh"}))
	params := gluon.CollectParams(inner)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomNormal(dev, nd.Float32, 0, 1, 4, 8)
	grads := func(b gluon.Block, cast nd.DType, backward func(func())) []float64 {
		params.ZeroGrad()
		var l *nd.NDArray
		autograd.Record(func() {
			fwd := func() { l = nd.Sum(b.Forward(x).AsType(nd.Float32)) }
			if cast != 0 {
				nd.Autocast(cast, fwd)
			} else {
				fwd()
			}
		})
		backward(func() { autograd.Backward(l) })
		var out []float64
		for _, p := range params.List() {
			out = append(out, p.Grad(dev).Float64s()...)
		}
		return out
	}
	plainly := func(f func()) { f() }
	for _, c := range []struct {
		name     string
		cast     nd.DType
		backward func(func())
	}{
		{"float16 autocast", nd.Float16, plainly},
		{"bfloat16 autocast", nd.BFloat16, plainly},
		{"backward in Pause", 0, autograd.Pause},
		{"backward in PredictMode", 0, autograd.PredictMode},
	} {
		want := grads(inner, c.cast, c.backward)
		got := grads(gluon.Checkpoint(inner), c.cast, c.backward)
		if !slices.Equal(got, want) {
			t.Errorf("%s: gradients differ from the plain block's", c.name)
		}
		if slices.Equal(got, make([]float64, len(got))) {
			t.Errorf("%s: zero gradients", c.name)
		}
	}
	// Attention under autocast: a bfloat16 output and float32 weights.
	mha := nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{Layout: "NTC"})
	if err := gluon.Initialize(mha, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	q := nd.RandomNormal(dev, nd.Float32, 0, 1, 2, 3, 8)
	var outs []*nd.NDArray
	autograd.Record(func() { nd.Autocast(nd.BFloat16, func() { outs = gluon.Checkpoint(mha).ForwardMulti(q) }) })
	if outs[0].DType() != nd.BFloat16 || outs[1].DType() != nd.Float32 {
		t.Errorf("attention's outputs %v and %v, want bfloat16 and float32", outs[0].DType(), outs[1].DType())
	}
}

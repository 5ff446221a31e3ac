package nn_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// pairBlock runs a two-input MultiBlock on in[0] and in[1].
func pairBlock(m gluon.MultiBlock) func(in []*nd.NDArray) *nd.NDArray {
	return func(in []*nd.NDArray) *nd.NDArray { return m.ForwardMulti(in[0], in[1])[0] }
}

// TestLayersExtraGradCheck checks the new layers' gradients with respect
// to their inputs and parameters numerically in float64, away from kinks
// and ties (the goldens hold PyTorch's gradients at those).
func TestLayersExtraGradCheck(t *testing.T) {
	for _, c := range []struct {
		name  string
		block gluon.Block
		shape []int
		tol   ndtest.GradTol
		kinks []float64
	}{
		{"rmsnorm", nn.NewRMSNorm([]int{5}, nn.RMSNormOpts{}), []int{3, 5}, ndtest.GradTol{}, nil},
		{"rmsnorm-two-axes", nn.NewRMSNorm([]int{2, 3}, nn.RMSNormOpts{Epsilon: 1e-3}), []int{2, 2, 3}, ndtest.GradTol{}, nil},
		{"rmsnorm-no-scale", nn.NewRMSNorm([]int{4}, nn.RMSNormOpts{NoScale: true}), []int{3, 4}, ndtest.GradTol{}, nil},
		{"glu", nn.NewGLU(1), []int{2, 4, 3}, ndtest.GradTol{}, nil},
		{"softmax", nn.NewSoftmax(-1), []int{3, 4}, ndtest.GradTol{}, nil},
		{"logsoftmax", nn.NewLogSoftmax(0), []int{3, 4}, ndtest.GradTol{}, nil},
		{"softmin", nn.NewSoftmin(1), []int{3, 4, 2}, ndtest.GradTol{}, nil},
		{"softmax2d", nn.NewSoftmax2D(), []int{2, 3, 2, 2}, ndtest.GradTol{}, nil},
		{"rrelu-predict", nn.NewRReLU(0.1, 0.3), []int{3, 4}, ndtest.GradTol{}, []float64{0}},
		{"rrelu-train", nn.NewRReLU(0.1, 0.3), []int{3, 4}, ndtest.GradTol{Train: true}, []float64{0}},
		{"unflatten", nn.NewUnflatten(1, 2, -1), []int{2, 6}, ndtest.GradTol{}, nil},
		{"channelshuffle", nn.NewChannelShuffle(2), []int{2, 4, 3}, ndtest.GradTol{}, nil},
		{"dropout1d-train", nn.NewDropout1D(0.4), []int{3, 4, 2}, ndtest.GradTol{Train: true}, nil},
		{"dropout2d-train", nn.NewDropout2D(0.4), []int{2, 4, 2, 2}, ndtest.GradTol{Train: true}, nil},
		{"dropout3d-train-unbatched", nn.NewDropout3D(0.4), []int{4, 2, 1, 2}, ndtest.GradTol{Train: true}, nil},
		{"alphadropout-train", nn.NewAlphaDropout(0.3), []int{4, 5}, ndtest.GradTol{Train: true}, nil},
		{"featurealphadropout-train", nn.NewFeatureAlphaDropout(0.3), []int{3, 4, 2}, ndtest.GradTol{Train: true}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := ndtest.AwayFrom(cpu0, 9, -2, 2, 0.05, c.kinks, c.shape...)
			learn, _ := randomizeParams(t, c.block, x)
			f := func(in []*nd.NDArray) *nd.NDArray { return c.block.Forward(in[0]) }
			ndtest.CheckGrad(t, f, append([]*nd.NDArray{x}, learn...), c.tol)
		})
	}
	for _, c := range []struct {
		name string
		m    gluon.MultiBlock
		a, b []int
	}{
		{"pdist-p2", nn.NewPairwiseDistance(2, 1e-6, false), []int{3, 4}, []int{3, 4}},
		{"pdist-p1-keepdim", nn.NewPairwiseDistance(1, 1e-6, true), []int{3, 4}, []int{3, 4}},
		{"pdist-pinf", nn.NewPairwiseDistance(math.Inf(1), 0, false), []int{3, 4}, []int{3, 4}},
		{"pdist-p3-broadcast", nn.NewPairwiseDistance(3, 1e-6, false), []int{3, 4}, []int{4}},
		{"pdist-p0.5", nn.NewPairwiseDistance(0.5, 0, false), []int{2, 3}, []int{2, 3}},
		{"cosine-axis1", nn.NewCosineSimilarity(1, 1e-8), []int{3, 4, 2}, []int{3, 4, 2}},
		{"cosine-broadcast", nn.NewCosineSimilarity(-1, 1e-8), []int{3, 5}, []int{1, 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := ndtest.Rand(cpu0, 11, -2, 2, c.a...)
			b := ndtest.Rand(cpu0, 12, -2, 2, c.b...)
			ndtest.CheckGrad(t, pairBlock(c.m), []*nd.NDArray{a, b}, ndtest.GradTol{})
		})
	}
}

// TestEmbeddingBagGradCheck checks the gradients of the weight and of the
// per-sample weights numerically, for 2-D bags and offsets, with padding.
func TestEmbeddingBagGradCheck(t *testing.T) {
	ids2 := nd.FromSlice(cpu0, []int64{0, 2, 1, 3, 3, 5, 4, 1, 2}, 3, 3)
	ids1 := nd.FromSlice(cpu0, []int64{1, 2, 4, 0, 5, 5, 3, 2}, 8)
	offs := nd.FromSlice(cpu0, []int64{0, 3, 3, 5}, 4)
	for _, c := range []struct {
		name      string
		mode      string
		pad       int
		ids, offs *nd.NDArray
		psw       []int
	}{
		{"sum-2d-psw", "sum", -1, ids2, nil, []int{3, 3}},
		{"mean-2d-pad", "mean", 2, ids2, nil, nil},
		{"max-2d", "max", -1, ids2, nil, nil},
		{"sum-offsets-psw-pad", "sum", 5, ids1, offs, []int{8}},
		{"mean-offsets", "mean", -1, ids1, offs, nil},
		{"max-offsets-pad", "max", 2, ids1, offs, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := nn.NewEmbeddingBag(6, 3, c.mode)
			if c.pad >= 0 {
				e.WithPadding(c.pad)
			}
			initNet(t, e, initializer.Xavier{}, nd.Float64)
			e.Weight.SetData(ndtest.Rand(cpu0, 21, -1, 1, 6, 3))
			in := []*nd.NDArray{e.Weight.Data(cpu0)}
			if c.psw != nil {
				in = append(in, ndtest.Rand(cpu0, 22, 0.2, 2, c.psw...))
			}
			ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray {
				var psw *nd.NDArray
				if len(in) > 1 {
					psw = in[1]
				}
				return e.ForwardMulti(c.ids, c.offs, psw)[0]
			}, in, ndtest.GradTol{})
		})
	}
}

// TestLayersExtraMisuse: bad settings and inputs panic with an *nd.Error
// of the right kind naming the layer.
func TestLayersExtraMisuse(t *testing.T) {
	f32 := func(shape ...int) *nd.NDArray { return nd.Zeros(cpu0, nd.Float32, shape...) }
	ids := nd.FromSlice(cpu0, []int64{0, 1, 2, 3}, 2, 2)
	bag := func(mode string) *nn.EmbeddingBag {
		e := nn.NewEmbeddingBag(4, 2, mode)
		initNet(t, e, initializer.Xavier{}, nd.Float32)
		return e
	}
	for _, c := range []struct {
		name string
		kind nd.ErrorKind
		f    func()
		want string
	}{
		{"rmsnorm empty shape", nd.ErrArgument, func() { nn.NewRMSNorm(nil, nn.RMSNormOpts{}) }, "nn.NewRMSNorm"},
		{"rmsnorm size", nd.ErrArgument, func() { nn.NewRMSNorm([]int{0}, nn.RMSNormOpts{}) }, "positive"},
		{"rmsnorm eps", nd.ErrArgument, func() { nn.NewRMSNorm([]int{2}, nn.RMSNormOpts{Epsilon: -1}) }, "epsilon"},
		{"rmsnorm shape", nd.ErrShape, func() { forward(nn.NewRMSNorm([]int{3}, nn.RMSNormOpts{NoScale: true}), f32(2, 4)) }, "[3]"},
		{"rmsnorm ints", nd.ErrDType, func() { forward(nn.NewRMSNorm([]int{2}, nn.RMSNormOpts{NoScale: true}), ids) }, "nn.RMSNorm"},
		{"glu odd", nd.ErrShape, func() { forward(nn.NewGLU(-1), f32(2, 3)) }, "odd"},
		{"glu axis", nd.ErrShape, func() { forward(nn.NewGLU(2), f32(2, 4)) }, "axis 2"},
		{"softmax axis", nd.ErrShape, func() { forward(nn.NewSoftmax(-3), f32(2, 4)) }, "nn.Softmax"},
		{"softmin nil", nd.ErrArgument, func() { nn.NewSoftmin(0).Forward(nil) }, "nil"},
		{"softmax2d rank", nd.ErrShape, func() { forward(nn.NewSoftmax2D(), f32(2, 4)) }, "nn.Softmax2D"},
		{"rrelu bounds", nd.ErrArgument, func() { nn.NewRReLU(0.5, 0.1) }, "lower"},
		{"rrelu nan", nd.ErrArgument, func() { nn.NewRReLU(math.NaN(), 0.1) }, "finite"},
		{"dropout1d rate", nd.ErrArgument, func() { nn.NewDropout1D(1) }, "rate"},
		{"dropout1d rank", nd.ErrShape, func() { forward(nn.NewDropout1D(0.5), f32(2, 3, 4, 5)) }, "Dropout1D"},
		{"dropout2d 3-D", nd.ErrShape, func() { forward(nn.NewDropout2D(0.5), f32(2, 3, 4)) }, "Dropout1D"},
		{"dropout3d rank", nd.ErrShape, func() { forward(nn.NewDropout3D(0.5), f32(2, 3, 4)) }, "Dropout3D"},
		{"channel dropout literal", nd.ErrArgument, func() { forward(&nn.ChannelDropout{Rate: 0.5}, f32(2, 3)) }, "spatial"},
		{"alpha rate", nd.ErrArgument, func() { nn.NewAlphaDropout(-0.1) }, "rate"},
		{"feature alpha rank", nd.ErrShape, func() { forward(nn.NewFeatureAlphaDropout(0.5), f32(4)) }, "[N, C, ...]"},
		{"unflatten empty", nd.ErrArgument, func() { nn.NewUnflatten(1) }, "empty"},
		{"unflatten two free", nd.ErrArgument, func() { nn.NewUnflatten(1, -1, -1) }, "-1"},
		{"unflatten size", nd.ErrShape, func() { forward(nn.NewUnflatten(1, 4, -1), f32(2, 6)) }, "cannot be unflattened"},
		{"shuffle groups", nd.ErrArgument, func() { nn.NewChannelShuffle(0) }, "groups"},
		{"shuffle channels", nd.ErrShape, func() { forward(nn.NewChannelShuffle(4), f32(2, 6, 3)) }, "divisible"},
		{"shuffle rank", nd.ErrShape, func() { forward(nn.NewChannelShuffle(2), f32(2, 6)) }, "spatial"},
		{"pdist p", nd.ErrArgument, func() { nn.NewPairwiseDistance(0, 1e-6, false) }, "p = 0"},
		{"pdist eps", nd.ErrArgument, func() { nn.NewPairwiseDistance(2, -1, false) }, "eps"},
		{"pdist one input", nd.ErrArgument, func() { nn.NewPairwiseDistance(2, 0, false).ForwardMulti(f32(2, 3)) }, "two inputs"},
		{"pdist broadcast", nd.ErrShape, func() { nn.NewPairwiseDistance(2, 0, false).ForwardMulti(f32(2, 3), f32(2, 4)) }, ""},
		{"cosine eps", nd.ErrArgument, func() { nn.NewCosineSimilarity(1, math.Inf(1)) }, "eps"},
		{"cosine broadcast", nd.ErrShape, func() { nn.NewCosineSimilarity(1, 0).ForwardMulti(f32(2, 3), f32(2, 4)) }, "broadcast"},
		{"bag dims", nd.ErrArgument, func() { nn.NewEmbeddingBag(0, 2, "sum") }, "dimensions"},
		{"bag mode", nd.ErrArgument, func() { nn.NewEmbeddingBag(3, 2, "median") }, "median"},
		{"bag padding", nd.ErrArgument, func() { nn.NewEmbeddingBag(3, 2, "sum").WithPadding(3) }, "padding index"},
		{"bag float ids", nd.ErrDType, func() { bag("sum").Forward(f32(2, 2)) }, "integer"},
		{"bag 1-D without offsets", nd.ErrShape, func() { bag("sum").Forward(nd.FromSlice(cpu0, []int64{1, 2}, 2)) }, "offsets"},
		{"bag 2-D with offsets", nd.ErrShape, func() { bag("sum").ForwardMulti(ids, nd.FromSlice(cpu0, []int64{0}, 1)) }, "1-D"},
		{"bag index", nd.ErrArgument, func() { bag("sum").Forward(nd.FromSlice(cpu0, []int64{0, 4}, 1, 2)) }, "index 4"},
		{"bag negative index", nd.ErrArgument, func() { bag("mean").Forward(nd.FromSlice(cpu0, []int64{-1, 0}, 1, 2)) }, "index -1"},
		{"bag offsets start", nd.ErrArgument, func() {
			bag("sum").ForwardMulti(nd.FromSlice(cpu0, []int64{1, 2}, 2), nd.FromSlice(cpu0, []int64{1}, 1))
		}, "start at 1"},
		{"bag offsets order", nd.ErrArgument, func() {
			bag("sum").ForwardMulti(nd.FromSlice(cpu0, []int64{1, 2}, 2), nd.FromSlice(cpu0, []int64{0, 2, 1}, 3))
		}, "non-decreasing"},
		{"bag offsets past end", nd.ErrArgument, func() {
			bag("sum").ForwardMulti(nd.FromSlice(cpu0, []int64{1, 2}, 2), nd.FromSlice(cpu0, []int64{0, 3}, 2))
		}, "non-decreasing"},
		{"bag last offset", nd.ErrArgument, func() {
			e := bag("sum")
			e.IncludeLastOffset = true
			e.ForwardMulti(nd.FromSlice(cpu0, []int64{1, 2}, 2), nd.FromSlice(cpu0, []int64{0, 1}, 2))
		}, "IncludeLastOffset"},
		{"bag float offsets", nd.ErrArgument, func() { bag("sum").ForwardMulti(nd.FromSlice(cpu0, []int64{1, 2}, 2), f32(1)) }, "offsets"},
		{"bag psw mode", nd.ErrArgument, func() { bag("max").ForwardMulti(ids, nil, f32(2, 2)) }, "mode sum"},
		{"bag psw shape", nd.ErrShape, func() { bag("sum").ForwardMulti(ids, nil, f32(2, 3)) }, "per-sample"},
		{"bag psw dtype", nd.ErrDType, func() { bag("sum").ForwardMulti(ids, nil, nd.Zeros(cpu0, nd.Float64, 2, 2)) }, "per-sample"},
		{"bag psw context", nd.ErrContext, func() { bag("sum").ForwardMulti(ids, nil, nd.Zeros(cpu1, nd.Float32, 2, 2)) }, "cpu(1)"},
		{"bag no input", nd.ErrArgument, func() { bag("sum").ForwardMulti() }, "indices"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := mustNDPanic(t, c.kind, c.f, c.want)
			if e.Op == "" {
				t.Errorf("error names no op: %v", e)
			}
		})
	}
}

// TestChannelDropout: in training mode whole channels are zero or scaled
// by 1/(1 − p), about p of them dropped; in predict mode the input passes;
// unbatched inputs drop per channel too.
func TestChannelDropout(t *testing.T) {
	for _, c := range []struct {
		d     *nn.ChannelDropout
		shape []int
		per   int // elements per channel
	}{
		{nn.NewDropout1D(0.3), []int{40, 50, 6}, 6},
		{nn.NewDropout1D(0.3), []int{400, 5}, 5},
		{nn.NewDropout2D(0.5), []int{20, 50, 2, 3}, 6},
		{nn.NewDropout3D(0.2), []int{20, 50, 2, 1, 2}, 4},
		{nn.NewDropout3D(0.2), []int{500, 2, 2, 1}, 4},
	} {
		x := nd.Add(ndtest.Rand(cpu0, 3, 1, 2, c.shape...), nd.Zeros(cpu0, nd.Float64, c.shape...))
		y := forwardTrain(c.d, x)
		xs, ys := x.Float64s(), y.Float64s()
		dropped, channels := 0, len(xs)/c.per
		for ch := range channels {
			zero := ys[ch*c.per] == 0
			if zero {
				dropped++
			}
			for i := ch * c.per; i < (ch+1)*c.per; i++ {
				want := xs[i] / (1 - c.d.Rate)
				if zero {
					want = 0
				}
				if math.Abs(ys[i]-want) > 1e-12 {
					t.Fatalf("%v: element %d is %v, want %v (channel dropped: %v)", c.shape, i, ys[i], want, zero)
				}
			}
		}
		if share := float64(dropped) / float64(channels); math.Abs(share-c.d.Rate) > 0.06 {
			t.Errorf("%v: %.3f of the channels dropped, rate %g", c.shape, share, c.d.Rate)
		}
		allClose(t, "predict mode", forward(c.d, x), x, 0, 0)
	}
}

// TestRReLUTraining: positive inputs pass; the others are scaled by
// slopes drawn in [lower, upper) that vary; the gradient is the slope;
// predict mode uses the mean slope.
func TestRReLUTraining(t *testing.T) {
	r := nn.NewRReLU(0.1, 0.3)
	x := ndtest.AwayFrom(cpu0, 5, -2, 2, 0.01, []float64{0}, 400)
	x.AttachGrad(nd.GradWrite)
	var y, l *nd.NDArray
	autograd.Record(func() { y = r.Forward(x); l = nd.Sum(y) })
	autograd.Backward(l)
	xs, ys, gs := x.Float64s(), y.Float64s(), x.Grad().Float64s()
	var slopes []float64
	for i := range xs {
		if xs[i] > 0 {
			if ys[i] != xs[i] || gs[i] != 1 {
				t.Fatalf("positive %v gave %v, gradient %v", xs[i], ys[i], gs[i])
			}
			continue
		}
		s := ys[i] / xs[i]
		if s < 0.1-1e-12 || s >= 0.3 || math.Abs(gs[i]-s) > 1e-12 {
			t.Fatalf("negative %v gave slope %v, gradient %v", xs[i], s, gs[i])
		}
		slopes = append(slopes, s)
	}
	slices.Sort(slopes)
	if len(slopes) < 100 || slopes[len(slopes)-1]-slopes[0] < 0.15 {
		t.Errorf("%d slopes spanning %v to %v", len(slopes), slopes[0], slopes[len(slopes)-1])
	}
	got := forward(r, nd.FromSlice(cpu0, []float64{-1, 0, 2}, 3)).Float64s()
	if !slices.Equal(got, []float64{-0.2, 0, 2}) {
		t.Errorf("predict mode %v, want [-0.2 0 2]", got)
	}
}

// TestRandomLayersReproducible: the random layers draw from the input's
// session generator: the same seed repeats their draws, a hybridized
// block's replays draw what the eager block draws, and a session of its
// own draws its own stream; in a session's predict mode they are
// deterministic.
func TestRandomLayersReproducible(t *testing.T) {
	for _, blk := range []gluon.Block{nn.NewDropout2D(0.5), nn.NewAlphaDropout(0.4), nn.NewFeatureAlphaDropout(0.4), nn.NewRReLU(0.1, 0.4)} {
		x := ndtest.Rand(cpu0, 8, -1, 1, 4, 6, 3, 2)
		run := func(b gluon.Block) []float64 {
			nd.Seed(17)
			return forwardTrain(b, x).Float64s()
		}
		eager := run(blk)
		if !slices.Equal(run(blk), eager) {
			t.Errorf("%T: the same seed gave other draws", blk)
		}
		h := gluon.Hybridize(blk, gluon.HybridOpts{})
		for i := range 2 {
			if got := run(h); !slices.Equal(got, eager) {
				t.Errorf("%T: hybridized call %d drew other values than the eager block", blk, i)
			}
		}
		s := autograd.NewSession("layers-extra")
		var own, pred []float64
		nd.Seed(17)
		xs := func() *nd.NDArray { return s.FromSlice(cpu0, x.Float64s(), x.Shape()...) }
		s.TrainMode(func() { own = blk.Forward(xs()).Float64s() })
		s.PredictMode(func() { pred = blk.Forward(xs()).Float64s() })
		if slices.Equal(own, eager) {
			t.Errorf("%T: a session of its own drew the default session's values", blk)
		}
		want := forward(blk, x).Float64s()
		if !slices.Equal(pred, want) {
			t.Errorf("%T: session predict mode differs from predict mode", blk)
		}
	}
}

// TestEmbeddingBagEdges: index dtypes, empty bags and inputs, the padding
// row's initial zeros, hybridized 2-D bags, and offsets refused inside a
// trace.
func TestEmbeddingBagEdges(t *testing.T) {
	e := nn.NewEmbeddingBag(5, 2, "mean").WithPadding(1)
	initNet(t, e, initializer.Xavier{}, nd.Float32)
	if w := e.Weight.Data(cpu0).Float32s(); w[2] != 0 || w[3] != 0 || w[0] == 0 {
		t.Fatalf("padding row not zero: %v", w)
	}
	e.Weight.SetData(nd.Reshape(nd.Arange(cpu0, nd.Float32, 0, 10, 1), 5, 2))
	want := []float32{2, 3, 0, 0} // bag {0, 2} (1 is the padding), then an all-padding bag
	for _, ids := range []*nd.NDArray{
		nd.FromSlice(cpu0, []int64{0, 1, 2, 1, 1, 1}, 2, 3),
		nd.FromSlice(cpu0, []int32{0, 1, 2, 1, 1, 1}, 2, 3),
		nd.FromSlice(cpu0, []uint8{0, 1, 2, 1, 1, 1}, 2, 3),
	} {
		if got := e.Forward(ids).Float32s(); !slices.Equal(got, want) {
			t.Errorf("%v indices: %v, want %v", ids.DType(), got, want)
		}
	}
	h := gluon.Hybridize(e, gluon.HybridOpts{})
	ids := nd.FromSlice(cpu0, []int64{0, 1, 2, 1, 1, 1}, 2, 3)
	for range 2 {
		if got := h.Forward(ids).Float32s(); !slices.Equal(got, want) {
			t.Errorf("hybridized: %v, want %v", got, want)
		}
	}
	off := nd.FromSlice(cpu0, []int64{0, 2}, 2)
	if err := nd.Catch(func() { h.ForwardMulti(nd.FromSlice(cpu0, []int64{0, 2, 3}, 3), off) }); err == nil {
		t.Error("offsets were accepted in a trace")
	} else if e := (*nd.Error)(nil); !errors.As(err, &e) || e.Kind != nd.ErrTrace {
		t.Errorf("offsets in a trace: %v, want an ErrTrace error", err)
	}
	sum := nn.NewEmbeddingBag(5, 2, "sum")
	initNet(t, sum, initializer.Xavier{}, nd.Float32)
	for name, c := range map[string]struct {
		ids, offs *nd.NDArray
		shape     []int
	}{
		"no indices, two bags": {nd.Zeros(cpu0, nd.Int64, 0), nd.FromSlice(cpu0, []int64{0, 0}, 2), []int{2, 2}},
		"no bags":              {nd.Zeros(cpu0, nd.Int64, 0), nd.Zeros(cpu0, nd.Int64, 0), []int{0, 2}},
		"empty 2-D bags":       {nd.Zeros(cpu0, nd.Int64, 3, 0), nil, []int{3, 2}},
	} {
		y := sum.ForwardMulti(c.ids, c.offs)[0]
		if !slices.Equal(y.Shape(), c.shape) || slices.ContainsFunc(y.Float32s(), func(v float32) bool { return v != 0 }) {
			t.Errorf("%s: %v %v, want zeros %v", name, y.Shape(), y.Float32s(), c.shape)
		}
	}
}

// TestRMSNormHalf: a float16 input is normalised in float32 and rounded
// once, with float32's epsilon (2⁻²³, which tiny inputs feel), and the
// output stays float16.
func TestRMSNormHalf(t *testing.T) {
	r := nn.NewRMSNorm([]int{4}, nn.RMSNormOpts{NoScale: true})
	v := []float32{1e-4, -2e-4, 3e-4, 5e-5, 1, 2, -3, 4}
	x := nd.FromSlice(cpu0, v, 2, 4).AsType(nd.Float16)
	y := forward(r, x)
	if y.DType() != nd.Float16 {
		t.Fatalf("dtype %v", y.DType())
	}
	xs := x.Float32s()
	for row := range 2 {
		ms := 0.0
		for _, e := range xs[row*4 : row*4+4] {
			ms += float64(e) * float64(e) / 4
		}
		for i := row * 4; i < row*4+4; i++ {
			want := float32(float64(xs[i]) / math.Sqrt(ms+0x1p-23))
			want = nd.F16From(want).Float32()
			if got := y.Float32s()[i]; got != want {
				t.Errorf("element %d: %v, want %v", i, got, want)
			}
		}
	}
}

// TestIdentityInPredictModeHybridized: the dropouts return their input in
// predict mode, eagerly and hybridized.
func TestIdentityInPredictModeHybridized(t *testing.T) {
	x := ndtest.Rand(cpu0, 4, -1, 1, 2, 3, 2, 2)
	for _, blk := range []gluon.Block{nn.NewAlphaDropout(0.5), nn.NewFeatureAlphaDropout(0.5), nn.NewDropout2D(0.5)} {
		h := gluon.Hybridize(nn.NewSequential(blk), gluon.HybridOpts{})
		for range 2 {
			allClose(t, "hybridized predict mode", forward(h, x), x, 0, 0)
		}
	}
}

package nn_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

// TestWeightNormGradients checks the gradients through g·v/‖v‖ in float64
// numerically, for the input, g, v and the bias, with each Dim.
func TestWeightNormGradients(t *testing.T) {
	for _, c := range []struct {
		name  string
		block func() gluon.Block
		dim   int
		in    []int
	}{
		{"dense-dim0", func() gluon.Block { return nn.NewDense(3, nn.DenseOpts{InUnits: 4, Act: "tanh"}) }, 0, []int{2, 4}},
		{"dense-dim1", func() gluon.Block { return nn.NewDense(3, nn.DenseOpts{InUnits: 4}) }, 1, []int{2, 4}},
		{"dense-whole", func() gluon.Block { return nn.NewDense(3, nn.DenseOpts{InUnits: 4}) }, -1, []int{2, 4}},
		{"conv2d-dim0", func() gluon.Block {
			return nn.NewConv2D(3, 3, nn.Conv2DOpts{InChannels: 2, Pad: [2]int{1, 1}})
		}, 0, []int{1, 2, 4, 4}},
		{"conv2d-dim3", func() gluon.Block { return nn.NewConv2D(2, 2, nn.Conv2DOpts{InChannels: 2}) }, 3, []int{1, 2, 3, 3}},
		{"embedding", func() gluon.Block { return nn.NewEmbedding(5, 3) }, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.block()
			params := initNet(t, b, initializer.Xavier{}, nd.Float64)
			wn := nn.ApplyWeightNorm(b, nn.WeightNormOpts{Dim: c.dim})
			wn.G.SetData(ndtest.Rand(cpu0, 3, 0.5, 1.5, wn.G.Shape()...))
			wn.V.SetData(ndtest.Rand(cpu0, 4, -1, 1, wn.V.Shape()...))
			inputs := []*nd.NDArray{nil, wn.G.Data(cpu0), wn.V.Data(cpu0)}
			if bias := params.Get("bias"); bias != nil {
				inputs = append(inputs, bias.Data(cpu0))
			}
			var noGrad []int
			if c.in == nil { // the embedding's indices
				inputs[0] = nd.FromSlice(cpu0, []float64{0, 3, 3, 1}, 2, 2)
				noGrad = []int{0}
				f := func(in []*nd.NDArray) *nd.NDArray { return b.Forward(in[0].AsType(nd.Int64)) }
				ndtest.CheckGrad(t, f, inputs, ndtest.GradTol{}, noGrad...)
				return
			}
			inputs[0] = ndtest.Rand(cpu0, 5, -1, 1, c.in...)
			f := func(in []*nd.NDArray) *nd.NDArray { return b.Forward(in[0]) }
			if c.dim < 0 { // CheckGrad perturbs through 1-D copies: G (0-d) is checked apart
				checkScalarGrad(t, wn.G.Data(cpu0), func() *nd.NDArray { return b.Forward(inputs[0]) })
				inputs = slices.Delete(inputs, 1, 2)
			}
			ndtest.CheckGrad(t, f, inputs, ndtest.GradTol{})
		})
	}
}

// checkScalarGrad compares the gradient of Σ f()² with respect to the
// 0-d float64 array a with a central difference.
func checkScalarGrad(t *testing.T, a *nd.NDArray, f func() *nd.NDArray) {
	t.Helper()
	loss := func() float64 { return nd.Sum(nd.Square(f())).Scalar() }
	a.AttachGrad(nd.GradWrite)
	autograd.Record(func() { autograd.Backward(nd.Sum(nd.Square(f()))) })
	analytic := a.Grad().Scalar()
	at := a.Scalar()
	set := func(v float64) { nd.Assign(a, nd.Reshape(nd.FromSlice(cpu0, []float64{v}, 1))) }
	const h = 1e-6
	set(at + h)
	lp := loss()
	set(at - h)
	lm := loss()
	set(at)
	if num := (lp - lm) / (2 * h); math.Abs(num-analytic) > 1e-6+1e-4*math.Abs(num) {
		t.Errorf("0-d gradient %.8g, numerical %.8g", analytic, num)
	}
}

// TestSpectralNormGradients checks the gradients of a predict-mode pass
// (U and V fixed) numerically in float64: they reach the weight through
// W and through σ.
func TestSpectralNormGradients(t *testing.T) {
	for _, c := range []struct {
		name  string
		block func() gluon.Block
		in    []int
	}{
		{"dense", func() gluon.Block { return nn.NewDense(3, nn.DenseOpts{InUnits: 4, Act: "sigmoid"}) }, []int{2, 4}},
		{"conv2d", func() gluon.Block { return nn.NewConv2D(3, 2, nn.Conv2DOpts{InChannels: 2}) }, []int{1, 2, 3, 3}},
		{"conv2d-transpose", func() gluon.Block {
			return nn.NewConv2DTranspose(2, 2, nn.Conv2DTransposeOpts{InChannels: 3, Stride: [2]int{2, 2}})
		}, []int{1, 3, 2, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.block()
			params := initNet(t, b, initializer.Xavier{}, nd.Float64)
			sn := nn.ApplySpectralNorm(b, nn.SpectralNormOpts{})
			x := ndtest.Rand(cpu0, 5, -1, 1, c.in...)
			forwardTrain(b, x) // moves U and V
			inputs := []*nd.NDArray{x, sn.Orig.Data(cpu0), params.Get("bias").Data(cpu0)}
			ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return b.Forward(in[0]) }, inputs, ndtest.GradTol{})
		})
	}
}

// TestLocalResponseNormGradients checks the composition's input gradient
// numerically for 3-, 4- and 5-D inputs.
func TestLocalResponseNormGradients(t *testing.T) {
	for _, c := range []struct {
		size  int
		shape []int
	}{{3, []int{2, 4, 3}}, {2, []int{1, 5, 2, 2}}, {4, []int{1, 3, 2, 1, 2}}, {1, []int{1, 2, 3}}} {
		l := nn.NewLocalResponseNorm(c.size, nn.LocalResponseNormOpts{Alpha: new(0.9), Beta: new(0.7), K: new(1.3)})
		x := ndtest.Rand(cpu0, 6, -2, 2, c.shape...)
		ndtest.CheckGrad(t, func(in []*nd.NDArray) *nd.NDArray { return l.Forward(in[0]) }, []*nd.NDArray{x}, ndtest.GradTol{})
	}
}

// TestNormParamNames: the reparameterised layers' parameter names (those
// of PyTorch's weight_norm and spectral_norm state dicts) and their
// Aliases (those of torch.nn.utils.parametrizations).
func TestNormParamNames(t *testing.T) {
	net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{}), nn.NewConv2D(2, 3, nn.Conv2DOpts{}), nn.NewDense(2, nn.DenseOpts{NoBias: true}))
	kids := net.Children()
	nn.ApplyWeightNorm(kids[0], nn.WeightNormOpts{})
	nn.ApplySpectralNorm(kids[1], nn.SpectralNormOpts{})
	nn.ApplyWeightNorm(kids[2], nn.WeightNormOpts{Dim: -1})
	params := gluon.CollectParams(net)
	want := []string{"dense0.weight_v", "dense0.weight_g", "dense0.bias",
		"conv0.weight_orig", "conv0.weight_u", "conv0.weight_v", "conv0.bias",
		"dense1.weight_v", "dense1.weight_g"}
	if got := params.Names(); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	aliases := map[string]string{
		"dense0.weight_v": "parametrizations.weight.original1", "dense0.weight_g": "parametrizations.weight.original0",
		"conv0.weight_orig": "parametrizations.weight.original", "conv0.weight_u": "parametrizations.weight.0._u",
		"conv0.weight_v": "parametrizations.weight.0._v",
	}
	for name, alias := range aliases {
		if got := params.Get(name).Alias; got != alias {
			t.Errorf("%s: alias %q, want %q", name, got, alias)
		}
	}
	for _, name := range []string{"conv0.weight_u", "conv0.weight_v"} {
		if p := params.Get(name); p.GradReq() != nd.GradNull || !p.Statistic {
			t.Errorf("%s: grad_req %v, statistic %v; want a statistic without gradient", name, p.GradReq(), p.Statistic)
		}
	}
	if s := params.Get("dense1.weight_g").Shape(); len(s) != 0 {
		t.Errorf("whole-tensor g has shape %v, want 0-d", s)
	}
}

// TestNormDeferredInit: reparameterised before initialisation, with the
// input size inferred at the first pass, G starts as V's norms (w = v)
// and U, V as the power method's start on the weight.
func TestNormDeferredInit(t *testing.T) {
	for _, early := range []bool{false, true} {
		nd.Seed(7)
		wnDense, snDense := nn.NewDense(4, nn.DenseOpts{}), nn.NewDense(5, nn.DenseOpts{})
		net := nn.NewSequential(wnDense, snDense)
		var wn *nn.WeightNorm
		var sn *nn.SpectralNorm
		apply := func() {
			wn = nn.ApplyWeightNorm(wnDense, nn.WeightNormOpts{})
			sn = nn.ApplySpectralNorm(snDense, nn.SpectralNormOpts{})
		}
		if early { // before Initialize
			apply()
		}
		initNet(t, net, initializer.Xavier{}, nd.Float64)
		if !early { // after Initialize, the shapes still deferred
			apply()
		}
		forward(net, ndtest.Rand(cpu0, 8, -1, 1, 2, 6))
		v := wn.V.Data(cpu0).Float64s()
		if slices.Max(v) == slices.Min(v) {
			t.Fatal("V holds no initial values")
		}
		closeSlice(t, "weight = v", wnDense.Weight.Data(cpu0).Float64s(), v, 1e-12)
		sigma := sn.Sigma(cpu0)
		top := topSingular(sn.Orig.Data(cpu0).Float64s(), 5, 4)
		if !(sigma > 0.95*top && sigma <= top*(1+1e-9)) {
			t.Errorf("early %v: sigma %.6g after the start's 15 iterations; the largest singular value is %.6g", early, sigma, top)
		}
	}
}

// topSingular is the largest singular value of the rows×cols matrix m,
// by 500 power iterations on the host.
func topSingular(m []float64, rows, cols int) float64 {
	v := make([]float64, cols)
	for i := range v {
		v[i] = 1 + float64(i)/10
	}
	var s float64
	for range 500 {
		u := make([]float64, rows)
		for r := range rows {
			for c := range cols {
				u[r] += m[r*cols+c] * v[c]
			}
		}
		s = math.Sqrt(dot(u, u))
		for i := range v {
			v[i] = 0
		}
		for c := range cols {
			for r := range rows {
				v[c] += m[r*cols+c] * u[r] / s
			}
		}
		n := math.Sqrt(dot(v, v))
		for i := range v {
			v[i] /= n
		}
	}
	return s
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestWeightNormOneDim: a one-dimensional weight (a LayerNorm's gamma)
// gets one magnitude per element, |gamma|, and the layer computes what it
// did.
func TestWeightNormOneDim(t *testing.T) {
	l := nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 3})
	initNet(t, l, initializer.Xavier{}, nd.Float64)
	l.Gamma.SetData(nd.FromSlice(cpu0, []float64{-2, 0.5, 3}))
	x := ndtest.Rand(cpu0, 1, -1, 1, 2, 3)
	want := forward(l, x).Float64s()
	wn := nn.ApplyWeightNorm(l, nn.WeightNormOpts{Name: "gamma"})
	closeSlice(t, "g", wn.G.Data(cpu0).Float64s(), []float64{2, 0.5, 3}, 0)
	closeSlice(t, "output", forward(l, x).Float64s(), want, 1e-15)
	if got := gluon.CollectParams(l).Names(); !slices.Equal(got, []string{"gamma_v", "gamma_g", "beta"}) {
		t.Errorf("names %v", got)
	}
}

// TestSpectralNormSeed: U's and V's starting values follow nd.Seed.
func TestSpectralNormSeed(t *testing.T) {
	start := func(seed uint64) []float64 {
		d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
		nd.Seed(seed)
		initNet(t, d, initializer.Xavier{}, nd.Float32)
		d.Weight.SetData(seq(cpu0, 0.1, -0.5, 3, 4))
		sn := nn.ApplySpectralNorm(d, nn.SpectralNormOpts{})
		return append(sn.U.Data(cpu0).Float64s(), sn.V.Data(cpu0).Float64s()...)
	}
	a, b := start(1), start(1)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different starts %v and %v", a, b)
	}
	var n float64
	for _, x := range a[:3] {
		n += x * x
	}
	if math.Abs(n-1) > 1e-6 {
		t.Errorf("u has norm² %g, want 1", n)
	}
}

// TestNormRemove: Remove bakes the weight in (the output is unchanged) and
// restores the plain parameter names; removing twice is an error.
func TestNormRemove(t *testing.T) {
	for _, kind := range []string{"weight", "spectral", "spectral-1d"} {
		t.Run(kind, func(t *testing.T) {
			var b gluon.Block = nn.NewDense(3, nn.DenseOpts{InUnits: 4})
			in := []int{2, 4}
			if kind == "spectral-1d" {
				b = nn.NewLayerNorm(-1, nn.NormOpts{InChannels: 4})
			}
			params := initNet(t, b, initializer.Xavier{}, nd.Float32, cpu0, cpu1)
			before := params.Names()
			var remove func() error
			switch kind {
			case "weight":
				wn := nn.ApplyWeightNorm(b, nn.WeightNormOpts{Dim: 1})
				wn.G.SetData(seq(cpu0, 0.1, 0.5, 1, 4))
				remove = wn.Remove
			case "spectral":
				remove = nn.ApplySpectralNorm(b, nn.SpectralNormOpts{}).Remove
			default:
				remove = nn.ApplySpectralNorm(b, nn.SpectralNormOpts{Name: "gamma"}).Remove
			}
			x := randX(cpu1, 3, in...)
			want := forward(b, x).Float64s()
			if err := remove(); err != nil {
				t.Fatal(err)
			}
			if got := gluon.CollectParams(b).Names(); !slices.Equal(got, before) {
				t.Errorf("names after Remove %v, want %v", got, before)
			}
			closeSlice(t, "output after Remove", forward(b, x).Float64s(), want, 1e-6)
			w := gluon.CollectParams(b).List()[0]
			if w.Derivation() != nil || !slices.Equal(w.Contexts(), []ctx.Context{cpu0, cpu1}) {
				t.Errorf("%s: derivation %v, contexts %v", w.Name(), w.Derivation(), w.Contexts())
			}
			if err := remove(); err == nil || !strings.Contains(err.Error(), "already removed") {
				t.Errorf("second Remove: %v", err)
			}
		})
	}
}

// TestNormErrors: a missing parameter (or one already replaced) and a
// bad Dim panic with ErrArgument naming them.
func TestNormErrors(t *testing.T) {
	d := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
	mustNDPanic(t, nd.ErrArgument, func() { nn.ApplyWeightNorm(d, nn.WeightNormOpts{Name: "kernel"}) }, `"kernel"`)
	mustNDPanic(t, nd.ErrArgument, func() { nn.ApplyWeightNorm(d, nn.WeightNormOpts{Dim: 2}) }, "dim 2")
	mustNDPanic(t, nd.ErrArgument, func() { nn.ApplySpectralNorm(d, nn.SpectralNormOpts{Dim: new(5)}) }, "dim 5")
	mustNDPanic(t, nd.ErrArgument, func() { nn.ApplySpectralNorm(d, nn.SpectralNormOpts{Iterations: -1}) }, "-1 iterations")
	nn.ApplyWeightNorm(d, nn.WeightNormOpts{})
	mustNDPanic(t, nd.ErrArgument, func() { nn.ApplySpectralNorm(d, nn.SpectralNormOpts{}) }, `no parameter "weight"`)
	mustNDPanic(t, nd.ErrArgument, func() { nn.NewLocalResponseNorm(0, nn.LocalResponseNormOpts{}) }, "size 0")
	mustNDPanic(t, nd.ErrShape, func() { nn.NewLocalResponseNorm(3, nn.LocalResponseNormOpts{}).Forward(randX(cpu0, 1, 2, 3)) }, "[2 3]")
}

// TestNormSaveLoad: the reparameterised parameters save and load under
// their names, onto other contexts, and load from a file with PyTorch's
// parametrizations names through their Aliases.
func TestNormSaveLoad(t *testing.T) {
	build := func(deferred bool) (*nn.Sequential, *nn.WeightNorm, *nn.SpectralNorm) {
		in0, in1 := 4, 3
		if deferred {
			in0, in1 = 0, 0
		}
		net := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: in0}), nn.NewDense(2, nn.DenseOpts{InUnits: in1}))
		kids := net.Children()
		return net, nn.ApplyWeightNorm(kids[0], nn.WeightNormOpts{}), nn.ApplySpectralNorm(kids[1], nn.SpectralNormOpts{})
	}
	nd.Seed(3)
	net, _, sn := build(false)
	params := initNet(t, net, initializer.Xavier{}, nd.Float32, cpu0)
	x := randX(cpu0, 4, 2, 4)
	forwardTrain(net, x) // U and V move
	want := forward(net, x).Float64s()
	dir := t.TempDir()
	path := filepath.Join(dir, "net.safetensors")
	if err := params.Save(path); err != nil {
		t.Fatal(err)
	}

	for _, deferred := range []bool{false, true} {
		nd.Seed(99)
		net2, _, sn2 := build(deferred)
		if err := gluon.LoadParameters(net2, path, cpu1); err != nil {
			t.Fatal(err)
		}
		closeSlice(t, "loaded u", sn2.U.Data(cpu1).Float64s(), sn.U.Data(cpu0).Float64s(), 0)
		closeSlice(t, "output after load", forward(net2, x.CopyTo(cpu1)).Float64s(), want, 0)
		closeSlice(t, "u after a predict pass", sn2.U.Data(cpu1).Float64s(), sn.U.Data(cpu0).Float64s(), 0)
	}

	// The same values under torch.nn.utils.parametrizations' names.
	torchNames := map[string]string{
		"dense0.weight_g": "dense0.parametrizations.weight.original0", "dense0.weight_v": "dense0.parametrizations.weight.original1",
		"dense1.weight_orig": "dense1.parametrizations.weight.original", "dense1.weight_u": "dense1.parametrizations.weight.0._u",
		"dense1.weight_v": "dense1.parametrizations.weight.0._v",
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	renamed := &safetensors.File{Tensors: map[string]safetensors.Tensor{}}
	for name, tensor := range f.Tensors {
		if n, ok := torchNames[name]; ok {
			name = n
		}
		renamed.Tensors[name] = tensor
	}
	torchPath := filepath.Join(dir, "torch.safetensors")
	if err := safetensors.WriteFile(torchPath, renamed); err != nil {
		t.Fatal(err)
	}
	net3, _, _ := build(true)
	if err := gluon.LoadParameters(net3, torchPath, cpu0); err != nil {
		t.Fatal(err)
	}
	closeSlice(t, "output after loading torch names", forward(net3, x).Float64s(), want, 0)
}

// TestNormMultiContext trains a network with a weight-normalised dense
// layer and a spectrally normalised convolution on cpu(0) and cpu(1)
// with a Trainer: the replicas stay equal (U and V too, updated on each
// context by its own passes) and the result equals training on cpu(0)
// alone with the whole batch.
func TestNormMultiContext(t *testing.T) {
	run := func(devs []ctx.Context) *gluon.ParamDict {
		nd.Seed(11)
		conv := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, Act: "tanh"})
		dense := nn.NewDense(2, nn.DenseOpts{})
		net := nn.NewSequential(conv, nn.NewFlatten(), dense)
		nn.ApplySpectralNorm(conv, nn.SpectralNormOpts{})
		nn.ApplyWeightNorm(dense, nn.WeightNormOpts{})
		params := initNet(t, net, initializer.Xavier{}, nd.Float32, devs...)
		tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.1), "device", gluon.TrainerOpts{})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		x := randX(cpu0, 12, 4, 2, 3, 3)
		y := randX(cpu0, 13, 4, 2)
		for range 4 {
			xs, err := gluon.SplitAndLoad(x, devs, true)
			if err != nil {
				t.Fatal(err)
			}
			ys, _ := gluon.SplitAndLoad(y, devs, true)
			autograd.Record(func() {
				err = gluon.ForEachDevice(devs, func(i int, _ ctx.Context) error {
					autograd.Backward(nd.Sum(nd.Square(nd.Sub(net.Forward(xs[i]), ys[i]))))
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Step(4); err != nil {
				t.Fatal(err)
			}
		}
		return params
	}
	one, two := run([]ctx.Context{cpu0}), run([]ctx.Context{cpu0, cpu1})
	for _, name := range two.Names() {
		reps := two.Get(name).ListData()
		if !slices.Equal(reps[0].Float64s(), reps[1].Float64s()) {
			t.Errorf("%s: replicas differ", name)
		}
		closeSlice(t, name+" vs one context", reps[0].Float64s(), one.Get(name).Data(cpu0).Float64s(), 1e-5)
	}
}

// TestNormHybridize: a hybridized network with both wrappers gives the
// eager network's outputs, gradients and U updates.
func TestNormHybridize(t *testing.T) {
	build := func() (*nn.Sequential, *gluon.ParamDict) {
		nd.Seed(21)
		conv := nn.NewConv2D(3, 3, nn.Conv2DOpts{InChannels: 2, Pad: [2]int{1, 1}})
		dense := nn.NewDense(2, nn.DenseOpts{InUnits: 12})
		net := nn.NewSequential(conv, nn.NewLocalResponseNorm(2, nn.LocalResponseNormOpts{Alpha: new(0.5)}), nn.NewMaxPool2D(2, nn.PoolOpts{}), nn.NewFlatten(), dense)
		nn.ApplySpectralNorm(conv, nn.SpectralNormOpts{})
		nn.ApplyWeightNorm(dense, nn.WeightNormOpts{})
		return net, initNet(t, net, initializer.Xavier{}, nd.Float32)
	}
	eager, ep := build()
	hnet, hp := build()
	h := gluon.Hybridize(hnet, gluon.HybridOpts{})
	x := randX(cpu0, 22, 2, 2, 4, 4)
	for range 3 {
		var ye, yh *nd.NDArray
		autograd.Record(func() {
			ye = eager.Forward(x)
			autograd.Backward(nd.Sum(nd.Square(ye)))
			yh = h.Forward(x)
			autograd.Backward(nd.Sum(nd.Square(yh)))
		})
		closeSlice(t, "output", yh.Float64s(), ye.Float64s(), 1e-6)
		for _, name := range ep.Names() {
			p, q := ep.Get(name), hp.Get(name)
			closeSlice(t, name, q.Data(cpu0).Float64s(), p.Data(cpu0).Float64s(), 1e-6)
			if p.GradReq() != nd.GradNull {
				closeSlice(t, name+" gradient", q.Grad(cpu0).Float64s(), p.Grad(cpu0).Float64s(), 1e-5)
			}
		}
	}
	if s := h.Stats(); s.Replays == 0 {
		t.Errorf("no replays: %+v", s)
	}
}

// TestNormInitByName: a reparameterised parameter other than a weight
// starts as the original would have by its name's initialisation rule
// when the network is initialised afterwards (before, or with its shape
// inferred later): gamma at ones, beta at zeros, whatever the network's
// initializer. gamma_v and gamma_orig used to take the initializer's
// draw (Xavier panicked on the 1-D shape).
func TestNormInitByName(t *testing.T) {
	for _, c := range []struct {
		name, param, kind string
		inChannels        int
		want              float64
	}{
		{"gamma-weight", "gamma", "weight", 4, 1},
		{"gamma-spectral", "gamma", "spectral", 4, 1},
		{"beta-weight", "beta", "weight", 4, 0},
		{"beta-spectral", "beta", "spectral", 4, 0},
		{"gamma-weight-deferred", "gamma", "weight", 0, 1},
		{"gamma-spectral-deferred", "gamma", "spectral", 0, 1},
		{"beta-spectral-deferred", "beta", "spectral", 0, 0},
	} {
		for _, init := range []initializer.Initializer{initializer.Uniform{Scale: 0.5}, initializer.Xavier{}} {
			t.Run(fmt.Sprintf("%s/%T", c.name, init), func(t *testing.T) {
				l := nn.NewLayerNorm(-1, nn.NormOpts{InChannels: c.inChannels})
				var src *gluon.Parameter
				if c.kind == "weight" {
					src = nn.ApplyWeightNorm(l, nn.WeightNormOpts{Name: c.param}).V
				} else {
					src = nn.ApplySpectralNorm(l, nn.SpectralNormOpts{Name: c.param}).Orig
				}
				if err := nd.Catch(func() {
					initNet(t, l, init, nd.Float32)
					forward(l, randX(cpu0, 1, 2, 4)) // infers deferred shapes
				}); err != nil {
					t.Fatalf("initialise: %v", err)
				}
				for _, v := range src.Data(cpu0).Float64s() {
					if v != c.want {
						t.Fatalf("%s starts at %v, want %v (as %s would)", src.Name(), src.Data(cpu0).Float64s(), c.want, c.param)
					}
				}
			})
		}
	}
}

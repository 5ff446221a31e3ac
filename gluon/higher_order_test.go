package gluon_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/loss"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// hoTol is the largest difference from PyTorch the higher-order goldens
// accept, relative to the largest magnitude of the array compared.
const hoTol = 1e-10

// hoArr is one array of testdata/higher_order_goldens.json.
type hoArr struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// nd returns the array on cpu(0).
func (a hoArr) nd() *nd.NDArray { return nd.FromSlice(ctx.CPU(0), slices.Clone(a.Data), a.Shape...) }

// hoMAML is one MAML case: steps inner SGD steps of size alpha on the
// training batch, then the validation loss at the fast weights.
type hoMAML struct {
	Steps       int       `json:"steps"`
	Alpha       float64   `json:"alpha"`
	Params      []hoArr   `json:"params"`
	XTrain      hoArr     `json:"x_train"`
	YTrain      []int     `json:"y_train"`
	XVal        hoArr     `json:"x_val"`
	YVal        []int     `json:"y_val"`
	TrainLosses []float64 `json:"train_losses"`
	Fast        []hoArr   `json:"fast"`
	ValLoss     float64   `json:"val_loss"`
	Grads       []hoArr   `json:"grads"`
}

// hoGoldens is testdata/higher_order_goldens.json, written by
// testdata/make_higher_order_goldens.py (torch 1.13, float64). Parameters
// and gradients are listed in the order of the torch module's
// parameters(): each layer's weight, then its bias.
type hoGoldens struct {
	WGANGP struct {
		Params          []hoArr `json:"params"`
		Real, Fake, Eps hoArr
		InputGrad       hoArr `json:"input_grad"`
		Penalty, Loss   float64
		Grads           []hoArr `json:"grads"`
	} `json:"wgan_gp"`
	R1 struct {
		Params        []hoArr `json:"params"`
		X             hoArr   `json:"x"`
		InputGrad     hoArr   `json:"input_grad"`
		Penalty, Loss float64
		Grads         []hoArr `json:"grads"`
		RunningMean   hoArr   `json:"running_mean"`
		RunningVar    hoArr   `json:"running_var"`
	} `json:"r1_batchnorm"`
	MAML []hoMAML `json:"maml"`
	HVP  struct {
		Params []hoArr `json:"params"`
		X      hoArr   `json:"x"`
		Y      []int   `json:"y"`
		V      []hoArr `json:"v"`
		Loss   float64 `json:"loss"`
		Grads  []hoArr `json:"grads"`
		HVP    []hoArr `json:"hvp"`
	} `json:"hvp"`
}

// hoCmp compares results with goldens and keeps the worst relative
// difference it has seen, for the log.
type hoCmp struct {
	t     *testing.T
	worst float64
	where string
}

// arr compares got with want element by element, relative to want's
// largest magnitude, and fails beyond hoTol.
func (c *hoCmp) arr(what string, got *nd.NDArray, want hoArr) {
	c.t.Helper()
	if !slices.Equal(got.Shape(), want.Shape) {
		c.t.Errorf("%s: shape %v, torch %v", what, got.Shape(), want.Shape)
		return
	}
	scale := 0.0
	for _, w := range want.Data {
		scale = math.Max(scale, math.Abs(w))
	}
	if scale == 0 {
		scale = 1
	}
	g := got.Float64s()
	worst, at := 0.0, 0
	for i, w := range want.Data {
		if d := math.Abs(g[i]-w) / scale; d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	c.note(what, worst)
	if !(worst <= hoTol) {
		c.t.Errorf("%s: element %d is %.17g, torch %.17g (relative difference %.3g > %g)", what, at, g[at], want.Data[at], worst, hoTol)
	}
}

// scalar compares a 0-d or one-element result with want.
func (c *hoCmp) scalar(what string, got *nd.NDArray, want float64) {
	c.t.Helper()
	g := got.Float64s()
	if len(g) != 1 {
		c.t.Errorf("%s: %d elements, want one", what, len(g))
		return
	}
	d := math.Abs(g[0]-want) / math.Max(math.Abs(want), 1e-300)
	c.note(what, d)
	if !(d <= hoTol) {
		c.t.Errorf("%s = %.17g, torch %.17g (relative difference %.3g > %g)", what, g[0], want, d, hoTol)
	}
}

// note records a difference.
func (c *hoCmp) note(what string, d float64) {
	if d > c.worst || math.IsNaN(d) {
		c.worst, c.where = d, what
	}
}

// log reports the worst difference seen.
func (c *hoCmp) log() {
	c.t.Logf("worst relative difference from torch: %.3g (%s)", c.worst, c.where)
}

// grads compares the gradients of ps with want, in order.
func (c *hoCmp) grads(ps []*gluon.Parameter, want []hoArr) {
	c.t.Helper()
	for i, p := range ps {
		c.arr("gradient of "+p.Name(), p.Grad(ctx.CPU(0)), want[i])
	}
}

// loadHigherOrderGoldens reads testdata/higher_order_goldens.json.
func loadHigherOrderGoldens(t *testing.T) *hoGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/higher_order_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g hoGoldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// hoInit makes every parameter of net float64 on cpu(0) and sets ps, in
// order, to torch's values.
func hoInit(t *testing.T, net gluon.Block, ps []*gluon.Parameter, vals []hoArr) {
	t.Helper()
	all := gluon.CollectParams(net)
	for _, p := range all.List() {
		p.SetDType(nd.Float64)
	}
	if err := all.Initialize(nil, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(vals) {
		t.Fatalf("%d parameters, the goldens have %d", len(ps), len(vals))
	}
	for i, p := range ps {
		if !slices.Equal(p.Shape(), vals[i].Shape) {
			t.Fatalf("parameter %s has shape %v, torch's %d-th %v", p.Name(), p.Shape(), i, vals[i].Shape)
		}
		p.SetData(vals[i].nd())
	}
}

// hoData returns the replicas of ps on cpu(0): the leaves a functional
// forward pass and GradWith take.
func hoData(ps []*gluon.Parameter) []*nd.NDArray {
	out := make([]*nd.NDArray, len(ps))
	for i, p := range ps {
		out[i] = p.Data(ctx.CPU(0))
	}
	return out
}

// hoMLP is the Dense-tanh-Dense classifier on explicit weights w1, b1, w2,
// b2 (recorded arrays, such as MAML's fast weights).
func hoMLP(w []*nd.NDArray, x *nd.NDArray) *nd.NDArray {
	return nd.FullyConnected(nd.Tanh(nd.FullyConnected(x, w[0], w[1])), w[2], w[3])
}

// hoCE is the batch mean of the softmax cross-entropy of logits against
// class indices y (PyTorch's F.cross_entropy).
func hoCE(logits *nd.NDArray, y []int) *nd.NDArray {
	return nd.Mean(loss.NewSoftmaxCrossEntropy().Forward(logits, nd.FromSlice(logits.Context(), y)))
}

// TestHigherOrderGoldens runs second-order training workloads built from
// the gluon/nn layers in float64 and matches PyTorch's
// torch.autograd.grad(create_graph=True) on the same weights and data
// (testdata/make_higher_order_goldens.py): a WGAN-GP gradient penalty on a
// conv critic, an R1 penalty through training-mode BatchNorm, ReLU and max
// pooling, MAML's outer gradient after one and two inner steps, and a
// Hessian-vector product of a classifier's loss.
func TestHigherOrderGoldens(t *testing.T) {
	g := loadHigherOrderGoldens(t)
	t.Run("wgan_gp", func(t *testing.T) { testWGANGP(t, g) })
	t.Run("r1_batchnorm", func(t *testing.T) { testR1BatchNorm(t, g) })
	if len(g.MAML) != 2 {
		t.Fatalf("%d MAML cases, want the generator's 2", len(g.MAML))
	}
	for _, c := range g.MAML {
		t.Run("maml_steps"+string(rune('0'+c.Steps)), func(t *testing.T) { testMAML(t, c) })
	}
	t.Run("hvp", func(t *testing.T) { testHVP(t, g) })
}

// testWGANGP: loss = mean(D(fake)) − mean(D(real)) + 10·mean((‖∂D(x̂)/∂x̂‖₂
// − 1)²), the norm per sample, on x̂ = ε·real + (1−ε)·fake.
func testWGANGP(t *testing.T, g *hoGoldens) {
	c := g.WGANGP
	conv1 := nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 1})
	conv2 := nn.NewConv2D(8, 3, nn.Conv2DOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, InChannels: 4})
	dense := nn.NewDense(1, nn.DenseOpts{InUnits: 8 * 4 * 4})
	critic := nn.NewSequential(conv1, nn.NewLeakyReLU(0.2), conv2, nn.NewLeakyReLU(0.2), nn.NewFlatten(), dense)
	ps := []*gluon.Parameter{conv1.Weight, conv1.Bias, conv2.Weight, conv2.Bias, dense.Weight, dense.Bias}
	hoInit(t, critic, ps, c.Params)

	real, fake, eps := c.Real.nd(), c.Fake.nd(), c.Eps.nd()
	xHat := nd.Add(nd.Mul(eps, real), nd.Mul(nd.RSubScalar(1, eps), fake))
	xHat.AttachGrad(nd.GradWrite)
	var gx, penalty, l *nd.NDArray
	autograd.Record(func() {
		dHat := critic.Forward(xHat)
		gx = nd.GradWith([]*nd.NDArray{nd.Sum(dHat)}, []*nd.NDArray{xHat}, nd.GradOpts{CreateGraph: true})[0]
		norms := nd.Norm(nd.Reshape(gx, 4, -1), 2, 1)
		penalty = nd.Mean(nd.Square(nd.SubScalar(norms, 1)))
		l = nd.Add(nd.Sub(nd.Mean(critic.Forward(fake)), nd.Mean(critic.Forward(real))), nd.MulScalar(penalty, 10))
		autograd.Backward(l)
	})
	cmp := &hoCmp{t: t}
	cmp.arr("∂D/∂x̂", gx, c.InputGrad)
	cmp.scalar("penalty", penalty, c.Penalty)
	cmp.scalar("loss", l, c.Loss)
	cmp.grads(ps, c.Grads)
	cmp.log()
}

// testR1BatchNorm: loss = mean(softplus(−D(x))) + 5·Σ(∂D/∂x)² through
// Conv2D (without a bias, as before a BatchNorm: its gradient would be 0
// up to rounding), BatchNorm in training mode, ReLU, MaxPool2D and Dense;
// the running statistics move once, as torch's.
func testR1BatchNorm(t *testing.T, g *hoGoldens) {
	c := g.R1
	conv := nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 2, NoBias: true})
	bn := nn.NewBatchNorm(nn.BatchNormOpts{InChannels: 4})
	dense := nn.NewDense(1, nn.DenseOpts{InUnits: 4 * 4 * 4})
	net := nn.NewSequential(conv, bn, nn.NewActivation("relu"), nn.NewMaxPool2D(2, nn.PoolOpts{}), nn.NewFlatten(), dense)
	ps := []*gluon.Parameter{conv.Weight, bn.Gamma, bn.Beta, dense.Weight, dense.Bias}
	hoInit(t, net, ps, c.Params)

	x := c.X.nd()
	x.AttachGrad(nd.GradWrite)
	var gx, penalty, l *nd.NDArray
	autograd.Record(func() {
		out := net.Forward(x)
		gx = nd.GradWith([]*nd.NDArray{nd.Sum(out)}, []*nd.NDArray{x}, nd.GradOpts{CreateGraph: true})[0]
		penalty = nd.Sum(nd.Square(gx))
		l = nd.Add(nd.Mean(nd.Softrelu(nd.Neg(out))), nd.MulScalar(penalty, 5))
		autograd.Backward(l)
	})
	cmp := &hoCmp{t: t}
	cmp.arr("∂D/∂x", gx, c.InputGrad)
	cmp.scalar("penalty", penalty, c.Penalty)
	cmp.scalar("loss", l, c.Loss)
	cmp.grads(ps, c.Grads)
	cmp.arr("running mean", bn.RunningMean.Data(ctx.CPU(0)), c.RunningMean)
	cmp.arr("running variance", bn.RunningVar.Data(ctx.CPU(0)), c.RunningVar)
	cmp.log()
}

// testMAML: fast weights θ' = θ − α·∇θ L_train(θ), with the gradient
// recorded (the first step through the Dense layers, later ones through
// hoMLP on the previous fast weights), and the gradient of L_val(θ') with
// respect to θ.
func testMAML(t *testing.T, c hoMAML) {
	d1 := nn.NewDense(16, nn.DenseOpts{Act: "tanh", InUnits: 5})
	d2 := nn.NewDense(3, nn.DenseOpts{InUnits: 16})
	net := nn.NewSequential(d1, d2)
	ps := []*gluon.Parameter{d1.Weight, d1.Bias, d2.Weight, d2.Bias}
	hoInit(t, net, ps, c.Params)

	xTr, xVal := c.XTrain.nd(), c.XVal.nd()
	var trainLosses []*nd.NDArray
	var fast []*nd.NDArray
	var lVal *nd.NDArray
	autograd.Record(func() {
		fast = hoData(ps)
		for s := range c.Steps {
			var logits *nd.NDArray
			if s == 0 {
				logits = net.Forward(xTr)
			} else {
				logits = hoMLP(fast, xTr)
			}
			lTr := hoCE(logits, c.YTrain)
			trainLosses = append(trainLosses, lTr)
			gs := nd.GradWith([]*nd.NDArray{lTr}, fast, nd.GradOpts{CreateGraph: true})
			next := make([]*nd.NDArray, len(fast))
			for i := range fast {
				next[i] = nd.Sub(fast[i], nd.MulScalar(gs[i], c.Alpha))
			}
			fast = next
		}
		lVal = hoCE(hoMLP(fast, xVal), c.YVal)
		autograd.Backward(lVal)
	})
	cmp := &hoCmp{t: t}
	for i, l := range trainLosses {
		cmp.scalar("inner loss "+string(rune('1'+i)), l, c.TrainLosses[i])
	}
	for i, f := range fast {
		cmp.arr("fast "+ps[i].Name(), f, c.Fast[i])
	}
	cmp.scalar("validation loss", lVal, c.ValLoss)
	cmp.grads(ps, c.Grads)
	cmp.log()
}

// testHVP: H·v for the Hessian H of a classifier's mean cross-entropy with
// respect to all its parameters: the gradient of Σ ∇L·v.
func testHVP(t *testing.T, g *hoGoldens) {
	c := g.HVP
	d1 := nn.NewDense(12, nn.DenseOpts{Act: "tanh", InUnits: 6})
	d2 := nn.NewDense(4, nn.DenseOpts{InUnits: 12})
	net := nn.NewSequential(d1, d2)
	ps := []*gluon.Parameter{d1.Weight, d1.Bias, d2.Weight, d2.Bias}
	hoInit(t, net, ps, c.Params)

	x, theta := c.X.nd(), hoData(ps)
	var l *nd.NDArray
	var gs, hv []*nd.NDArray
	autograd.Record(func() {
		l = hoCE(net.Forward(x), c.Y)
		gs = nd.GradWith([]*nd.NDArray{l}, theta, nd.GradOpts{CreateGraph: true})
		var dot *nd.NDArray
		for i, gi := range gs {
			term := nd.Sum(nd.Mul(gi, c.V[i].nd()))
			if dot == nil {
				dot = term
			} else {
				dot = nd.Add(dot, term)
			}
		}
		hv = nd.GradWith([]*nd.NDArray{dot}, theta, nd.GradOpts{})
	})
	cmp := &hoCmp{t: t}
	cmp.scalar("loss", l, c.Loss)
	for i, p := range ps {
		cmp.arr("gradient of "+p.Name(), gs[i], c.Grads[i])
		cmp.arr("H·v for "+p.Name(), hv[i], c.HVP[i])
	}
	cmp.log()
}

package nn_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// normArr is one array of testdata/norms_goldens.json.
type normArr struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// nd returns the array on cpu(0) (0-d for an empty shape).
func (a normArr) nd() *nd.NDArray {
	x := nd.FromSlice(cpu0, slices.Clone(a.Data), a.Shape...)
	if len(a.Shape) == 0 {
		x = nd.Reshape(x)
	}
	return x
}

// snState is the spectral norm's u, v and sigma at one point.
type snState struct {
	U     normArr `json:"u"`
	V     normArr `json:"v"`
	Sigma float64 `json:"sigma"`
}

// wnGolden is a weight_norm case.
type wnGolden struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Dim       int     `json:"dim"`
	Weight    normArr `json:"weight"`
	Bias      normArr `json:"bias"`
	InitG     normArr `json:"init_g"`
	G         normArr `json:"g"`
	V         normArr `json:"v"`
	Input     normArr `json:"input"`
	Head      normArr `json:"head"`
	Output    normArr `json:"output"`
	GradInput normArr `json:"grad_input"`
	GradG     normArr `json:"grad_g"`
	GradV     normArr `json:"grad_v"`
	GradBias  normArr `json:"grad_bias"`
}

// snGolden is a spectral_norm case.
type snGolden struct {
	Name           string  `json:"name"`
	Kind           string  `json:"kind"`
	Iterations     int     `json:"iterations"`
	Dim            int     `json:"dim"`
	Weight         normArr `json:"weight"`
	Bias           normArr `json:"bias"`
	U0             normArr `json:"u0"`
	V0             normArr `json:"v0"`
	Input          normArr `json:"input"`
	Head           normArr `json:"head"`
	Output1        normArr `json:"output1"`
	GradInput      normArr `json:"grad_input"`
	GradWeight     normArr `json:"grad_weight"`
	GradBias       normArr `json:"grad_bias"`
	After1         snState `json:"after1"`
	Output3        normArr `json:"output3"`
	After3         snState `json:"after3"`
	OutputEval     normArr `json:"output_eval"`
	GradInputEval  normArr `json:"grad_input_eval"`
	GradWeightEval normArr `json:"grad_weight_eval"`
	AfterEval      snState `json:"after_eval"`
}

// lrnGolden is a local_response_norm case.
type lrnGolden struct {
	Name      string  `json:"name"`
	Size      int     `json:"size"`
	Alpha     float64 `json:"alpha"`
	Beta      float64 `json:"beta"`
	K         float64 `json:"k"`
	Input     normArr `json:"input"`
	Head      normArr `json:"head"`
	Output    normArr `json:"output"`
	GradInput normArr `json:"grad_input"`
}

// normGoldens is testdata/norms_goldens.json (make_goldens_norms.py, torch
// 1.13, float64).
type normGoldens struct {
	WeightNorm   []wnGolden  `json:"weight_norm"`
	SpectralNorm []snGolden  `json:"spectral_norm"`
	LRN          []lrnGolden `json:"lrn"`
	StateDict    struct {
		Keys   []string `json:"keys"`
		Input  normArr  `json:"input"`
		Output normArr  `json:"output"`
	} `json:"state_dict"`
}

// loadNormGoldens reads testdata/norms_goldens.json.
func loadNormGoldens(t *testing.T) *normGoldens {
	t.Helper()
	b, err := os.ReadFile("testdata/norms_goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var f normGoldens
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// normLayer builds the generator's layer of the given kind, float64,
// initialised on cpu(0) with the case's weight and bias.
func normLayer(t *testing.T, kind string, weight, bias normArr) (gluon.Block, *gluon.Parameter, *gluon.Parameter) {
	t.Helper()
	var b gluon.Block
	switch kind {
	case "dense":
		b = nn.NewDense(4, nn.DenseOpts{InUnits: 5})
	case "conv2d":
		b = nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, InChannels: 3})
	case "conv1d":
		b = nn.NewConv1D(3, 3, nn.Conv1DOpts{Stride: 2, InChannels: 2})
	case "convT2d":
		b = nn.NewConv2DTranspose(3, 3, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}, InChannels: 4})
	default:
		t.Fatalf("unknown layer %q", kind)
	}
	initNet(t, b, initializer.Xavier{}, nd.Float64)
	w, bi := b.Meta().Param("weight"), b.Meta().Param("bias")
	w.SetData(weight.nd())
	bi.SetData(bias.nd())
	return b, w, bi
}

// TestWeightNormGoldens: ApplyWeightNorm on an initialised layer gives
// torch's g (and the same output); with g and v set to other values, the
// output and the gradients of the input, g, v and the bias equal torch's.
func TestWeightNormGoldens(t *testing.T) {
	f := loadNormGoldens(t)
	if len(f.WeightNorm) != 6 {
		t.Fatalf("%d weight_norm cases, want the generator's 6", len(f.WeightNorm))
	}
	for _, c := range f.WeightNorm {
		t.Run(c.Name, func(t *testing.T) {
			b, _, bias := normLayer(t, c.Kind, c.Weight, c.Bias)
			x := c.Input.nd()
			before := forward(b, x)
			wn := nn.ApplyWeightNorm(b, nn.WeightNormOpts{Dim: c.Dim})
			if got := wn.G.Shape(); !slices.Equal(got, c.InitG.Shape) {
				t.Fatalf("g shape %v, torch %v", got, c.InitG.Shape)
			}
			closeSlice(t, "initial g", wn.G.Data(cpu0).Float64s(), c.InitG.Data, 1e-12)
			closeSlice(t, "output after wrapping", forward(b, x).Float64s(), before.Float64s(), 1e-12)

			wn.G.SetData(c.G.nd())
			wn.V.SetData(c.V.nd())
			x.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = b.Forward(x)
				nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{c.Head.nd()}, false)
			})
			closeSlice(t, "output", y.Float64s(), c.Output.Data, 1e-12)
			closeSlice(t, "input gradient", x.Grad().Float64s(), c.GradInput.Data, 1e-12)
			closeSlice(t, "g gradient", wn.G.Grad(cpu0).Float64s(), c.GradG.Data, 1e-11)
			closeSlice(t, "v gradient", wn.V.Grad(cpu0).Float64s(), c.GradV.Data, 1e-11)
			closeSlice(t, "bias gradient", bias.Grad(cpu0).Float64s(), c.GradBias.Data, 1e-12)
		})
	}
}

// TestSpectralNormGoldens: from torch's u and v, a training-mode pass, two
// more and a predict-mode pass give torch's outputs, gradients (through
// sigma too), updated u and v, and sigma.
func TestSpectralNormGoldens(t *testing.T) {
	f := loadNormGoldens(t)
	if len(f.SpectralNorm) != 4 {
		t.Fatalf("%d spectral_norm cases, want the generator's 4", len(f.SpectralNorm))
	}
	for _, c := range f.SpectralNorm {
		t.Run(c.Name, func(t *testing.T) {
			b, _, bias := normLayer(t, c.Kind, c.Weight, c.Bias)
			sn := nn.ApplySpectralNorm(b, nn.SpectralNormOpts{Iterations: c.Iterations})
			sn.U.SetData(c.U0.nd())
			sn.V.SetData(c.V0.nd())
			state := func(what string, want snState) {
				t.Helper()
				closeSlice(t, what+" u", sn.U.Data(cpu0).Float64s(), want.U.Data, 1e-12)
				closeSlice(t, what+" v", sn.V.Data(cpu0).Float64s(), want.V.Data, 1e-12)
				if s := sn.Sigma(cpu0); math.Abs(s-want.Sigma) > 1e-12*math.Abs(want.Sigma) {
					t.Errorf("%s sigma %.15g, torch %.15g", what, s, want.Sigma)
				}
			}
			x := c.Input.nd()
			head := c.Head.nd()
			x.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = b.Forward(x)
				nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{head}, false)
			})
			closeSlice(t, "first output", y.Float64s(), c.Output1.Data, 1e-12)
			closeSlice(t, "input gradient", x.Grad().Float64s(), c.GradInput.Data, 1e-11)
			closeSlice(t, "weight gradient", sn.Orig.Grad(cpu0).Float64s(), c.GradWeight.Data, 1e-11)
			closeSlice(t, "bias gradient", bias.Grad(cpu0).Float64s(), c.GradBias.Data, 1e-12)
			state("after one pass:", c.After1)

			autograd.TrainMode(func() {
				b.Forward(x)
				y = b.Forward(x)
			})
			closeSlice(t, "third output", y.Float64s(), c.Output3.Data, 1e-12)
			state("after three passes:", c.After3)

			autograd.RecordMode(false, func() {
				y = b.Forward(x)
				nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{head}, false)
			})
			closeSlice(t, "predict output", y.Float64s(), c.OutputEval.Data, 1e-12)
			closeSlice(t, "predict input gradient", x.Grad().Float64s(), c.GradInputEval.Data, 1e-11)
			closeSlice(t, "predict weight gradient", sn.Orig.Grad(cpu0).Float64s(), c.GradWeightEval.Data, 1e-11)
			state("after the predict pass:", c.AfterEval)
		})
	}
}

// TestLocalResponseNormGoldens compares LocalResponseNorm on 3-, 4- and
// 5-D inputs, odd and even sizes, with PyTorch's: float64 outputs and
// input gradients, float32 outputs.
func TestLocalResponseNormGoldens(t *testing.T) {
	f := loadNormGoldens(t)
	if len(f.LRN) != 8 {
		t.Fatalf("%d lrn cases, want the generator's 8", len(f.LRN))
	}
	for _, c := range f.LRN {
		t.Run(c.Name, func(t *testing.T) {
			l := nn.NewLocalResponseNorm(c.Size, nn.LocalResponseNormOpts{Alpha: new(c.Alpha), Beta: new(c.Beta), K: new(c.K)})
			x := c.Input.nd()
			x.AttachGrad(nd.GradWrite)
			var y *nd.NDArray
			autograd.Record(func() {
				y = l.Forward(x)
				nd.Backward([]*nd.NDArray{y}, []*nd.NDArray{c.Head.nd()}, false)
			})
			if !slices.Equal(y.Shape(), c.Output.Shape) {
				t.Fatalf("shape %v, torch %v", y.Shape(), c.Output.Shape)
			}
			closeSlice(t, "output", y.Float64s(), c.Output.Data, 1e-12)
			closeSlice(t, "input gradient", x.Grad().Float64s(), c.GradInput.Data, 1e-12)
			y32 := forward(l, x.AsType(nd.Float32))
			closeSlice(t, "float32 output", y32.Float64s(), c.Output.Data, 1e-5)
		})
	}
}

// TestNormsLoadTorchStateDict loads a torch state_dict saved as
// safetensors (norms_state_dict.safetensors: weight_norm's weight_g and
// weight_v, a 0-d weight_g among them; the older spectral_norm's
// weight_orig, weight_u, weight_v; parametrizations.spectral_norm's names
// through the Aliases) into the same network, its shapes inferred from
// the file, and reproduces torch's predict-mode output.
func TestNormsLoadTorchStateDict(t *testing.T) {
	f := loadNormGoldens(t)
	conv := nn.NewConv2D(4, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}})
	deconv := nn.NewConv2DTranspose(2, 2, nn.Conv2DTransposeOpts{Stride: [2]int{2, 2}})
	d0, d1 := nn.NewDense(6, nn.DenseOpts{Act: "tanh"}), nn.NewDense(3, nn.DenseOpts{})
	net := nn.NewSequential(conv, nn.NewLocalResponseNorm(3, nn.LocalResponseNormOpts{Alpha: new(0.5), K: new(2.0)}), deconv, nn.NewFlatten(), d0, d1)
	nn.ApplyWeightNorm(conv, nn.WeightNormOpts{})
	nn.ApplySpectralNorm(deconv, nn.SpectralNormOpts{})
	nn.ApplySpectralNorm(d0, nn.SpectralNormOpts{})
	nn.ApplyWeightNorm(d1, nn.WeightNormOpts{Dim: -1})
	if err := gluon.LoadParameters(net, "testdata/norms_state_dict.safetensors", cpu0); err != nil {
		t.Fatal(err)
	}
	if n := gluon.CollectParams(net).Len(); n != len(f.StateDict.Keys) {
		t.Errorf("%d parameters, torch's state_dict %d", n, len(f.StateDict.Keys))
	}
	y := forward(net, f.StateDict.Input.nd().AsType(nd.Float32))
	closeSlice(t, "output vs torch", y.Float64s(), f.StateDict.Output.Data, 1e-5)
}

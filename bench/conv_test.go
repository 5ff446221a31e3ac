package bench

import (
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// convLayer is one convolution of the tutorials' networks: a square,
// stride-1 convolution of c×hw×hw inputs with oc filters of k×k and
// padding pad, with bias.
type convLayer struct {
	name              string
	c, hw, oc, k, pad int
}

// convLayers are the convolutions of LeNet (lenet1, lenet2) and of the Keras
// CIFAR-10 CNN (cifar1..cifar4), each at batch 128 (pytorch_bench.py has
// the same list).
var convLayers = []convLayer{
	{"lenet1", 1, 28, 6, 5, 0},
	{"lenet2", 6, 12, 16, 3, 0},
	{"cifar1", 3, 32, 32, 3, 1},
	{"cifar2", 32, 32, 32, 3, 0},
	{"cifar3", 32, 15, 64, 3, 1},
	{"cifar4", 64, 15, 64, 3, 0},
}

const convBatch = 128

// out is the output height and width.
func (l convLayer) out() int { return l.hw + 2*l.pad - l.k + 1 }

// flops is the forward pass's multiply-adds times 2: 2·N·OC·OH·OW·C·KH·KW.
func (l convLayer) flops() float64 {
	o := l.out()
	return 2 * float64(convBatch*l.oc*o*o*l.c*l.k*l.k)
}

// convSetup returns the input, weight, bias and a ones array of the
// output's shape (the head gradient of the backward pass) of l on cpu(0).
func convSetup(l convLayer) (x, w, bias, ones *nd.NDArray) {
	nd.Seed(1)
	dev := ctx.CPU(0)
	x = nd.RandomUniform(dev, nd.Float32, 0, 1, convBatch, l.c, l.hw, l.hw)
	w = nd.RandomUniform(dev, nd.Float32, -0.1, 0.1, l.oc, l.c, l.k, l.k)
	bias = nd.RandomUniform(dev, nd.Float32, -0.1, 0.1, l.oc)
	o := l.out()
	ones = nd.Ones(dev, nd.Float32, convBatch, l.oc, o, o)
	return x, w, bias, ones
}

// convFwdBwd runs one recorded forward pass of l and the backward pass
// from the head gradient ones, which writes the gradients of x, w and
// bias (attached with GradWrite by the caller).
func convFwdBwd(l convLayer, x, w, bias, ones *nd.NDArray) {
	s := nd.NewScope()
	defer s.Close()
	autograd.Record(func() {
		y := nd.Conv2D(x, w, bias, nd.ConvOpts{Pad: [2]int{l.pad, l.pad}})
		autograd.BackwardHeads([]*nd.NDArray{y}, autograd.BackwardOpts{HeadGrads: []*nd.NDArray{ones}})
	})
}

// BenchmarkConvLayer times each convolution of the tutorials (convLayers)
// through the public nd API on cpu(0), batch 128, float32, with bias:
//
//   - forward: nd.Conv2D in predict mode, nothing recorded (PyTorch:
//     F.conv2d under no_grad);
//   - fwdbwd: the forward pass recorded plus the backward pass from a
//     ones head gradient, computing the gradients of the input, the weight
//     and the bias (PyTorch: x.requires_grad, w and b parameters,
//     y.backward(ones)).
//
// Both report GFLOP/s: 2·N·OC·OH·OW·C·KH·KW flops for forward and three
// times that for fwdbwd (the two backward GEMMs), the same formula as
// pytorch_bench.py. CPU ops are synchronous, so each result is complete
// when the call returns; it is released when the iteration's scope closes.
func BenchmarkConvLayer(b *testing.B) {
	for _, l := range convLayers {
		b.Run(l.name, func(b *testing.B) {
			b.Run("forward", func(b *testing.B) {
				x, w, bias, _ := convSetup(l)
				fwd := func() {
					s := nd.NewScope()
					defer s.Close()
					autograd.PredictMode(func() {
						nd.Conv2D(x, w, bias, nd.ConvOpts{Pad: [2]int{l.pad, l.pad}})
					})
				}
				fwd() // pools warm up outside the timing
				for b.Loop() {
					fwd()
				}
				b.ReportMetric(l.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
			b.Run("fwdbwd", func(b *testing.B) {
				x, w, bias, ones := convSetup(l)
				for _, a := range []*nd.NDArray{x, w, bias} {
					a.AttachGrad(nd.GradWrite)
				}
				convFwdBwd(l, x, w, bias, ones)
				for b.Loop() {
					convFwdBwd(l, x, w, bias, ones)
				}
				b.ReportMetric(3*l.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// TestConvFwdBwdGrads checks the fwdbwd step of BenchmarkConvLayer on
// lenet2's shape: after two steps (gradients are written, not summed) the
// bias gradient is N·OH·OW per channel and the input and weight gradients
// are those of a ones head gradient (checked at one position each).
func TestConvFwdBwdGrads(t *testing.T) {
	l := convLayers[1]
	x, w, bias, ones := convSetup(l)
	for _, a := range []*nd.NDArray{x, w, bias} {
		a.AttachGrad(nd.GradWrite)
	}
	convFwdBwd(l, x, w, bias, ones)
	convFwdBwd(l, x, w, bias, ones)
	o := l.out()
	for c, g := range bias.Grad().Float32s() {
		if want := float32(convBatch * o * o); g != want {
			t.Fatalf("bias grad[%d] = %v, want %v", c, g, want)
		}
	}
	// dW[oc, c, 0, 0] = Σ_n Σ_{i,j < o} x[n, c, i, j].
	xs, ws := x.Float32s(), w.Grad().Float32s()
	var sum float64
	for n := range convBatch {
		for i := range o {
			for j := range o {
				sum += float64(xs[(n*l.c)*l.hw*l.hw+i*l.hw+j])
			}
		}
	}
	if d := float64(ws[0]) - sum; d > 1e-3*sum || d < -1e-3*sum {
		t.Errorf("w grad[0,0,0,0] = %v, want %v", ws[0], sum)
	}
	// dX[0, c, 0, 0] = Σ_oc w[oc, c, 0, 0] (only the top-left tap sees it).
	wv, gx := w.Float32s(), x.Grad().Float32s()
	var want float64
	for oc := range l.oc {
		want += float64(wv[oc*l.c*l.k*l.k])
	}
	if d := float64(gx[0]) - want; d > 1e-4 || d < -1e-4 {
		t.Errorf("x grad[0,0,0,0] = %v, want %v", gx[0], want)
	}
}

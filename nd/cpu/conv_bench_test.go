package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// convLayers are the convolutions of the tutorials' networks at batch 128
// (per context): LeNet's two layers, the Keras CIFAR-10 CNN's four and the
// two wide ones of mnist-convnet-bn.
var convLayers = []struct {
	name string
	p    backend.ConvParams
}{
	{"lenet1", convP(128, 1, 28, 6, 5, 0)},
	{"lenet2", convP(128, 6, 12, 16, 3, 0)},
	{"cifar1", convP(128, 3, 32, 32, 3, 1)},
	{"cifar2", convP(128, 32, 32, 32, 3, 0)},
	{"cifar3", convP(128, 32, 15, 64, 3, 1)},
	{"cifar4", convP(128, 64, 15, 64, 3, 0)},
	{"mnistbn2", convP(128, 32, 26, 256, 3, 0)},
	{"mnistbn3", convP(128, 256, 24, 128, 3, 0)},
}

// convP returns the parameters of a square stride-1 convolution.
func convP(n, c, hw, oc, k, pad int) backend.ConvParams {
	out := hw + 2*pad - k + 1
	return backend.ConvParams{
		N: n, InC: c, InH: hw, InW: hw, OutC: oc, KH: k, KW: k, OutH: out, OutW: out,
		StrideH: 1, StrideW: 1, PadH: pad, PadW: pad, DilateH: 1, DilateW: 1, Groups: 1,
	}
}

// BenchmarkConv times each tutorial convolution's forward pass and both
// backward passes, in GFLOP/s of the direct computation
// (2·N·OC·OH·OW·C·KH·KW), as im2col + GEMM, directly where useDirectConv
// and useDirectBackwardData allow (forward, backward data) and, for the 3×3 stride-1
// layers, as Winograd F(2×2, 3×3) whatever the channel counts, so that
// winoMinChannels can be checked against measurements.
func BenchmarkConv(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, l := range convLayers {
		s := newConvShape(l.p)
		x := randSlice(l.p.N*l.p.InC*l.p.InH*l.p.InW, r)
		w := randSlice(l.p.OutC*s.kk, r)
		y := randSlice(l.p.N*l.p.OutC*s.ohw, r)
		dx, dw := make([]float32, len(x)), make([]float32, len(w))
		flops := 2 * float64(l.p.N*l.p.OutC*s.ohw*s.kk)
		passes := []struct {
			name string
			fn   func()
		}{
			{"forward", func() { convForward(s, y, x, w) }},
			{"data", func() { convBackwardData(s, dx, y, w) }},
			{"filter", func() { convBackwardFilter(s, dw, x, y) }},
		}
		if useDirectConv(l.p) {
			passes = append(passes, struct {
				name string
				fn   func()
			}{"direct-forward", func() { directConv2D(s, y, x, w, nil) }})
		}
		if useFlatConv(s) {
			passes = append(passes, struct {
				name string
				fn   func()
			}{"flat-forward", func() { flatConv(s, y, x, w, epilogue[float32]{}) }})
		}
		if useDirectFilter(l.p) {
			passes = append(passes, struct {
				name string
				fn   func()
			}{"direct-filter", func() { directFilter(s, dw, x, y) }})
		}
		if useDirectBackwardData(l.p) {
			passes = append(passes, struct {
				name string
				fn   func()
			}{"direct-data", func() { directBackwardData(l.p, dx, y, w) }})
		}
		if winoShape(l.p) {
			passes = append(passes, []struct {
				name string
				fn   func()
			}{
				{"winograd-forward", func() { winoConv2D(s, y, x, w) }},
				{"winograd-data", func() { winoBackwardData(s, dx, y, w) }},
				{"winograd-filter", func() { winoBackwardFilter(s, dw, x, y) }},
			}...)
		}
		for _, pass := range passes {
			b.Run(fmt.Sprintf("%s/%s", l.name, pass.name), func(b *testing.B) {
				gflops(b, flops, pass.fn)
			})
		}
	}
}

// BenchmarkIm2col times unrolling one image of each tutorial convolution.
func BenchmarkIm2col(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, l := range convLayers {
		s := newConvShape(l.p)
		x := randSlice(l.p.InC*l.p.InH*l.p.InW, r)
		col := make([]float32, s.kk*s.ld)
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				im2col(s, x, col)
			}
			b.ReportMetric(float64(s.kk*s.ohw*4*b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// resnet18Layers are the convolutions of the model zoo's ResNet-18 at
// CIFAR's shape (batch 128) and how many times each occurs.
var resnet18Layers = []struct {
	name  string
	p     backend.ConvParams
	count int
}{
	{"stem", convSP(128, 3, 32, 64, 7, 2, 3), 1},
	{"layer1", convSP(128, 64, 8, 64, 3, 1, 1), 4},
	{"layer2.0", convSP(128, 64, 8, 128, 3, 2, 1), 1},
	{"layer2.down", convSP(128, 64, 8, 128, 1, 2, 0), 1},
	{"layer2", convSP(128, 128, 4, 128, 3, 1, 1), 3},
	{"layer3.0", convSP(128, 128, 4, 256, 3, 2, 1), 1},
	{"layer3.down", convSP(128, 128, 4, 256, 1, 2, 0), 1},
	{"layer3", convSP(128, 256, 2, 256, 3, 1, 1), 3},
	{"layer4.0", convSP(128, 256, 2, 512, 3, 2, 1), 1},
	{"layer4.down", convSP(128, 256, 2, 512, 1, 2, 0), 1},
	{"layer4", convSP(128, 512, 1, 512, 3, 1, 1), 3},
}

// convSP returns the parameters of a square convolution with a stride.
func convSP(n, c, hw, oc, k, stride, pad int) backend.ConvParams {
	p := convP(n, c, hw, oc, k, pad)
	p.StrideH, p.StrideW = stride, stride
	p.OutH = (hw+2*pad-k)/stride + 1
	p.OutW = p.OutH
	p.DType = backend.Float32
	return p
}

// BenchmarkConvResNet18 times each ResNet-18 CIFAR convolution's three
// passes through the backend, as the network runs them, and reports the
// time all of the layer's occurrences take per batch (ms-per-batch).
func BenchmarkConvResNet18(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	be, dev := New(), ctx.CPU(0)
	arg := func(v []float32) backend.Arg {
		buf, err := be.Alloc(dev, backend.Float32, len(v))
		if err != nil {
			b.Fatal(err)
		}
		be.Write(buf, 0, v)
		return backend.Arg{Buf: buf}
	}
	for _, l := range resnet18Layers {
		s := newConvShape(l.p)
		x, w := arg(randSlice(l.p.N*l.p.InC*l.p.InH*l.p.InW, r)), arg(randSlice(l.p.OutC*s.kk, r))
		y := arg(randSlice(l.p.N*l.p.OutC*s.ohw, r))
		dx, dw := arg(make([]float32, x.Buf.Len())), arg(make([]float32, w.Buf.Len()))
		for _, pass := range []struct {
			name string
			fn   func()
		}{
			{"forward", func() { be.Conv2D(l.p, y, x, w) }},
			{"data", func() { be.Conv2DBackwardData(l.p, dx, y, w) }},
			{"filter", func() { be.Conv2DBackwardFilter(l.p, dw, x, y) }},
		} {
			b.Run(l.name+"/"+pass.name, func(b *testing.B) {
				for b.Loop() {
					pass.fn()
				}
				b.ReportMetric(float64(l.count)*b.Elapsed().Seconds()*1e3/float64(b.N), "ms-per-batch")
			})
		}
	}
}

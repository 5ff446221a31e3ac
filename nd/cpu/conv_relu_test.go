package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd/backend"
)

// TestConv2DBiasReluPaths runs Conv2DBiasRelu and Conv2DBias against
// Conv2D followed by BiasRelu (or by the bias added per channel) on each
// forward path (the test asserts which it takes): the same bits.
func TestConv2DBiasReluPaths(t *testing.T) {
	if !useAsmKernel {
		t.Skip("the paths below need AVX2")
	}
	be, dev := New(), ctx.CPU(0)
	r := rand.New(rand.NewPCG(3, 9))
	arg := func(n int) (backend.Arg, []float32) {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		buf, err := be.Alloc(dev, backend.Float32, n)
		if err != nil {
			t.Fatal(err)
		}
		be.Write(buf, 0, v)
		return backend.Arg{Buf: buf}, v
	}
	read := func(a backend.Arg, n int) []float32 {
		v := make([]float32, n)
		be.Read(a.Buf, 0, v)
		return v
	}
	conv := func(n, c, h, oc, k, pad, stride int) backend.ConvParams {
		o := (h+2*pad-k)/stride + 1
		return backend.ConvParams{N: n, InC: c, InH: h, InW: h, OutC: oc, OutH: o, OutW: o, KH: k, KW: k,
			StrideH: stride, StrideW: stride, PadH: pad, PadW: pad, DilateH: 1, DilateW: 1, Groups: 1,
			DType: backend.Float32, Device: dev}
	}
	cases := []struct {
		name string
		p    backend.ConvParams
		path func(backend.ConvParams) bool
	}{
		{"direct", conv(3, 3, 12, 8, 5, 0, 1), useDirectConv},
		{"winograd", conv(2, 32, 10, 32, 3, 1, 1), useWinograd},
		{"batched", conv(8, 32, 4, 16, 3, 1, 1), func(p backend.ConvParams) bool { return useBatched(newConvShape(p)) }},
		{"per-image", conv(2, 20, 14, 12, 1, 0, 1), func(p backend.ConvParams) bool {
			return !useDirectConv(p) && !useWinograd(p) && !useBatched(newConvShape(p))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.path(c.p) {
				t.Fatalf("%+v does not take the %s path", c.p, c.name)
			}
			p := c.p
			nx, nw, ny := p.N*p.InC*p.InH*p.InW, p.OutC*p.InC*p.KH*p.KW, p.N*p.OutC*p.OutH*p.OutW
			x, _ := arg(nx)
			w, _ := arg(nw)
			bias, _ := arg(p.OutC)
			want, _ := arg(ny)
			cp := backend.ChannelParams{Outer: p.N, C: p.OutC, Inner: p.OutH * p.OutW, DType: p.DType, Device: dev}
			be.Conv2D(p, want, x, w)
			plain := read(want, ny)
			be.BiasRelu(cp, want, want, bias)
			got, _ := arg(ny)
			be.Conv2DBiasRelu(p, got, x, w, bias)
			equalBits(t, "Conv2DBiasRelu", read(got, ny), read(want, ny))
			be.Conv2DBias(p, got, x, w, bias)
			b := read(bias, p.OutC)
			for i := range plain {
				plain[i] += b[i/(p.OutH*p.OutW)%p.OutC]
			}
			equalBits(t, "Conv2DBias", read(got, ny), plain)
		})
	}
}

func equalBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

package quantization_test

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/quantization"
)

// BenchmarkDense times one Dense layer's forward pass, float32 (nn.Dense)
// against int8 (Dense), for square layers at batch 1, 32 and 128, in
// samples per second. The int8 pass includes everything a call does: the
// copy of the input to the host, its range and quantization, the product
// with dequantization and bias, and the output array.
func BenchmarkDense(b *testing.B) {
	for _, n := range []int{512, 1024} {
		for _, batch := range []int{1, 32, 128} {
			d := nn.NewDense(n, nn.DenseOpts{InUnits: n})
			initNet(b, d, 1)
			q, err := quantization.NewDense(d, quantization.Opts{})
			if err != nil {
				b.Fatal(err)
			}
			x := randInput(2, batch, n)
			for _, c := range []struct {
				kind string
				blk  gluon.Block
			}{{"float32", d}, {"int8", q}} {
				b.Run(fmt.Sprintf("%dx%d/batch=%d/%s", n, n, batch, c.kind), func(b *testing.B) {
					for b.Loop() {
						c.blk.Forward(x).Release()
					}
					b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
				})
			}
		}
	}
}

package quantization_test

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/quantization"
	"github.com/goluon/goluon/nd"
)

// BenchmarkResNet18 times ResNet-18 inference (the model zoo's, 224×224,
// 1000 classes), float32 against int8 (QuantizeStatic: its convolutions
// and classifier), at batch 1 and 8, in images per second. Sub-benchmarks
// run float32 and int8 in turn, so with -count N they alternate.
func BenchmarkResNet18(b *testing.B) {
	const size = 224
	fnet := resnet18(b)
	qnet := resnet18(b) // the same weights (seeded)
	cal := []*nd.NDArray{randInput(78, 8, 3, size, size)}
	if _, err := quantization.QuantizeStatic(qnet, quantization.StaticOpts{}, cal...); err != nil {
		b.Fatal(err)
	}
	for _, batch := range []int{1, 8} {
		x := randInput(uint64(80+batch), batch, 3, size, size)
		for _, c := range []struct {
			kind string
			net  gluon.Block
		}{{"float32", fnet}, {"int8", qnet}} {
			c.net.Forward(x).Release() // warm the pools
			b.Run(fmt.Sprintf("batch=%d/%s", batch, c.kind), func(b *testing.B) {
				for b.Loop() {
					c.net.Forward(x).Release()
				}
				b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "images/s")
			})
		}
	}
}

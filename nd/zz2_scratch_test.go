package nd_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

func TestZZAutocastSum(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.Full(dev, nd.Float16, 1000, 100)
	nd.Autocast(nd.Float16, func() {
		s := nd.Sum(x)
		m := nd.Mean(x)
		n := nd.Norm(x, 2)
		v := nd.Var(x, 0)
		e := nd.Exp(nd.Full(dev, nd.Float16, 1, 1))
		t.Logf("under autocast: Sum %v %v, Mean %v, Norm %v %v, Var %v; Exp %v", s.DType(), s.Float32s(), m.DType(), n.DType(), n.Float32s(), v.DType(), e.DType())
		if s.DType() != nd.Float32 {
			t.Errorf("Sum of float16 under autocast is %v (documented in the float32 list); value %v", s.DType(), s.Float32s())
		}
	})
}

package traintest_test

import (
	"math"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/internal/traintest"
	"github.com/goluon/goluon/nd"
)

func TestRelDiff(t *testing.T) {
	tests := []struct {
		a, b []float32
		want float64
	}{
		{[]float32{3, 4}, []float32{3, 4}, 0},
		{[]float32{3, 4}, []float32{0, 0}, 1},
		{[]float32{3, 4}, []float32{3, 5}, 0.2},
	}
	for _, tc := range tests {
		if got := traintest.RelDiff(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("RelDiff(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSnapshotChecksReplicas(t *testing.T) {
	net := nn.NewDense(2, nn.DenseOpts{InUnits: 3})
	params := gluon.CollectParams(net)
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	if err := params.Initialize(initializer.Uniform{Scale: 1}, devs, false); err != nil {
		t.Fatal(err)
	}
	snap, err := traintest.Snapshot(params)
	if err != nil || len(snap) != 2 {
		t.Fatalf("Snapshot: %v, %v", snap, err)
	}
	w := params.List()[0].ListData()[1]
	nd.FillInPlace(w, 7)
	if _, err := traintest.Snapshot(params); err == nil {
		t.Error("Snapshot accepted replicas that differ")
	}
}

package gluon_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// TestMultiBlock checks that a MultiBlock nests in a block tree (its
// parameters are collected with their paths and saved), that Call runs
// both kinds, and that misuse fails with an error naming the component.
func TestMultiBlock(t *testing.T) {
	dev := ctx.CPU(0)
	outer := nn.NewSequential(nn.NewDense(3, nn.DenseOpts{InUnits: 2}))
	cell := newElmanCell(2)
	outer.AddChild(cell) // a MultiBlock child of a plain block
	params := gluon.CollectParams(outer)
	if got := strings.Join(params.Names(), " "); got != "dense0.weight dense0.bias elman0.dense0.weight elman0.dense0.bias elman0.dense1.weight" {
		t.Fatalf("names %q", got)
	}
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	x := nd.Ones(dev, nd.Float32, 4, 2)
	if out := gluon.Call(outer.Meta().Children()[0], x); len(out) != 1 || out[0].Shape()[1] != 3 {
		t.Errorf("Call on a Block: %v", out)
	}
	if out := gluon.Call(cell, nd.Ones(dev, nd.Float32, 4, 1), nd.Zeros(dev, nd.Float32, 4, 2)); len(out) != 2 {
		t.Errorf("Call on a MultiBlock returned %d outputs", len(out))
	}
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"two inputs to a Block", func() { gluon.Call(outer.Meta().Children()[0], x, x) }, "single-input Block; got 2 inputs"},
		{"MultiBlock in a Sequential", func() { outer.Forward(x) }, "child elman0"},
	} {
		err := nd.Catch(tc.f)
		var ne *nd.Error
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

package rnn_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/rnn"
	"github.com/goluon/goluon/nd"
	"github.com/goluon/goluon/nd/ndtest"
)

var allModes = []rnn.Mode{rnn.RNNTanh, rnn.RNNReLU, rnn.LSTM, rnn.GRU}

// TestShapes runs every mode, layout and direction count and checks the
// output [T, N, D·H] (NTC: [N, T, D·H]) and the states [L·D, N, H].
func TestShapes(t *testing.T) {
	const T, N, in, H, L = 5, 3, 4, 6, 2
	for _, m := range allModes {
		for _, layout := range []string{"TNC", "NTC"} {
			for _, bidir := range []bool{false, true} {
				name := fmt.Sprintf("%v/%s/bidir=%v", m, layout, bidir)
				t.Run(name, func(t *testing.T) {
					l := rnn.NewLayer(m, H, rnn.Opts{NumLayers: L, Bidirectional: bidir, Layout: layout, InputSize: in})
					randomParams(t, l, cpu0)
					x := ndtest.Rand(cpu0, 1, -1, 1, T, N, in)
					if layout == "NTC" {
						x = ndtest.Rand(cpu0, 1, -1, 1, N, T, in)
					}
					outs := gluon.Call(l, x)
					d := 1
					if bidir {
						d = 2
					}
					want := []int{T, N, d * H}
					if layout == "NTC" {
						want = []int{N, T, d * H}
					}
					if !slices.Equal(outs[0].Shape(), want) {
						t.Errorf("output %v, want %v", outs[0].Shape(), want)
					}
					if got := len(outs) - 1; got != map[bool]int{true: 2, false: 1}[m == rnn.LSTM] {
						t.Fatalf("%d states returned", got)
					}
					for _, s := range outs[1:] {
						if !slices.Equal(s.Shape(), []int{L * d, N, H}) {
							t.Errorf("state %v, want %v", s.Shape(), []int{L * d, N, H})
						}
					}
				})
			}
		}
	}
}

// TestInputSizeInferred leaves the input size to the first forward pass.
func TestInputSizeInferred(t *testing.T) {
	l := rnn.NewGRU(4, rnn.Opts{NumLayers: 2})
	if err := gluon.CollectParams(l).Initialize(nil, []ctx.Context{cpu0}, false); err != nil {
		t.Fatal(err)
	}
	y := l.Forward(nd.Ones(cpu0, nd.Float32, 5, 2, 7))
	if got := gluon.CollectParams(l).Get("weight_ih_l0").Shape(); !slices.Equal(got, []int{12, 7}) || !slices.Equal(y.Shape(), []int{5, 2, 4}) {
		t.Errorf("weight_ih_l0 %v and output %v, want [12 7] and [5 2 4]", got, y.Shape())
	}
}

// TestLayoutsAgree: the NTC result is the TNC result transposed, with the
// same weights and begin states; the final states are equal.
func TestLayoutsAgree(t *testing.T) {
	for _, m := range allModes {
		tnc := rnn.NewLayer(m, 4, rnn.Opts{NumLayers: 2, Bidirectional: true, InputSize: 3})
		ntc := rnn.NewLayer(m, 4, rnn.Opts{NumLayers: 2, Bidirectional: true, InputSize: 3, Layout: "NTC"})
		randomParams(t, tnc, cpu0)
		randomParams(t, ntc, cpu0) // the same seeds give the same values
		x := ndtest.Rand(cpu0, 9, -1, 1, 5, 2, 3)
		begin := []*nd.NDArray{ndtest.Rand(cpu0, 10, -1, 1, 4, 2, 4)}
		if m == rnn.LSTM {
			begin = append(begin, ndtest.Rand(cpu0, 11, -1, 1, 4, 2, 4))
		}
		a := gluon.Call(tnc, append([]*nd.NDArray{x}, begin...)...)
		b := gluon.Call(ntc, append([]*nd.NDArray{nd.SwapAxes(x, 0, 1)}, begin...)...)
		if len(a) != 1+len(begin) || len(b) != len(a) {
			t.Fatalf("%v: %d and %d outputs, want %d", m, len(a), len(b), 1+len(begin))
		}
		same(t, m.String()+" output", nd.SwapAxes(b[0], 0, 1), a[0], 1e-14)
		for i := 1; i < len(a); i++ {
			same(t, fmt.Sprintf("%v final state %d", m, i-1), b[i], a[i], 1e-14)
		}
	}
}

func same(t *testing.T, what string, got, want *nd.NDArray, tol float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	w := want.Float64s()
	for i, g := range got.Float64s() {
		if d := g - w[i]; d > tol || d < -tol {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, g, w[i])
		}
	}
}

// TestCellMatchesLayer steps a cell by hand over a sequence and compares
// with a one-layer layer holding the same weights, from zero and from
// given begin states.
func TestCellMatchesLayer(t *testing.T) {
	for _, m := range allModes {
		cell := rnn.NewCell(m, 3, 5)
		layer := rnn.NewLayer(m, 5, rnn.Opts{InputSize: 3})
		randomParams(t, cell, cpu0)
		randomParams(t, layer, cpu0)
		cp, lp := gluon.CollectParams(cell), gluon.CollectParams(layer)
		for _, name := range cp.Names() {
			lp.Get(name + "_l0").SetData(cp.Get(name).Data(cpu0))
		}
		x := ndtest.Rand(cpu0, 3, -1, 1, 4, 2, 3)
		for _, zero := range []bool{true, false} {
			st := cell.BeginState(x, 2)
			args := []*nd.NDArray{x}
			if !zero {
				for i := range st {
					st[i] = ndtest.Rand(cpu0, uint64(20+i), -1, 1, 2, 5)
					args = append(args, nd.Reshape(st[i], 1, 2, 5))
				}
			}
			var hs []*nd.NDArray
			for i := range 4 {
				st = gluon.Call(cell, append([]*nd.NDArray{nd.Reshape(nd.SliceAxis(x, i, i+1, 0), 2, 3)}, st...)...)
				hs = append(hs, st[0])
			}
			outs := gluon.Call(layer, args...)
			what := fmt.Sprintf("%v (zero begin %v)", m, zero)
			same(t, what+" outputs", nd.Stack(hs, 0), outs[0], 1e-14)
			for i, s := range st {
				same(t, fmt.Sprintf("%s state %d", what, i), nd.Reshape(s, 1, 2, 5), outs[1+i], 1e-14)
			}
		}
	}
}

// TestDropoutBetweenLayers: dropout acts in training mode only, and only
// when set.
func TestDropoutBetweenLayers(t *testing.T) {
	x := ndtest.Rand(cpu0, 4, -1, 1, 6, 3, 4)
	run := func(l *rnn.Layer, train bool) []float64 {
		var y *nd.NDArray
		autograd.RecordMode(train, func() { y = l.Forward(x) })
		return y.Float64s()
	}
	drop := rnn.NewLSTM(5, rnn.Opts{NumLayers: 2, Dropout: 0.5, InputSize: 4})
	randomParams(t, drop, cpu0)
	if !slices.Equal(run(drop, false), run(drop, false)) {
		t.Error("inference is not deterministic")
	}
	if slices.Equal(run(drop, true), run(drop, false)) {
		t.Error("dropout 0.5 between layers changed nothing in training mode")
	}
	plain := rnn.NewLSTM(5, rnn.Opts{NumLayers: 2, InputSize: 4})
	randomParams(t, plain, cpu0)
	if !slices.Equal(run(plain, true), run(plain, false)) {
		t.Error("without dropout, training and inference differ")
	}
	one := rnn.NewLSTM(5, rnn.Opts{Dropout: 0.5, InputSize: 4}) // one layer: nothing between
	randomParams(t, one, cpu0)
	if !slices.Equal(run(one, true), run(one, false)) {
		t.Error("a one-layer LSTM applied dropout to its output")
	}
}

// TestDropoutOnlyBetweenLayers: in training mode with dropout, the final
// states of the first layer (both directions) are those of inference —
// nothing is dropped on the way in — while the second layer's, which reads
// the dropped output of the first, differ.
func TestDropoutOnlyBetweenLayers(t *testing.T) {
	for _, m := range allModes {
		l := rnn.NewLayer(m, 5, rnn.Opts{NumLayers: 2, Bidirectional: true, Dropout: 0.5, Layout: "NTC", InputSize: 4})
		randomParams(t, l, cpu0)
		x := ndtest.Rand(cpu0, 4, -1, 1, 3, 6, 4)
		var train, infer []*nd.NDArray
		autograd.RecordMode(true, func() { train = gluon.Call(l, x) })
		autograd.RecordMode(false, func() { infer = gluon.Call(l, x) })
		for i := 1; i < len(train); i++ {
			first := func(a []*nd.NDArray) []float64 { return nd.SliceAxis(a[i], 0, 2, 0).Float64s() }
			second := func(a []*nd.NDArray) []float64 { return nd.SliceAxis(a[i], 2, 4, 0).Float64s() }
			if !slices.Equal(first(train), first(infer)) {
				t.Errorf("%v state %d: the first layer's final state changed in training", m, i-1)
			}
			if slices.Equal(second(train), second(infer)) {
				t.Errorf("%v state %d: the second layer's final state ignored the dropout before it", m, i-1)
			}
		}
	}
}

// TestErrors: misuse panics with an *nd.Error of the right kind (caught
// with nd.Catch) whose message names what is wrong.
func TestErrors(t *testing.T) {
	l := rnn.NewLSTM(4, rnn.Opts{NumLayers: 2, InputSize: 3})
	randomParams(t, l, cpu0, cpu1)
	cell := rnn.NewGRUCell(3, 4) // on cpu(0) only
	randomParams(t, cell, cpu0)
	x := ndtest.Rand(cpu0, 1, -1, 1, 5, 2, 3)
	for _, tc := range []struct {
		name string
		kind nd.ErrorKind
		f    func()
		want []string
	}{
		{"mode", nd.ErrArgument, func() { rnn.NewLayer(rnn.Mode(9), 4, rnn.Opts{}) }, []string{"mode"}},
		{"cell-mode", nd.ErrArgument, func() { rnn.NewCell(rnn.Mode(-1), 3, 4) }, []string{"mode"}},
		{"hidden", nd.ErrArgument, func() { rnn.NewLSTM(0, rnn.Opts{}) }, []string{"hidden"}},
		{"cell-sizes", nd.ErrArgument, func() { rnn.NewCell(rnn.LSTM, -1, 3) }, []string{"in -1"}},
		{"dropout", nd.ErrArgument, func() { rnn.NewGRU(4, rnn.Opts{Dropout: 1}) }, []string{"dropout"}},
		{"layout", nd.ErrArgument, func() { rnn.NewGRU(4, rnn.Opts{Layout: "CNT"}) }, []string{"CNT"}},
		{"rank", nd.ErrShape, func() { l.Forward(ndtest.Rand(cpu0, 1, -1, 1, 5, 3)) }, []string{"[5 3]", "3-D"}},
		{"empty", nd.ErrShape, func() { l.Forward(ndtest.Rand(cpu0, 1, -1, 1, 0, 2, 3)) }, []string{"[0 2 3]", "empty"}},
		{"input-size", nd.ErrShape, func() { l.Forward(ndtest.Rand(cpu0, 1, -1, 1, 5, 2, 4)) }, []string{"weight_ih_l0", "[16 3]", "[16 4]"}},
		{"state-shape", nd.ErrShape, func() { gluon.Call(l, x, ndtest.Rand(cpu0, 1, -1, 1, 1, 2, 4)) }, []string{"h0", "[1 2 4]", "[2 2 4]"}},
		{"c0-shape", nd.ErrShape, func() { gluon.Call(l, x, nil, ndtest.Rand(cpu0, 1, -1, 1, 2, 3, 4)) }, []string{"c0", "[2 3 4]", "[2 2 4]"}},
		{"too-many", nd.ErrArgument, func() { gluon.Call(l, x, nil, nil, nil, nil) }, []string{"5 inputs"}},
		{"nil-input", nd.ErrArgument, func() { gluon.Call(l, nil) }, nil},
		{"state-dtype", nd.ErrDType, func() { gluon.Call(l, x, ndtest.Rand(cpu0, 1, -1, 1, 2, 2, 4).AsType(nd.Float32)) }, []string{"rnn", "h0", "float32", "float64"}},
		{"state-context", nd.ErrContext, func() { gluon.Call(l, x, ndtest.Rand(cpu1, 1, -1, 1, 2, 2, 4)) }, []string{"h0", "cpu(0)", "cpu(1)"}},
		{"c0-context", nd.ErrContext, func() { gluon.Call(l, x, nil, ndtest.Rand(cpu1, 1, -1, 1, 2, 2, 4)) }, []string{"c0", "cpu(0)", "cpu(1)"}},
		{"param-context", nd.ErrContext, func() { gluon.Call(cell, ndtest.Rand(cpu1, 1, -1, 1, 2, 3)) }, []string{"weight_ih", "cpu(0)", "cpu(1)"}},
		{"cell-rank", nd.ErrShape, func() { gluon.Call(cell, ndtest.Rand(cpu0, 1, -1, 1, 2, 3, 3)) }, []string{"[2 3 3]"}},
		{"cell-input-size", nd.ErrShape, func() { gluon.Call(cell, ndtest.Rand(cpu0, 1, -1, 1, 2, 5)) }, []string{"weight_ih", "[12 3]", "[12 5]"}},
		{"cell-state", nd.ErrShape, func() { gluon.Call(cell, ndtest.Rand(cpu0, 1, -1, 1, 2, 3), ndtest.Rand(cpu0, 1, -1, 1, 3, 4)) }, []string{"h", "[3 4]", "[2 4]"}},
		{"cell-state-context", nd.ErrContext, func() { gluon.Call(cell, ndtest.Rand(cpu0, 1, -1, 1, 2, 3), ndtest.Rand(cpu1, 1, -1, 1, 2, 4)) }, []string{"cpu(0)", "cpu(1)"}},
		{"cell-too-many", nd.ErrArgument, func() { gluon.Call(cell, ndtest.Rand(cpu0, 1, -1, 1, 2, 3), nil, nil) }, []string{"3 inputs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := nd.Catch(tc.f)
			var e *nd.Error
			if !errors.As(err, &e) || e.Kind != tc.kind {
				t.Fatalf("error %v, want an *nd.Error of kind %v", err, tc.kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestLengths: full lengths give the unpacked result bit for bit, and
// lengths outside [1, T], of another shape or a float dtype are errors.
func TestLengths(t *testing.T) {
	const T, N, in, H = 4, 3, 2, 3
	l := rnn.NewLayer(rnn.LSTM, H, rnn.Opts{Bidirectional: true, InputSize: in})
	randomParams(t, l, cpu0)
	x := ndtest.Rand(cpu0, 3, -1, 1, T, N, in)
	plain := l.ForwardMulti(x)
	full := l.ForwardMulti(x, nil, nil, nd.FromSlice(cpu0, []int64{T, T, T}))
	for i := range plain {
		if !slices.Equal(plain[i].Float64s(), full[i].Float64s()) {
			t.Errorf("output %d differs with full lengths", i)
		}
	}
	for name, lengths := range map[string]*nd.NDArray{
		"zero":   nd.FromSlice(cpu0, []int64{0, 2, 3}),
		"long":   nd.FromSlice(cpu0, []int64{5, 2, 3}),
		"shape":  nd.FromSlice(cpu0, []int64{2, 3}),
		"floats": nd.FromSlice(cpu0, []float64{1, 2, 3}),
	} {
		var e *nd.Error
		if err := nd.Catch(func() { l.ForwardMulti(x, nil, nil, lengths) }); !errors.As(err, &e) {
			t.Errorf("%s lengths: %v, want an *nd.Error", name, err)
		}
	}
}

// Package rnn holds recurrent layers: Elman RNN, LSTM and GRU, as cells
// that take one time step and as multi-layer layers that run a whole
// sequence (Gluon's gluon.rnn, PyTorch's torch.nn.RNN/LSTM/GRU and their
// Cell forms).
//
// Weights follow PyTorch's layout and names, so a torch state_dict saved
// as safetensors loads with gluon.LoadParameters: a layer holds
// weight_ih_l{k}[_reverse] [G·H, in], weight_hh_l{k}[_reverse] [G·H, H],
// bias_ih_l{k}[_reverse] and bias_hh_l{k}[_reverse] [G·H], where G is 1
// (RNN), 4 (LSTM: gates i, f, g, o) or 3 (GRU: r, z, n); a cell holds
// weight_ih, weight_hh, bias_ih and bias_hh. Every weight and bias starts
// from U(-1/√H, 1/√H), PyTorch's default.
//
// Layers and cells are gluon.MultiBlocks: inputs are the sequence (or step
// input) and the begin states, nil for zeros; outputs are the sequence
// output (layers only) and the final states. Layers also implement
// gluon.Block (the output alone, begin states zero) so they sit in an
// nn.Sequential.
package rnn

import (
	"fmt"
	"math"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

// Mode is the kind of recurrence.
type Mode int

const (
	// RNNTanh is the Elman RNN h' = tanh(W_ih x + b_ih + W_hh h + b_hh).
	RNNTanh Mode = iota
	// RNNReLU is the Elman RNN with ReLU in place of tanh.
	RNNReLU
	// LSTM is the long short-term memory of PyTorch's nn.LSTM (no peepholes).
	LSTM
	// GRU is the gated recurrent unit of PyTorch's nn.GRU (the reset gate
	// applies after the hidden projection, as in cuDNN).
	GRU
)

// String returns the mode's name as Gluon spells it.
func (m Mode) String() string {
	switch m {
	case RNNTanh:
		return "rnn_tanh"
	case RNNReLU:
		return "rnn_relu"
	case LSTM:
		return "lstm"
	case GRU:
		return "gru"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// gates is the number of stacked gate blocks in the weights.
func (m Mode) gates() int {
	switch m {
	case LSTM:
		return 4
	case GRU:
		return 3
	}
	return 1
}

// states is the number of state arrays: h, and c for an LSTM.
func (m Mode) states() int {
	if m == LSTM {
		return 2
	}
	return 1
}

func (m Mode) valid() bool { return m >= RNNTanh && m <= GRU }

// weights are the four parameters of one direction of one layer.
type weights struct {
	ih, hh, bih, bhh *gluon.Parameter
}

// newWeights registers the parameters of one direction of one layer on
// meta under PyTorch's names with the given suffix.
func newWeights(meta *gluon.BlockMeta, m Mode, in, hidden int, suffix string) weights {
	g := m.gates() * hidden
	init := initializer.Uniform{Scale: 1 / math.Sqrt(float64(hidden))}
	w := weights{
		ih:  meta.AddParam(gluon.NewParameter("weight_ih"+suffix, g, in)),
		hh:  meta.AddParam(gluon.NewParameter("weight_hh"+suffix, g, hidden)),
		bih: meta.AddParam(gluon.NewParameter("bias_ih"+suffix, g)),
		bhh: meta.AddParam(gluon.NewParameter("bias_hh"+suffix, g)),
	}
	for _, p := range []*gluon.Parameter{w.ih, w.hh, w.bih, w.bhh} {
		p.Init = init
	}
	return w
}

// project returns x·W_ihᵀ + b_ih for x [..., in]: the input half of every
// gate, computed for all time steps in one GEMM by the layers.
func (w weights) project(x *nd.NDArray, gates int) *nd.NDArray {
	shape := x.Shape()
	in := shape[len(shape)-1]
	w.ih.InferShape(gates, in)
	flat := x
	if x.NDim() != 2 {
		flat = nd.Reshape(x, -1, in)
	}
	y := nd.FullyConnected(flat, w.ih.DataFor(x), w.bih.DataFor(x))
	if x.NDim() != 2 {
		shape[len(shape)-1] = gates
		y = nd.Reshape(y, shape...)
	}
	return y
}

// hidden returns W_hh and b_hh for the input x. A layer reads them once
// per call, not once per time step, so that a derived weight (spectral
// norm, say) is computed, and its power method run, once per forward
// pass, as in PyTorch.
func (w weights) hidden(x *nd.NDArray) (whh, bhh *nd.NDArray) {
	return w.hh.DataFor(x), w.bhh.DataFor(x)
}

// step advances the recurrence one time step: xp is the input projection
// [N, G·H] of this step, st the states [N, H] (h, and c for an LSTM), whh
// and bhh the recurrent weight and bias (weights.hidden). It returns the
// new states.
func step(m Mode, whh, bhh, xp *nd.NDArray, st []*nd.NDArray) []*nd.NDArray {
	h := st[0]
	hp := nd.FullyConnected(h, whh, bhh)
	switch m {
	case RNNTanh:
		return []*nd.NDArray{nd.Tanh(nd.Add(xp, hp))}
	case RNNReLU:
		return []*nd.NDArray{nd.AddRelu(xp, hp)}
	case LSTM:
		g := nd.Split(nd.Add(xp, hp), 4, 1)
		i, f, c, o := nd.Sigmoid(g[0]), nd.Sigmoid(g[1]), nd.Tanh(g[2]), nd.Sigmoid(g[3])
		cNew := nd.Add(nd.Mul(f, st[1]), nd.Mul(i, c))
		return []*nd.NDArray{nd.Mul(o, nd.Tanh(cNew)), cNew}
	default: // GRU
		x3, h3 := nd.Split(xp, 3, 1), nd.Split(hp, 3, 1)
		r := nd.Sigmoid(nd.Add(x3[0], h3[0]))
		z := nd.Sigmoid(nd.Add(x3[1], h3[1]))
		n := nd.Tanh(nd.Add(x3[2], nd.Mul(r, h3[2])))
		// h' = (1-z)·n + z·h = n + z·(h-n)
		return []*nd.NDArray{nd.Add(n, nd.Mul(z, nd.Sub(h, n)))}
	}
}

// zeroState returns a zero state [shape] of like's dtype, context and
// session.
func zeroState(like *nd.NDArray, shape ...int) *nd.NDArray {
	return like.Session().Full(like.Context(), like.DType(), 0, shape...)
}

// checkState panics unless s (when not nil) has the wanted shape and sits
// with x on one context.
func checkState(op, what string, x, s *nd.NDArray, want ...int) {
	if s == nil {
		return
	}
	if s.Context() != x.Context() {
		nd.Panicf(op, nd.ErrContext, "%s is on %v, the input on %v", what, s.Context(), x.Context())
	}
	if s.DType() != x.DType() {
		nd.Panicf(op, nd.ErrDType, "%s is %v, the input %v", what, s.DType(), x.DType())
	}
	got := s.Shape()
	if len(got) != len(want) {
		nd.Panicf(op, nd.ErrShape, "%s has shape %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			nd.Panicf(op, nd.ErrShape, "%s has shape %v, want %v", what, got, want)
		}
	}
}

// Cell is one time step of a recurrence (PyTorch's RNNCell, LSTMCell,
// GRUCell; Gluon's rnn.RNNCell, LSTMCell, GRUCell). ForwardMulti takes the
// step input x [N, in] and the states — h [N, H], and c [N, H] for an
// LSTM, nil for zeros — and returns the new states (h', and c' for an
// LSTM); h' is the step's output.
type Cell struct {
	gluon.BlockMeta
	Mode       Mode
	HiddenSize int
	w          weights
}

// NewCell returns a cell of the given mode. inputSize 0 infers it at the
// first step.
func NewCell(m Mode, inputSize, hiddenSize int) *Cell {
	if !m.valid() {
		nd.Panicf("rnn.NewCell", nd.ErrArgument, "unknown mode %v", m)
	}
	if hiddenSize < 1 || inputSize < 0 {
		nd.Panicf("rnn.NewCell", nd.ErrArgument, "sizes in %d, hidden %d: hidden must be positive, in not negative", inputSize, hiddenSize)
	}
	c := &Cell{BlockMeta: gluon.NewBlockMeta(m.String() + "_cell"), Mode: m, HiddenSize: hiddenSize}
	c.w = newWeights(&c.BlockMeta, m, inputSize, hiddenSize, "")
	return c
}

// NewLSTMCell returns an LSTM cell (PyTorch's nn.LSTMCell).
func NewLSTMCell(inputSize, hiddenSize int) *Cell { return NewCell(LSTM, inputSize, hiddenSize) }

// NewGRUCell returns a GRU cell (PyTorch's nn.GRUCell).
func NewGRUCell(inputSize, hiddenSize int) *Cell { return NewCell(GRU, inputSize, hiddenSize) }

// NewRNNCell returns an Elman cell with tanh (PyTorch's nn.RNNCell).
func NewRNNCell(inputSize, hiddenSize int) *Cell { return NewCell(RNNTanh, inputSize, hiddenSize) }

// ForwardMulti runs one step: inputs are x [N, in] and the states (nil or
// absent for zeros); the outputs are the new states.
func (c *Cell) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	op := "rnn." + c.Mode.String() + "_cell"
	ns := c.Mode.states()
	if len(inputs) < 1 || len(inputs) > 1+ns || inputs[0] == nil {
		nd.Panicf(op, nd.ErrArgument, "takes x and up to %d states, got %d inputs", ns, len(inputs))
	}
	x := inputs[0]
	if x.NDim() != 2 {
		nd.Panicf(op, nd.ErrShape, "input has shape %v, want [batch, features]", x.Shape())
	}
	n, hsz := x.Shape()[0], c.HiddenSize
	st := make([]*nd.NDArray, ns)
	for i := range st {
		if 1+i < len(inputs) {
			st[i] = inputs[1+i]
		}
		checkState(op, stateName(i), x, st[i], n, hsz)
		if st[i] == nil {
			st[i] = zeroState(x, n, hsz)
		}
	}
	xp := c.w.project(x, c.Mode.gates()*hsz)
	whh, bhh := c.w.hidden(x)
	return step(c.Mode, whh, bhh, xp, st)
}

// BeginState returns zero states for a batch of n on like's context,
// dtype and session.
func (c *Cell) BeginState(like *nd.NDArray, n int) []*nd.NDArray {
	st := make([]*nd.NDArray, c.Mode.states())
	for i := range st {
		st[i] = zeroState(like, n, c.HiddenSize)
	}
	return st
}

func stateName(i int) string {
	if i == 0 {
		return "h"
	}
	return "c"
}

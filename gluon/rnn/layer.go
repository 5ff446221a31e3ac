package rnn

import (
	"fmt"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/nd"
)

// Opts configures a recurrent layer. The zero value is PyTorch's default:
// one layer, one direction, no dropout, the TNC layout (time, batch,
// features; PyTorch's batch_first=False) and the input size inferred.
type Opts struct {
	NumLayers     int     // stacked layers; 0 means 1
	Bidirectional bool    // run a second direction backwards in time and concatenate
	Dropout       float64 // dropout on each layer's output but the last's, in training mode
	Layout        string  // "TNC" (default) or "NTC" (PyTorch's batch_first=True)
	InputSize     int     // 0: inferred at the first forward pass
}

// Layer runs a recurrence over a whole sequence, stacked NumLayers deep and
// optionally bidirectional (PyTorch's nn.RNN, nn.LSTM, nn.GRU; Gluon's
// rnn.RNN, rnn.LSTM, rnn.GRU).
//
// ForwardMulti takes x ([T, N, in] in TNC, [N, T, in] in NTC) and the begin
// states h0 (and c0 for an LSTM), each [L·D, N, H] with L layers and D
// directions, or nil for zeros. It returns the output ([T, N, D·H] or
// [N, T, D·H]: the last layer's h at every step, the directions
// concatenated) and the final states hN (and cN), each [L·D, N, H].
// Forward returns the output alone, from zero states.
//
// A last input after the begin states (which may then be nil) gives the
// samples' lengths, an integer vector [N] of values in [1, T]: a padded
// batch then runs as PyTorch's pack_padded_sequence would (MXNet's
// use_sequence_length): each sample's recurrence stops after its length,
// so its final states are those of its last step and the backward
// direction starts there, and its outputs beyond its length are 0.
//
// The input half of every gate is one GEMM over all time steps of a layer;
// each step then does one GEMM with the hidden state.
type Layer struct {
	gluon.BlockMeta
	Mode       Mode
	HiddenSize int
	opts       Opts
	w          [][]weights // [layer][direction]
}

// NewLayer returns a recurrent layer of the given mode.
func NewLayer(m Mode, hiddenSize int, o Opts) *Layer {
	const op = "rnn.NewLayer"
	if !m.valid() {
		nd.Panicf(op, nd.ErrArgument, "unknown mode %v", m)
	}
	if o.NumLayers == 0 {
		o.NumLayers = 1
	}
	if o.Layout == "" {
		o.Layout = "TNC"
	}
	switch {
	case hiddenSize < 1 || o.NumLayers < 1 || o.InputSize < 0:
		nd.Panicf(op, nd.ErrArgument, "hidden %d, layers %d, input %d: hidden and layers must be positive", hiddenSize, o.NumLayers, o.InputSize)
	case o.Dropout < 0 || o.Dropout >= 1:
		nd.Panicf(op, nd.ErrArgument, "dropout %g outside [0, 1)", o.Dropout)
	case o.Layout != "TNC" && o.Layout != "NTC":
		nd.Panicf(op, nd.ErrArgument, "layout %q: want TNC or NTC", o.Layout)
	}
	l := &Layer{BlockMeta: gluon.NewBlockMeta(m.String()), Mode: m, HiddenSize: hiddenSize, opts: o}
	dirs := l.directions()
	for k := range o.NumLayers {
		in := o.InputSize
		if k > 0 {
			in = dirs * hiddenSize
		}
		var ws []weights
		for d := range dirs {
			suffix := fmt.Sprintf("_l%d", k)
			if d == 1 {
				suffix += "_reverse"
			}
			ws = append(ws, newWeights(&l.BlockMeta, m, in, hiddenSize, suffix))
		}
		l.w = append(l.w, ws)
	}
	return l
}

// NewLSTM returns an LSTM layer (PyTorch's nn.LSTM).
func NewLSTM(hiddenSize int, o Opts) *Layer { return NewLayer(LSTM, hiddenSize, o) }

// NewGRU returns a GRU layer (PyTorch's nn.GRU).
func NewGRU(hiddenSize int, o Opts) *Layer { return NewLayer(GRU, hiddenSize, o) }

// NewRNN returns an Elman RNN layer with tanh (PyTorch's nn.RNN); set the
// mode with NewLayer(RNNReLU, ...) for ReLU.
func NewRNN(hiddenSize int, o Opts) *Layer { return NewLayer(RNNTanh, hiddenSize, o) }

// Opts returns the layer's options with defaults filled in.
func (l *Layer) Opts() Opts { return l.opts }

func (l *Layer) directions() int {
	if l.opts.Bidirectional {
		return 2
	}
	return 1
}

// Forward runs the layer from zero states and returns its output.
func (l *Layer) Forward(x *nd.NDArray) *nd.NDArray { return l.ForwardMulti(x)[0] }

// BeginState returns zero begin states [L·D, n, H] on like's context,
// dtype and session.
func (l *Layer) BeginState(like *nd.NDArray, n int) []*nd.NDArray {
	st := make([]*nd.NDArray, l.Mode.states())
	for i := range st {
		st[i] = zeroState(like, l.opts.NumLayers*l.directions(), n, l.HiddenSize)
	}
	return st
}

// ForwardMulti runs the layer; see Layer for the inputs and outputs.
func (l *Layer) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	op := "rnn." + l.Mode.String()
	ns := l.Mode.states()
	if len(inputs) < 1 || len(inputs) > 2+ns || inputs[0] == nil {
		nd.Panicf(op, nd.ErrArgument, "takes x, up to %d begin states and the lengths, got %d inputs", ns, len(inputs))
	}
	x := inputs[0]
	var lengths *nd.NDArray
	if len(inputs) == 2+ns {
		lengths = inputs[1+ns]
	}
	if x.NDim() != 3 {
		nd.Panicf(op, nd.ErrShape, "input has shape %v, want 3-D (%s)", x.Shape(), l.opts.Layout)
	}
	if l.opts.Layout == "NTC" {
		x = nd.SwapAxes(x, 0, 1)
	}
	t, n := x.Shape()[0], x.Shape()[1]
	if t == 0 || n == 0 {
		nd.Panicf(op, nd.ErrShape, "input has shape %v: empty sequence or batch", inputs[0].Shape())
	}
	ld, hsz := l.opts.NumLayers*l.directions(), l.HiddenSize
	masks := stepMasks(op, lengths, x, t, n)
	begin := make([]*nd.NDArray, ns)
	for i := range begin {
		if 1+i < len(inputs) {
			begin[i] = inputs[1+i]
		}
		checkState(op, stateName(i)+"0", x, begin[i], ld, n, hsz)
	}
	finals := make([][]*nd.NDArray, ns) // [state][layer·direction]
	for i := range finals {
		finals[i] = make([]*nd.NDArray, ld)
	}
	for k, ws := range l.w {
		outs := make([]*nd.NDArray, len(ws))
		for d, w := range ws {
			idx := k*len(ws) + d
			st := make([]*nd.NDArray, ns)
			for i := range st {
				if begin[i] == nil {
					st[i] = zeroState(x, n, hsz)
				} else {
					st[i] = nd.Reshape(nd.SliceAxis(begin[i], idx, idx+1, 0), n, hsz)
				}
			}
			outs[d], st = l.run(w, x, st, d == 1, masks)
			for i := range st {
				finals[i][idx] = st[i]
			}
		}
		x = outs[0]
		if len(outs) == 2 {
			x = nd.Concat([]*nd.NDArray{outs[0], outs[1]}, 2)
		}
		if l.opts.Dropout > 0 && k < len(l.w)-1 {
			x = nd.Dropout(x, l.opts.Dropout)
		}
	}
	if l.opts.Layout == "NTC" {
		x = nd.SwapAxes(x, 0, 1)
	}
	res := []*nd.NDArray{x}
	for i := range finals {
		res = append(res, nd.Stack(finals[i], 0))
	}
	return res
}

// run runs one direction of one layer over x [T, N, in] from states st and
// returns its output [T, N, H] and final states. With masks (per step, the
// samples still running, [N, 1]) a finished sample keeps its states and
// outputs 0.
func (l *Layer) run(w weights, x *nd.NDArray, st []*nd.NDArray, reverse bool, masks []*nd.NDArray) (*nd.NDArray, []*nd.NDArray) {
	t, n := x.Shape()[0], x.Shape()[1]
	g := l.Mode.gates() * l.HiddenSize
	xp := w.project(x, g)
	whh, bhh := w.hidden(x) // once per call (a derived weight's power method too)
	hs := make([]*nd.NDArray, t)
	for k := range t {
		i := k
		if reverse {
			i = t - 1 - k
		}
		next := step(l.Mode, whh, bhh, nd.Reshape(nd.SliceAxis(xp, i, i+1, 0), n, g), st)
		if masks == nil {
			st = next
			hs[i] = st[0]
			continue
		}
		for j := range st {
			next[j] = nd.Where(masks[i], next[j], st[j])
		}
		st = next
		hs[i] = nd.Where(masks[i], st[0], nd.ZerosLike(st[0]))
	}
	return nd.Stack(hs, 0), st
}

// stepMasks returns, for each of t steps, which of the n samples of the
// given lengths still run ([n, 1] Bool), or nil without lengths.
func stepMasks(op string, lengths, x *nd.NDArray, t, n int) []*nd.NDArray {
	if lengths == nil {
		return nil
	}
	if lengths.NDim() != 1 || lengths.Shape()[0] != n || !lengths.DType().IsInt() {
		nd.Panicf(op, nd.ErrArgument, "lengths must be an integer vector of the batch size %d, got %v %v", n, lengths.DType(), lengths.Shape())
	}
	if lengths.Context() != x.Context() {
		nd.Panicf(op, nd.ErrContext, "lengths are on %v, the input on %v", lengths.Context(), x.Context())
	}
	for i, v := range lengths.Int64s() {
		if v < 1 || v > int64(t) {
			nd.Panicf(op, nd.ErrArgument, "length %d of sample %d outside [1, %d]", v, i, t)
		}
	}
	lens := nd.Reshape(lengths.AsType(nd.Int64), n, 1)
	masks := make([]*nd.NDArray, t)
	for i := range masks {
		masks[i] = nd.Greater(lens, x.Session().Full(x.Context(), nd.Int64, float64(i)))
	}
	return masks
}

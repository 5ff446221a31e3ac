package onnx

import (
	"fmt"
	"strings"

	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// The recurrent ops (RNN, GRU, LSTM) run step by step with nd's ops, so an
// imported recurrent model is differentiable and fine-tunes. Inputs:
// X, W, R, B, sequence_lens, initial_h (and initial_c, P for LSTM);
// outputs Y [T, D, N, H], Y_h [D, N, H] (and Y_c), or batch-first with
// layout 1.

// cell describes one recurrent op: its gate count and its step.
type cell struct {
	gates int // blocks of H rows in W and R
	acts  int // activations per direction
}

var cells = map[string]cell{"RNN": {1, 1}, "GRU": {3, 2}, "LSTM": {4, 3}}

// activation names the functions the activations attribute may list.
var activation = map[string]func(*nd.NDArray) *nd.NDArray{
	"sigmoid": nd.Sigmoid, "tanh": nd.Tanh, "relu": nd.Relu,
}

// checkRecurrent rejects at load what the recurrent ops do not support.
func checkRecurrent(n *onnxpb.NodeProto, a attrs) error {
	c := cells[n.GetOpType()]
	if at, ok := a["activations"]; ok {
		for _, s := range at.GetStrings() {
			if activation[strings.ToLower(string(s))] == nil {
				return fmt.Errorf("node %q (%s): activation %q is not supported (Sigmoid, Tanh and Relu are)", n.GetName(), n.GetOpType(), s)
			}
		}
		if k := len(at.GetStrings()); k != c.acts && k != 2*c.acts {
			return fmt.Errorf("node %q (%s): %d activations: want %d per direction", n.GetName(), n.GetOpType(), k, c.acts)
		}
	}
	if a.int("input_forget", 0) != 0 {
		return fmt.Errorf("node %q: LSTM with input_forget is not supported", n.GetName())
	}
	switch d := a.str("direction", "forward"); d {
	case "forward", "reverse", "bidirectional":
	default:
		return fmt.Errorf("node %q (%s): direction %q is not one of forward, reverse and bidirectional", n.GetName(), n.GetOpType(), d)
	}
	return nil
}

// opRecurrent runs an RNN, GRU or LSTM node.
func opRecurrent(n *node, in []*nd.NDArray) []*nd.NDArray {
	op := n.n.GetOpType()
	c := cells[op]
	x, w, r := in[0], in[1], in[2]
	batchFirst := n.a.int("layout", 0) != 0
	if x.NDim() != 3 || w.NDim() != 3 || r.NDim() != 3 {
		n.fail("X %v, W %v, R %v: want rank 3 each", x.Shape(), w.Shape(), r.Shape())
	}
	if batchFirst {
		x = nd.SwapAxes(x, 0, 1)
	}
	T, N := x.Shape()[0], x.Shape()[1]
	dirs := 1
	if n.a.str("direction", "forward") == "bidirectional" {
		dirs = 2
	}
	H := r.Shape()[2]
	if w.Shape()[0] != dirs || w.Shape()[1] != c.gates*H || w.Shape()[2] != x.Shape()[2] || r.Shape()[0] != dirs || r.Shape()[1] != c.gates*H {
		n.fail("W %v and R %v for X %v: want [%d, %d, input] and [%d, %d, %d]", w.Shape(), r.Shape(), x.Shape(), dirs, c.gates*H, dirs, c.gates*H, H)
	}
	names := []string{"sigmoid", "tanh", "tanh"}[:c.acts]
	if op == "RNN" {
		names = []string{"tanh"}
	}
	if at, ok := n.a["activations"]; ok {
		names = nil
		for _, s := range at.GetStrings() {
			names = append(names, strings.ToLower(string(s)))
		}
	}
	var lens []int
	if sl := optional(in, 4); sl != nil {
		lens = intsOf(sl)
		if len(lens) != N {
			n.fail("sequence_lens has %d entries for a batch of %d", len(lens), N)
		}
		for _, l := range lens {
			if l < 0 || l > T {
				n.fail("sequence length %d outside [0, %d]", l, T)
			}
		}
	}
	var ys, hs, cs []*nd.NDArray
	for d := range dirs {
		reverse := d == 1 || n.a.str("direction", "forward") == "reverse"
		acts := make([]func(*nd.NDArray) *nd.NDArray, c.acts)
		for i := range acts {
			acts[i] = activation[names[(d*c.acts+i)%len(names)]]
		}
		s := &rnnState{n: n, op: op, acts: acts, H: H, clip: n.a.float("clip", 0)}
		s.w, s.r = nd.Squeeze(nd.SliceAxis(w, d, d+1, 0), 0), nd.Squeeze(nd.SliceAxis(r, d, d+1, 0), 0)
		if b := optional(in, 3); b != nil {
			b = nd.Squeeze(nd.SliceAxis(b, d, d+1, 0), 0)
			s.wb, s.rb = nd.SliceAxis(b, 0, c.gates*H, 0), nd.SliceAxis(b, c.gates*H, 2*c.gates*H, 0)
		}
		if p := optional(in, 7); p != nil {
			s.p = nd.Split(nd.Squeeze(nd.SliceAxis(p, d, d+1, 0), 0), 3, 0)
		}
		s.h = initial(n, optional(in, 5), d, N, H, x, batchFirst)
		if op == "LSTM" {
			s.c = initial(n, optional(in, 6), d, N, H, x, batchFirst)
		}
		xd := x
		if reverse {
			xd = reverseSeqs(x, lens)
		}
		y := s.run(xd, T, N, lens)
		if reverse {
			y = reverseSeqs(y, lens)
		}
		ys, hs = append(ys, y), append(hs, s.h)
		if op == "LSTM" {
			cs = append(cs, s.c)
		}
	}
	Y, Yh := nd.Stack(ys, 1), nd.Stack(hs, 0) // [T, D, N, H], [D, N, H]
	var Yc *nd.NDArray
	if op == "LSTM" {
		Yc = nd.Stack(cs, 0)
	}
	if batchFirst {
		Y, Yh = nd.Transpose(Y, 2, 0, 1, 3), nd.SwapAxes(Yh, 0, 1)
		if Yc != nil {
			Yc = nd.SwapAxes(Yc, 0, 1)
		}
	}
	if op == "LSTM" {
		return []*nd.NDArray{Y, Yh, Yc}
	}
	return []*nd.NDArray{Y, Yh}
}

// initial reads direction d's initial state ([D, N, H], or [N, D, H]
// batch-first), zeros when omitted.
func initial(n *node, h *nd.NDArray, d, N, H int, x *nd.NDArray, batchFirst bool) *nd.NDArray {
	if h == nil {
		return nd.Zeros(x.Context(), x.DType(), N, H)
	}
	ax := 0
	if batchFirst {
		ax = 1
	}
	if h.NDim() != 3 || h.Shape()[ax] <= d {
		n.fail("initial state of shape %v: want [directions, N, H] ([N, directions, H] with layout 1)", h.Shape())
	}
	h = nd.Squeeze(nd.SliceAxis(h, d, d+1, ax), ax)
	if h.Shape()[0] != N || h.Shape()[1] != H {
		n.fail("initial state %v: want [%d, %d] per direction", h.Shape(), N, H)
	}
	return h
}

// reverseSeqs reverses each batch entry's first lens[b] steps of x
// ([T, N, F]); all T steps when lens is nil.
func reverseSeqs(x *nd.NDArray, lens []int) *nd.NDArray {
	if lens == nil {
		return nd.Flip(x, 0)
	}
	s := x.Shape()
	idx := make([]int64, s[0]*s[1]*s[2])
	for t := range s[0] {
		for b := range s[1] {
			src := t
			if t < lens[b] {
				src = lens[b] - 1 - t
			}
			for f := range s[2] {
				idx[(t*s[1]+b)*s[2]+f] = int64(src)
			}
		}
	}
	return nd.Gather(x, nd.FromSlice(x.Context(), idx, s...), 0)
}

// rnnState is one direction's weights and running state.
type rnnState struct {
	n      *node
	op     string
	acts   []func(*nd.NDArray) *nd.NDArray
	H      int
	clip   float64
	w, r   *nd.NDArray   // [G·H, input], [G·H, H]
	wb, rb *nd.NDArray   // [G·H] each, or nil
	p      []*nd.NDArray // LSTM peepholes i, o, f, or nil
	h, c   *nd.NDArray   // [N, H]
}

// pre clips a gate's pre-activation when the clip attribute is set.
func (s *rnnState) pre(v *nd.NDArray) *nd.NDArray {
	if s.clip > 0 {
		return nd.Clip(v, -s.clip, s.clip)
	}
	return v
}

// run steps through x ([T, N, input]) and returns the hidden states
// [T, N, H]; past an entry's sequence length its state holds and its
// output is zero.
func (s *rnnState) run(x *nd.NDArray, T, N int, lens []int) *nd.NDArray {
	sh := x.Shape()
	xw := nd.Dot(nd.Reshape(x, T*N, sh[2]), s.w, false, true) // [T·N, G·H]
	if s.wb != nil {
		xw = nd.Add(xw, s.wb)
	}
	xw = nd.Reshape(xw, T, N, -1)
	ys := make([]*nd.NDArray, T)
	for t := range T {
		h, c := s.step(nd.Squeeze(nd.SliceAxis(xw, t, t+1, 0), 0))
		if lens != nil {
			live := make([]bool, N)
			for b := range N {
				live[b] = t < lens[b]
			}
			m := nd.FromSlice(x.Context(), live, N, 1)
			h = nd.Where(m, h, s.h)
			if c != nil {
				c = nd.Where(m, c, s.c)
			}
			ys[t] = nd.Where(m, h, nd.ZerosLike(h))
		} else {
			ys[t] = h
		}
		s.h, s.c = h, c
	}
	return nd.Stack(ys, 0)
}

// step computes one step's new hidden (and cell) state from the input's
// projection xw ([N, G·H], input bias included).
func (s *rnnState) step(xw *nd.NDArray) (h, c *nd.NDArray) {
	H := s.H
	hr := nd.Dot(s.h, s.r, false, true) // [N, G·H]
	if s.rb != nil {
		hr = nd.Add(hr, s.rb)
	}
	gate := func(a *nd.NDArray, k int) *nd.NDArray { return nd.SliceAxis(a, k*H, (k+1)*H, 1) }
	switch s.op {
	case "RNN":
		return s.acts[0](s.pre(nd.Add(xw, hr))), nil
	case "GRU": // gates z, r, h
		f, g := s.acts[0], s.acts[1]
		z := f(s.pre(nd.Add(gate(xw, 0), gate(hr, 0))))
		rr := f(s.pre(nd.Add(gate(xw, 1), gate(hr, 1))))
		var cand *nd.NDArray
		if s.n.a.int("linear_before_reset", 0) != 0 {
			cand = nd.Add(gate(xw, 2), nd.Mul(rr, gate(hr, 2)))
		} else {
			rh := nd.Dot(nd.Mul(rr, s.h), nd.SliceAxis(s.r, 2*H, 3*H, 0), false, true)
			if s.rb != nil {
				rh = nd.Add(rh, nd.SliceAxis(s.rb, 2*H, 3*H, 0))
			}
			cand = nd.Add(gate(xw, 2), rh)
		}
		cand = g(s.pre(cand))
		// (1 − z)·cand + z·h = cand + z·(h − cand)
		return nd.Add(cand, nd.Mul(z, nd.Sub(s.h, cand))), nil
	default: // LSTM: gates i, o, f, c
		f, g, hAct := s.acts[0], s.acts[1], s.acts[2]
		pi, po, pf := gate(xw, 0), gate(xw, 1), gate(xw, 2)
		pi, po, pf = nd.Add(pi, gate(hr, 0)), nd.Add(po, gate(hr, 1)), nd.Add(pf, gate(hr, 2))
		if s.p != nil {
			pi, pf = nd.Add(pi, nd.Mul(s.p[0], s.c)), nd.Add(pf, nd.Mul(s.p[2], s.c))
		}
		i, fg := f(s.pre(pi)), f(s.pre(pf))
		cand := g(s.pre(nd.Add(gate(xw, 3), gate(hr, 3))))
		c = nd.Add(nd.Mul(fg, s.c), nd.Mul(i, cand))
		if s.p != nil {
			po = nd.Add(po, nd.Mul(s.p[1], c))
		}
		return nd.Mul(f(s.pre(po)), hAct(c)), c
	}
}

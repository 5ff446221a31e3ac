package nd_test

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// traceCase is a computation over one or two inputs and some parameters,
// made fresh (and seeded) for each run.
type traceCase struct {
	name    string
	inputs  func() []*nd.NDArray
	params  func() []*nd.NDArray
	f       func(in, p []*nd.NDArray) []*nd.NDArray
	inGrad  bool // the first input needs a gradient
	train   bool
	noGrads bool // outputs not differentiable (integer results)
	// fused is how many pooling and bias + ReLU backward pairs the
	// recorded trace runs as one (GraphStats.FusedBackward).
	fused int
}

var cpu0 = ctx.CPU(0)

func randn(seed uint64, shape ...int) *nd.NDArray {
	nd.Seed(seed)
	return nd.RandomNormal(cpu0, nd.Float32, 0, 1, shape...)
}

func traceCases() []traceCase {
	return []traceCase{
		{
			name:   "mlp",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 8, 20)} },
			params: func() []*nd.NDArray {
				return []*nd.NDArray{randn(2, 16, 20), randn(3, 16), randn(4, 5, 16), randn(5, 5)}
			},
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				h := nd.Relu(nd.FullyConnected(in[0], p[0], p[1]))
				h = nd.Dropout(h, 0.3)
				return []*nd.NDArray{nd.LogSoftmax(nd.FullyConnected(h, p[2], p[3]), 1)}
			},
			inGrad: true, train: true,
		},
		{
			name:   "convnet",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 4, 2, 10, 10)} },
			params: func() []*nd.NDArray {
				return []*nd.NDArray{randn(2, 6, 2, 3, 3), randn(3, 6), nd.Ones(cpu0, nd.Float32, 6), nd.Zeros(cpu0, nd.Float32, 6),
					nd.Zeros(cpu0, nd.Float32, 6), nd.Ones(cpu0, nd.Float32, 6), randn(4, 3, 24)}
			},
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				h := nd.Conv2D(in[0], p[0], p[1], nd.ConvOpts{Pad: [2]int{1, 1}})
				h = nd.BatchNorm(h, p[2], p[3], p[4], p[5], nd.BatchNormOpts{})
				h = nd.MaxPool2D(nd.Relu(h), [2]int{2, 2}, [2]int{2, 2}, [2]int{})
				h = nd.Reshape(nd.MaxPool2D(h, [2]int{2, 2}, [2]int{2, 2}, [2]int{}), 4, -1)
				return []*nd.NDArray{nd.FullyConnected(h, p[6], nil)}
			},
			train: true,
		},
		{
			name:   "conv-relu-pool",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 4, 2, 10, 10)} },
			params: func() []*nd.NDArray {
				return []*nd.NDArray{randn(2, 6, 2, 3, 3), randn(3, 6), randn(4, 5, 6, 3, 3), randn(5, 5), randn(6, 3, 45)}
			},
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				h := nd.Conv2DBiasRelu(in[0], p[0], p[1], nd.ConvOpts{Pad: [2]int{1, 1}})
				h = nd.MaxPool2D(h, [2]int{2, 2}, [2]int{2, 2}, [2]int{})
				h = nd.Conv2DBiasRelu(h, p[2], p[3], nd.ConvOpts{Pad: [2]int{1, 1}})
				h = nd.Reshape(nd.MaxPool2D(h, [2]int{3, 3}, [2]int{1, 1}, [2]int{}), 4, -1)
				return []*nd.NDArray{nd.FullyConnected(h, p[4], nil)}
			},
			inGrad: true,
			fused:  2,
		},
		{
			name:   "biasrelu-avgpool",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 3, 4, 6, 6)} },
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(2, 4)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				return []*nd.NDArray{nd.AvgPool2D(nd.BiasRelu(in[0], p[0], 1), [2]int{2, 2}, [2]int{2, 2}, [2]int{})}
			},
			inGrad: true,
			fused:  1,
		},
		{
			// The ReLU's output is read twice: its gradient is a sum, no
			// fusion.
			name:   "relu-read-twice",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 2, 3, 8, 8)} },
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(2, 4, 3, 3, 3), randn(3, 4)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				h := nd.Conv2DBiasRelu(in[0], p[0], p[1], nd.ConvOpts{Pad: [2]int{1, 1}})
				return []*nd.NDArray{nd.MaxPool2D(h, [2]int{2, 2}, [2]int{2, 2}, [2]int{}), nd.Exp(h)}
			},
			inGrad: true,
		},
		{
			name:   "layernorm-gelu-predict",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 3, 4, 8)} },
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(2, 8), randn(3, 8), randn(4, 8, 8)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				h := nd.GELU(nd.LayerNorm(in[0], p[0], p[1], -1, 1e-5), false)
				return []*nd.NDArray{nd.MatMul(h, p[2])}
			},
			inGrad: true,
		},
		{
			name: "two-outputs-two-inputs",
			inputs: func() []*nd.NDArray {
				return []*nd.NDArray{randn(1, 6, 4), randn(2, 6, 4)}
			},
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(3, 4)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				parts := nd.Split(nd.Mul(in[0], in[1]), 2, 0)
				return []*nd.NDArray{nd.Mul(nd.Tanh(parts[0]), p[0]), nd.Reshape(nd.Sigmoid(parts[1]), 12)}
			},
			inGrad: true,
		},
		{
			name:   "constants-and-indexing",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 5, 3)} },
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(2, 10, 3)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				idx := nd.FromSlice(cpu0, []int64{3, 1, 4, 1, 5}, 5)
				pos := nd.Reshape(nd.Arange(cpu0, nd.Float32, 0, 15, 1), 5, 3)
				return []*nd.NDArray{nd.Add(nd.Add(in[0], nd.Take(p[0], idx, 0)), pos)}
			},
			inGrad: true,
		},
		{
			name:   "random-normal",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 7, 3)} },
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(2, 3)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				return []*nd.NDArray{nd.Mul(nd.Add(in[0], nd.RandomNormalLike(in[0], 0, 1)), p[0])}
			},
			train: true,
		},
		{
			name:   "integer-result",
			inputs: func() []*nd.NDArray { return []*nd.NDArray{randn(1, 4, 6)} },
			params: func() []*nd.NDArray { return []*nd.NDArray{randn(2, 6)} },
			f: func(in, p []*nd.NDArray) []*nd.NDArray {
				return []*nd.NDArray{nd.ArgMax(nd.Add(in[0], p[0]), 1)}
			},
			noGrads: true,
		},
	}
}

// runTrace runs c three times eagerly or through a traced graph, recording
// with a head gradient per output, and returns every output and gradient.
func runTrace(t *testing.T, c traceCase, traced bool, record bool) [][]float64 {
	t.Helper()
	in, p := c.inputs(), c.params()
	if record {
		for _, a := range p {
			a.AttachGrad(nd.GradWrite)
		}
		if c.inGrad {
			in[0].AttachGrad(nd.GradWrite)
		}
	}
	nd.Seed(42)
	var g *nd.Graph
	var out [][]float64
	for it := 0; it < 3; it++ {
		var outs []*nd.NDArray
		exit := func() {}
		if record {
			exit = nd.EnterRecording(c.train)
		} else if c.train {
			exit = nd.EnterMode(true)
		}
		if traced {
			if g == nil {
				g = nd.Trace(c.name, func(x []*nd.NDArray) []*nd.NDArray { return c.f(x, p) }, in, p)
			}
			outs = g.Call(in)
		} else {
			outs = c.f(in, p)
		}
		exit()
		for _, o := range outs {
			out = append(out, o.Float64s())
		}
		if record && !c.noGrads {
			heads := make([]*nd.NDArray, len(outs))
			for i, o := range outs {
				heads[i] = randn(uint64(10+i+it), o.Shape()...)
			}
			nd.Backward(outs, heads, false)
			for _, a := range append(p, in...) {
				if gr := a.Grad(); gr != nil {
					out = append(out, gr.Float64s())
				}
			}
		}
	}
	for _, a := range p { // running statistics
		out = append(out, a.Float64s())
	}
	if g != nil {
		if got := g.Stats().FusedBackward; record && got != c.fused {
			t.Errorf("%d backward pairs fused, want %d", got, c.fused)
		}
		g.Release()
	}
	return out
}

func TestTraceReplaysEagerBitForBit(t *testing.T) {
	for _, c := range traceCases() {
		for _, record := range []bool{false, true} {
			name := c.name
			if record {
				name += "/record"
			}
			t.Run(name, func(t *testing.T) {
				want := runTrace(t, c, false, record)
				got := runTrace(t, c, true, record)
				if len(got) != len(want) {
					t.Fatalf("%d arrays, want %d", len(got), len(want))
				}
				for i := range want {
					if len(got[i]) != len(want[i]) {
						t.Fatalf("array %d: %d values, want %d", i, len(got[i]), len(want[i]))
					}
					for j := range want[i] {
						if math.Float64bits(got[i][j]) != math.Float64bits(want[i][j]) {
							t.Fatalf("array %d [%d] = %v, eager %v", i, j, got[i][j], want[i][j])
						}
					}
				}
			})
		}
	}
}

func wantTraceError(t *testing.T, kind nd.ErrorKind, f func()) error {
	t.Helper()
	err := nd.Catch(f)
	if err == nil || !errors.Is(err, &nd.Error{Kind: kind}) {
		t.Fatalf("got %v, want a %v error", err, kind)
	}
	return err
}

func TestTraceErrors(t *testing.T) {
	x := randn(1, 2, 3)
	w := randn(2, 3)
	t.Run("host read", func(t *testing.T) {
		wantTraceError(t, nd.ErrTrace, func() {
			nd.Trace("read", func(in []*nd.NDArray) []*nd.NDArray {
				if nd.Sum(in[0]).Scalar() > 0 {
					return []*nd.NDArray{in[0]}
				}
				return []*nd.NDArray{nd.Neg(in[0])}
			}, []*nd.NDArray{x}, nil)
		})
	})
	t.Run("persistent array", func(t *testing.T) {
		wantTraceError(t, nd.ErrTrace, func() {
			nd.Trace("persist", func(in []*nd.NDArray) []*nd.NDArray {
				return []*nd.NDArray{nd.Exp(in[0]).Persist()}
			}, []*nd.NDArray{x}, nil)
		})
	})
	g := nd.Trace("mul", func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Mul(in[0], w)}
	}, []*nd.NDArray{x}, []*nd.NDArray{w})
	defer g.Release()
	t.Run("new shape", func(t *testing.T) {
		wantTraceError(t, nd.ErrTrace, func() { g.Call([]*nd.NDArray{randn(1, 3, 3)}) })
	})
	t.Run("new mode", func(t *testing.T) {
		wantTraceError(t, nd.ErrTrace, func() {
			defer nd.EnterRecording(true)()
			g.Call([]*nd.NDArray{x})
		})
	})
	t.Run("unbound leaf", func(t *testing.T) {
		v := randn(3, 3)
		v.AttachGrad(nd.GradWrite)
		wantTraceError(t, nd.ErrTrace, func() {
			defer nd.EnterRecording(true)()
			nd.Trace("captured", func(in []*nd.NDArray) []*nd.NDArray {
				return []*nd.NDArray{nd.Mul(in[0], v)}
			}, []*nd.NDArray{x}, []*nd.NDArray{w})
		})
	})
	t.Run("second backward", func(t *testing.T) {
		p := randn(2, 3)
		p.AttachGrad(nd.GradWrite)
		exit := nd.EnterRecording(true)
		gr := nd.Trace("twice", func(in []*nd.NDArray) []*nd.NDArray {
			return []*nd.NDArray{nd.Mul(in[0], p)}
		}, []*nd.NDArray{x}, []*nd.NDArray{p})
		y := gr.Call([]*nd.NDArray{x})[0]
		exit()
		nd.Backward([]*nd.NDArray{y}, nil, true)
		wantTraceError(t, nd.ErrGraph, func() { nd.Backward([]*nd.NDArray{y}, nil, true) })
	})
}

// TestTracePlansBuffers checks that a chain of ops replays in fewer
// buffers than it allocates eagerly, and that a replay allocates only its
// output.
func TestTracePlansBuffers(t *testing.T) {
	x := randn(1, 64, 64)
	g := nd.Trace("chain", func(in []*nd.NDArray) []*nd.NDArray {
		h := in[0]
		for range 10 {
			h = nd.Tanh(nd.AddScalar(h, 1))
		}
		return []*nd.NDArray{h}
	}, []*nd.NDArray{x}, nil)
	defer g.Release()
	st := g.Stats()
	if st.Steps != 20 || st.Buffers > 2 || st.PlannedBytes*5 > st.TracedBytes {
		t.Fatalf("stats %+v: want 20 steps in at most 2 planned buffers", st)
	}
	g.Call([]*nd.NDArray{x})[0].Release() // makes the buffer set
	before := nd.MemoryStats(cpu0).Allocs
	for range 5 {
		g.Call([]*nd.NDArray{x})[0].Release()
	}
	if n := nd.MemoryStats(cpu0).Allocs - before; n != 5 {
		t.Fatalf("5 replays made %d allocations, want 5 (their outputs)", n)
	}
}

// TestTraceConcurrentCalls replays one graph from several goroutines at
// once (run under -race): each call has its own buffers.
func TestTraceConcurrentCalls(t *testing.T) {
	w := randn(2, 16, 16)
	g := nd.Trace("dense", func(in []*nd.NDArray) []*nd.NDArray {
		return []*nd.NDArray{nd.Relu(nd.FullyConnected(nd.Tanh(in[0]), w, nil))}
	}, []*nd.NDArray{randn(1, 4, 16)}, []*nd.NDArray{w})
	defer g.Release()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for k := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := randn(uint64(100+k), 4, 16)
			want := nd.Relu(nd.FullyConnected(nd.Tanh(x), w, nil)).Float32s()
			for range 50 {
				got := g.Call([]*nd.NDArray{x})[0].Float32s()
				for i := range want {
					if got[i] != want[i] {
						errs <- "concurrent replay differs from eager"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

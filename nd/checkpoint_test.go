package nd

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestCheckpointDraws: a checkpointed function draws what it would
// unchecked, from the caller's generator, which its recomputation leaves
// alone; the backward pass replays the forward's masks while another
// goroutine draws from the same generator.
func TestCheckpointDraws(t *testing.T) {
	dev := ctx.CPU(0)
	f := func(in []*NDArray) []*NDArray {
		h := Dropout(Tanh(in[0]), 0.5)
		return []*NDArray{Add(h, RandomNormal(dev, Float64, 0, 1, 64))}
	}
	// step runs one recorded pass and its backward, then draws once more.
	step := func(ck bool) (y, g, next []float64) {
		Seed(3)
		x := PersistentSession().Ones(dev, Float64, 64)
		x.AttachGrad(GradWrite)
		var out, l *NDArray
		DefaultSession().Record(func() {
			if ck {
				out = Checkpoint(f, []*NDArray{x}, nil)[0]
			} else {
				out = f([]*NDArray{x})[0]
			}
			l = Sum(out)
		})
		Backward([]*NDArray{l}, nil, false)
		return out.Float64s(), x.Grad().Float64s(), RandomUniform(dev, Float64, 0, 1, 4).Float64s()
	}
	y1, g1, n1 := step(false)
	y2, g2, n2 := step(true)
	if !slices.Equal(y1, y2) || !slices.Equal(g1, g2) {
		t.Error("checkpointed output or gradient differs from the plain one's")
	}
	if !slices.Equal(n1, n2) {
		t.Errorf("the draw after the step: %v checkpointed, %v plain", n2, n1)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				RandomUniform(dev, Float32, 0, 1, 1)
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	for i := range 100 {
		x := PersistentSession().Ones(dev, Float32, 256)
		x.AttachGrad(GradWrite)
		var y, l *NDArray
		DefaultSession().Record(func() {
			y = Checkpoint(func(in []*NDArray) []*NDArray { return []*NDArray{Dropout(in[0], 0.5)} }, []*NDArray{x}, nil)[0]
			l = Sum(y)
		})
		Backward([]*NDArray{l}, nil, false)
		yv, gv := y.Float32s(), x.Grad().Float32s()
		for j := range yv {
			if (yv[j] == 0) != (gv[j] == 0) {
				t.Fatalf("step %d element %d: output %v, gradient %v: not the forward's mask", i, j, yv[j], gv[j])
			}
		}
	}
}

// TestCheckpointDrawErrors: a function that draws more in its
// recomputation, or asks for its generator's state, is an error.
func TestCheckpointDrawErrors(t *testing.T) {
	dev := ctx.CPU(0)
	x := PersistentSession().Ones(dev, Float32, 8)
	x.AttachGrad(GradWrite)
	calls := 0
	more := func(in []*NDArray) []*NDArray {
		calls++
		out := in[0]
		for range calls {
			out = Dropout(out, 0.5)
		}
		return []*NDArray{out}
	}
	var l *NDArray
	DefaultSession().Record(func() { l = Sum(Checkpoint(more, []*NDArray{x}, nil)[0]) })
	err := Catch(func() { Backward([]*NDArray{l}, nil, false) })
	if e := (*Error)(nil); !errors.As(err, &e) || e.Kind != ErrGraph {
		t.Errorf("a recomputation drawing more: %v, want ErrGraph", err)
	}
	state := func(in []*NDArray) []*NDArray {
		in[0].Session().RNGState(dev)
		return []*NDArray{MulScalar(in[0], 2)}
	}
	err = Catch(func() { DefaultSession().Record(func() { Checkpoint(state, []*NDArray{x}, nil) }) })
	if e := (*Error)(nil); !errors.As(err, &e) || e.Kind != ErrArgument {
		t.Errorf("RNGState inside: %v, want ErrArgument", err)
	}
}

// TestCheckpointCases: what the unchecked function does, a checkpointed
// one does too — a weight that is an input and a parameter (tied), outputs
// on another context than the inputs — and what it cannot return is an
// error.
func TestCheckpointCases(t *testing.T) {
	dev, dev1 := ctx.CPU(0), ctx.CPU(1)
	w := PersistentSession().RandomNormal(dev, Float64, 0, 1, 4)
	w.AttachGrad(GradWrite)
	tied := func(in []*NDArray) []*NDArray { return []*NDArray{Mul(Tanh(in[0]), Mul(in[1], w))} }
	moved := func(in []*NDArray) []*NDArray { return []*NDArray{Tanh(in[0].CopyTo(dev1))} }
	cases := []struct {
		name   string
		f      func(in []*NDArray) []*NDArray
		params func() []*NDArray
	}{
		{"tied", tied, func() []*NDArray { return []*NDArray{w} }},
		{"other context", moved, nil},
	}
	for _, c := range cases {
		var got [2][]float64
		for k, ck := range []bool{false, true} {
			x := PersistentSession().Ones(dev, Float64, 4)
			x.AttachGrad(GradWrite)
			FillInPlace(w.Grad(), 0)
			var out *NDArray
			err := Catch(func() {
				var l *NDArray
				DefaultSession().Record(func() {
					if ck {
						out = Checkpoint(c.f, []*NDArray{x, w}, c.params)[0]
					} else {
						out = c.f([]*NDArray{x, w})[0]
					}
					l = Sum(out)
				})
				Backward([]*NDArray{l}, nil, false)
			})
			if err != nil {
				t.Fatalf("%s (checkpointed %v): %v", c.name, ck, err)
			}
			if out.Context() != c.f([]*NDArray{x, w})[0].Context() {
				t.Errorf("%s: output on %v", c.name, out.Context())
			}
			got[k] = append(x.Grad().Float64s(), w.Grad().Float64s()...)
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("%s: gradients %v checkpointed, %v plain", c.name, got[1], got[0])
		}
	}
	x := PersistentSession().Ones(dev, Float32, 4)
	x.AttachGrad(GradWrite)
	bad := []struct {
		name string
		f    func(in []*NDArray) []*NDArray
		kind ErrorKind
	}{
		{"nil output", func(in []*NDArray) []*NDArray { return []*NDArray{Tanh(in[0]), nil} }, ErrArgument},
		{"outputs on two contexts", func(in []*NDArray) []*NDArray { return []*NDArray{in[0], in[0].CopyTo(dev1)} }, ErrContext},
		{"integer output", func(in []*NDArray) []*NDArray { return []*NDArray{in[0].AsType(Int32)} }, ErrDType},
	}
	for _, c := range bad {
		err := Catch(func() { DefaultSession().Record(func() { Checkpoint(c.f, []*NDArray{x}, nil) }) })
		if e := (*Error)(nil); !errors.As(err, &e) || e.Kind != c.kind {
			t.Errorf("%s: %v, want kind %v", c.name, err, c.kind)
		}
	}
}

// TestCheckpointBorn: an array made by a package-level function before a
// step and read by the checkpointed function is released with the step's
// scope, as without Checkpoint.
func TestCheckpointBorn(t *testing.T) {
	dev := ctx.CPU(41)
	var inUse []int64
	for range 4 {
		sc := NewScope()
		k := Ones(dev, Float32, 1000)
		x := RandomNormal(dev, Float32, 0, 1, 4, 8)
		x.AttachGrad(GradWrite)
		var l *NDArray
		DefaultSession().Record(func() {
			l = Sum(Checkpoint(func(in []*NDArray) []*NDArray { return []*NDArray{Mul(in[0], Sum(k))} }, []*NDArray{x}, nil)[0])
		})
		Backward([]*NDArray{l}, nil, false)
		x.Grad().Release()
		sc.Close()
		inUse = append(inUse, MemoryStats(dev).InUse)
	}
	if !slices.Equal(inUse[1:], inUse[:3]) {
		t.Errorf("memory in use after each step: %v", inUse)
	}
}

// TestCheckpointInPlaceInput: a function that changes its input in place
// would change it again in the recomputation: it is an error.
func TestCheckpointInPlaceInput(t *testing.T) {
	dev := ctx.CPU(0)
	x := PersistentSession().Ones(dev, Float64, 3)
	x.AttachGrad(GradWrite)
	f := func(in []*NDArray) []*NDArray {
		AddTo(in[0], PersistentSession().Ones(dev, Float64, 3))
		return []*NDArray{Tanh(in[0])}
	}
	err := Catch(func() { DefaultSession().Record(func() { Checkpoint(f, []*NDArray{x}, nil) }) })
	if e := (*Error)(nil); !errors.As(err, &e) || e.Kind != ErrArgument {
		t.Errorf("%v, want ErrArgument", err)
	}
}

package gluon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// Cast to float64 and back: the float32 replicas made by the second Cast
// (which may get the pool's buffers of the first) are new arrays, so the
// graph traced before the casts is stale and the next call traces again.
func TestHybridizeCastRoundTrip(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := nn.NewDense(5, nn.DenseOpts{NoBias: true, InUnits: 4})
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, 2, 4).Persist()
	net.Forward(x) // infers the shapes
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	step := func(x *nd.NDArray) error {
		return nd.Catch(func() {
			var y *nd.NDArray
			nd.DefaultSession().Record(func() { y = nd.Sum(h.Forward(x)) })
			nd.Backward([]*nd.NDArray{y}, nil, false)
		})
	}
	if err := step(x); err != nil {
		t.Fatal(err)
	}
	if err := gluon.Cast(net, nd.Float64); err != nil {
		t.Fatal(err)
	}
	if err := step(x.AsType(nd.Float64)); err != nil {
		t.Fatal(err)
	}
	if err := gluon.Cast(net, nd.Float32); err != nil {
		t.Fatal(err)
	}
	if err := step(x); err != nil {
		t.Fatalf("after casting back to float32: %v (stats %+v)", err, h.Stats())
	}
}

// A network holding a hybridized SyncBatchNorm runs eagerly: the
// EagerOnly block is found behind the inner HybridBlock.
func TestHybridizeNestedEagerOnly(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := nn.NewSequential(nn.NewDense(4, nn.DenseOpts{InUnits: 3}), gluon.Hybridize(nn.NewSyncBatchNorm(nn.BatchNormOpts{InChannels: 4}), gluon.HybridOpts{}))
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, 2, 3).Persist()
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	err := nd.Catch(func() {
		nd.DefaultSession().TrainMode(func() { h.Forward(x) })
	})
	if err != nil {
		t.Fatalf("hybridized: %v (EagerReason %q); eagerly it runs", err, h.EagerReason())
	}
}

// Many goroutines, several signatures, a cache of one graph: graphs are
// evicted and released while other goroutines replay them.
func TestHybridizeEvictionRace(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := nn.NewSequential(nn.NewDense(8, nn.DenseOpts{InUnits: 3, Act: "tanh"}), nn.NewDense(2, nn.DenseOpts{InUnits: 8}))
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	h := gluon.Hybridize(net, gluon.HybridOpts{CacheSize: 1})
	done := make(chan error, 8)
	for k := range 8 {
		go func() {
			done <- nd.Catch(func() {
				s := nd.NewSession("")
				for i := range 40 {
					n := 1 + (i+k)%4
					x := s.RandomUniform(dev, nd.Float32, 0, 1, n, 3)
					want := net.Forward(x).Float32s()
					got := h.Forward(x).Float32s()
					for j := range want {
						if want[j] != got[j] {
							panic("differs")
						}
					}
					if i%7 == 0 {
						h.Clear()
					}
				}
			})
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A hybridized Dense called on its own weight (an input that is a
// parameter) runs that call eagerly, and a later call on another array of
// the same signature computes with the weight.
func TestHybridizeInputIsParameter(t *testing.T) {
	dev := ctx.CPU(0)
	nd.Seed(1)
	net := nn.NewDense(4, nn.DenseOpts{NoBias: true, InUnits: 4})
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		t.Fatal(err)
	}
	w := net.Weight.Data(dev)
	h := gluon.Hybridize(net, gluon.HybridOpts{})
	h.Forward(w)
	x := nd.RandomUniform(dev, nd.Float32, 0, 1, 4, 4).Persist()
	x.AttachGrad(nd.GradWrite) // same signature as w
	want := net.Forward(x).Float32s()
	got := h.Forward(x).Float32s()
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("hybrid %v, eager %v (stats %+v)", got, want, h.Stats())
		}
	}
}

// TestHybridizeSeesReplacedReplicas: after a parameter's replicas are
// replaced (ResetContext, a forced Initialize), a hybridized block's next
// call uses the new arrays and gives the eager block's output; the
// replicas it found on the last call are reused only while none was
// replaced.
func TestHybridizeSeesReplacedReplicas(t *testing.T) {
	dev := ctx.CPU(0)
	for _, c := range []struct {
		name    string
		replace func(p *gluon.Parameter) error
	}{
		{"reset-context", func(p *gluon.Parameter) error { return p.ResetContext([]ctx.Context{dev}) }},
		{"initialize-force", func(p *gluon.Parameter) error {
			return p.Initialize(initializer.Constant{Value: 0.5}, []ctx.Context{dev}, true)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(2)
			net := nn.NewDense(3, nn.DenseOpts{InUnits: 4})
			if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
				t.Fatal(err)
			}
			x := nd.RandomUniform(dev, nd.Float32, 0, 1, 2, 4).Persist()
			h := gluon.Hybridize(net, gluon.HybridOpts{})
			for range 2 {
				h.Forward(x).Release()
			}
			for _, p := range gluon.CollectParams(net).List() {
				if err := c.replace(p); err != nil {
					t.Fatal(err)
				}
				p.SetData(nd.AddScalar(p.Data(dev), 0.25)) // values the old arrays do not have
			}
			want := net.Forward(x).Float32s()
			for call := range 2 {
				if got := h.Forward(x).Float32s(); !slices.Equal(got, want) {
					t.Fatalf("call %d after the replacement: %v, eager %v (stats %+v)", call, got, want, h.Stats())
				}
			}
		})
	}
}

// TestCastBeforeShapesKnown: casting a network whose parameters wait for
// their shapes (initialised, not yet made) sets the dtype the replicas
// will have; it does not make them look made (found by review: an empty
// replica list made Initialized true and a hybridized call panic).
func TestCastBeforeShapesKnown(t *testing.T) {
	dev := ctx.CPU(0)
	for _, hybrid := range []bool{false, true} {
		nd.Seed(1)
		net := nn.NewDense(3, nn.DenseOpts{})
		if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
			t.Fatal(err)
		}
		if err := gluon.Cast(net, nd.Float64); err != nil {
			t.Fatal(err)
		}
		for _, p := range gluon.CollectParams(net).List() {
			if strings.HasSuffix(p.Name(), "weight") && p.Initialized() { // its input size is not known yet
				t.Fatalf("%s: Initialized before its shape is known", p.Name())
			}
		}
		var b gluon.Block = net
		if hybrid {
			b = gluon.Hybridize(net, gluon.HybridOpts{})
		}
		x := nd.RandomUniform(dev, nd.Float64, 0, 1, 2, 4)
		var y *nd.NDArray
		if err := nd.Catch(func() { y = b.Forward(x) }); err != nil {
			t.Fatalf("hybrid=%v: %v", hybrid, err)
		}
		if y.DType() != nd.Float64 || !slices.Equal(y.Shape(), []int{2, 3}) {
			t.Fatalf("hybrid=%v: output %v %v", hybrid, y.DType(), y.Shape())
		}
		for _, p := range gluon.CollectParams(net).List() {
			if got := p.Data(dev).DType(); got != nd.Float64 {
				t.Fatalf("%s made in %v, want float64", p.Name(), got)
			}
		}
	}
}

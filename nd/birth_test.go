package nd_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestPackageArraysJoinScopeAtFirstUse: an array made by a package-level
// creation function joins the default session's scope it was made in at
// its first use by a default-session op; one used first by another
// session, or never used by an op, is not released by that scope.
func TestPackageArraysJoinScopeAtFirstUse(t *testing.T) {
	dev := ctx.CPU(0)
	other := nd.NewSession("other")
	for _, c := range []struct {
		name     string
		use      func(x *nd.NDArray)
		released bool
	}{
		{"default-session op", func(x *nd.NDArray) { nd.Add(x, x) }, true},
		{"single-input op", func(x *nd.NDArray) { nd.Exp(x) }, true},
		{"read on the host", func(x *nd.NDArray) { _ = x.Float32s() }, true},
		{"assigned to", func(x *nd.NDArray) { nd.Assign(x, nd.PersistentSession().Zeros(dev, nd.Float32, 3)) }, true},
		{"never used", func(x *nd.NDArray) {}, false},
		{"copied by another session", func(x *nd.NDArray) { other.CopyOf(x, dev) }, false},
		{"op with another session's array", func(x *nd.NDArray) { nd.Add(x, other.Ones(dev, nd.Float32, 3)) }, false},
		{"adopted by another session", func(x *nd.NDArray) { other.Adopt(x) }, false},
		{"used after Persist", func(x *nd.NDArray) { x.Persist(); nd.Add(x, x) }, false},
		{"assigned into another session's array", func(x *nd.NDArray) { nd.Assign(other.Zeros(dev, nd.Float32, 3), x) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			osc := other.NewScope()
			defer osc.Close()
			sc := nd.NewScope()
			x := nd.FromSlice(dev, []float32{1, 2, 3})
			c.use(x)
			sc.Close()
			if x.Released() != c.released {
				t.Fatalf("released = %v after the scope closed, want %v", x.Released(), c.released)
			}
		})
	}
	t.Run("first use after the scope closed", func(t *testing.T) {
		sc := nd.NewScope()
		x := nd.Zeros(dev, nd.Float32, 2)
		sc.Close()
		outer := nd.NewScope()
		nd.Add(x, x)
		outer.Close()
		if x.Released() {
			t.Fatal("an array whose birth scope had closed was released by another scope")
		}
	})
	t.Run("kept, then used", func(t *testing.T) {
		outer := nd.NewScope()
		inner := nd.NewScope()
		x := nd.Ones(dev, nd.Float32, 2)
		inner.Keep(x)
		nd.Add(x, x)
		inner.Close()
		if x.Released() {
			t.Fatal("a kept array was released by the scope that kept it")
		}
		outer.Close()
		if !x.Released() {
			t.Fatal("a kept array was not released by the enclosing scope")
		}
	})
}

// TestPackageArraysOfAnotherTree: a goroutine tree with its own session
// makes its inputs with the package-level functions and copies them into
// its session while the default tree opens and closes scopes as fast as it
// can; the default tree's scopes never release them (run under -race).
func TestPackageArraysOfAnotherTree(t *testing.T) {
	dev := ctx.CPU(0)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the default tree
		defer wg.Done()
		w := nd.PersistentSession().Ones(dev, nd.Float32, 4)
		for !stop.Load() {
			sc := nd.NewScope()
			nd.Sum(nd.Mul(nd.FromSlice(dev, []float32{1, 2, 3, 4}), w))
			sc.Close()
		}
	}()
	s := nd.NewSession("server")
	for i := range 2000 {
		x := nd.FromSlice(dev, []float32{float32(i), 1, 2, 3})
		err := nd.Catch(func() {
			sc := s.NewScope()
			defer sc.Close()
			if got := nd.Sum(s.CopyOf(x, dev)).Scalar(); got != float64(i+6) {
				t.Errorf("request %d: sum %v, want %d", i, got, i+6)
			}
		})
		if err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("request %d: %v", i, err)
		}
	}
	stop.Store(true)
	wg.Wait()
}

// TestPackageArraysMemoryFlat: a loop that makes arrays with the
// package-level functions inside a scope, and uses them in place or reads
// them, gives all of their memory back at each Close.
func TestPackageArraysMemoryFlat(t *testing.T) {
	dev := ctx.CPU(0)
	w := nd.PersistentSession().Ones(dev, nd.Float32, 64, 64)
	step := func() {
		sc := nd.NewScope()
		defer sc.Close()
		nd.Assign(w, nd.RandomNormal(dev, nd.Float32, 0, 1, 64, 64))
		nd.AddTo(nd.Ones(dev, nd.Float32, 64, 64), w)
		_ = nd.Zeros(dev, nd.Float32, 64, 64).Float32s()
		nd.FillInPlace(nd.Empty(dev, nd.Float32, 64), 1)
		_ = nd.Sum(nd.FromSlice(dev, []float32{1, 2, 3})).Scalar()
	}
	step()
	before := nd.MemoryStats(dev).InUse
	for range 100 {
		step()
	}
	if after := nd.MemoryStats(dev).InUse; after > before {
		t.Fatalf("100 steps grew the memory in use from %d to %d bytes", before, after)
	}
}

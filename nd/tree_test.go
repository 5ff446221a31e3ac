package nd_test

import (
	"fmt"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/internal/gid"
	"github.com/goluon/goluon/nd"
)

// TestTreeScopes: two goroutine trees each open scopes of the default
// session at once; each scope tracks only its own tree's arrays (results
// and package-made arrays, on the opener and on its nd.Go workers), Keep
// hands arrays to the same tree's enclosing scope even when the other
// tree opened a scope in between, and a goroutine of no tree has its
// arrays tracked by neither.
func TestTreeScopes(t *testing.T) {
	if !gid.Supported {
		t.Skip("goroutines cannot be told apart on this architecture")
	}
	dev := ctx.CPU(0)
	step := make(chan struct{})
	back := make(chan struct{})
	var (
		aOuter, aInner, aWorker, aBorn *nd.NDArray
		bInner, orphan                 *nd.NDArray
	)
	// Tree A opens its outer scope, then tree B opens one, then A its
	// inner one: the session-wide innermost scope is A's inner one while
	// B's arrays are made.
	outerA := nd.NewScope()
	x := nd.FromSlice(dev, []float32{1, 2, 3})
	aOuter = nd.AddScalar(x, 1)
	go func() {
		scB := nd.NewScope()
		back <- struct{}{}
		<-step
		bInner = nd.MulScalar(x, 2)
		back <- struct{}{}
		<-step
		scB.Close()
		back <- struct{}{}
	}()
	<-back
	innerA := nd.NewScope()
	step <- struct{}{}
	<-back
	aInner = nd.AddScalar(x, 3)
	done := make(chan struct{})
	nd.Go(func() {
		defer close(done)
		aWorker = nd.AddScalar(x, 4)
		aBorn = nd.FromSlice(dev, []float32{7})
		nd.Relu(aBorn) // its first use: joins the worker's tree's scope
	})
	<-done
	noTree := make(chan struct{})
	go func() { defer close(noTree); orphan = nd.AddScalar(x, 5) }()
	<-noTree
	keep := nd.AddScalar(x, 6)
	innerA.Keep(keep)
	innerA.Close()
	if !aInner.Released() || !aWorker.Released() || !aBorn.Released() {
		t.Errorf("A's inner scope left its arrays: own %v, worker's %v, born %v released", aInner.Released(), aWorker.Released(), aBorn.Released())
	}
	if bInner.Released() || orphan.Released() || keep.Released() || aOuter.Released() {
		t.Errorf("A's inner scope released others' arrays: B's %v, no tree's %v, kept %v, outer's %v", bInner.Released(), orphan.Released(), keep.Released(), aOuter.Released())
	}
	step <- struct{}{}
	<-back
	if !bInner.Released() {
		t.Error("B's scope did not release its array")
	}
	if keep.Released() || aOuter.Released() {
		t.Error("B's scope released A's arrays")
	}
	outerA.Close()
	if !keep.Released() || !aOuter.Released() {
		t.Error("A's outer scope did not release its arrays and the one kept from the inner scope")
	}
	if orphan.Released() {
		t.Error("a goroutine of no tree had its array released by a scope")
	}
	orphan.Release()
	x.Release()
}

// TestTreeAutocast: autocast is per tree too — a tree inside
// nd.Autocast(Float16) multiplies in half precision while another tree
// on the default session, and the workers it starts with nd.Go, do not
// autocast.
func TestTreeAutocast(t *testing.T) {
	if !gid.Supported {
		t.Skip("goroutines cannot be told apart on this architecture")
	}
	dev := ctx.CPU(0)
	a := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3, 4}, 2, 2)
	defer a.Release()
	in, out := make(chan struct{}), make(chan struct{})
	go nd.Autocast(nd.Float16, func() {
		close(in)
		<-out
	})
	<-in
	defer close(out)
	var mine, worker, other nd.DType
	nd.Autocast(nd.Float16, func() {
		mine = nd.MatMul(a, a).DType()
		done := make(chan struct{})
		nd.Go(func() { defer close(done); worker = nd.MatMul(a, a).DType() })
		<-done
	})
	exit := nd.EnterMode(true) // a tree with no autocast scope
	other = nd.MatMul(a, a).DType()
	exit()
	if mine != nd.Float16 || worker != nd.Float16 {
		t.Errorf("autocast tree: %v, its worker %v; want float16", mine, worker)
	}
	if other != nd.Float32 {
		t.Errorf("a tree without autocast beside one with it: %v, want float32", other)
	}
}

// A learner records in one goroutine while a server predicts in another,
// both with the package-level functions: the default session keeps each
// goroutine tree's mode apart, and a worker started with nd.Go records
// with the learner.
func ExampleGo() {
	serving, stop, served := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() { // the server: a tree of its own
		defer close(served)
		exit := nd.EnterMode(false) // autograd.PredictMode
		defer exit()
		close(serving)
		<-stop
	}()
	<-serving
	exit := nd.EnterRecording(true) // autograd.Record
	done := make(chan struct{})
	nd.Go(func() {
		defer close(done)
		fmt.Println("worker records:", nd.IsRecording(), "training:", nd.IsTraining())
	})
	<-done
	fmt.Println("learner records:", nd.IsRecording(), "training:", nd.IsTraining())
	exit()
	close(stop)
	<-served
	// Output:
	// worker records: true training: true
	// learner records: true training: true
}

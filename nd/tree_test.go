package nd_test

import (
	"fmt"
	"slices"
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
	defer otherTree(func() func() { return nd.EnterAutocast(nd.Float16) })()
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

// TestTreePlainWorkerInScope: in a program with one goroutine tree, a
// goroutine started with a plain go statement inside a scope has its
// arrays (results and package-made ones) tracked by that scope.
func TestTreePlainWorkerInScope(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3})
	sc := nd.NewScope()
	var y, born *nd.NDArray
	done := make(chan struct{})
	go func() {
		defer close(done)
		y = nd.AddScalar(x, 1)
		born = nd.FromSlice(dev, []float32{4})
		nd.Relu(born)
	}()
	<-done
	n := sc.Len()
	sc.Close()
	if !y.Released() || !born.Released() {
		t.Errorf("plain go worker inside a NewScope: scope tracked %d arrays; result released=%v born released=%v (leaked)", n, y.Released(), born.Released())
	}
}

// TestTreePlainWorkerInRecordScope: the same inside Record — the plain
// worker records with its parent and its intermediates are released with
// the scope.
func TestTreePlainWorkerInRecordScope(t *testing.T) {
	dev := ctx.CPU(0)
	w := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3})
	w.AttachGrad(nd.GradWrite)
	sc := nd.NewScope()
	var h *nd.NDArray
	var rec bool
	exit := nd.EnterRecording(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec = nd.IsRecording()
		h = nd.MulScalar(w, 2)
	}()
	<-done
	exit()
	sc.Close()
	if !rec || !h.Released() {
		t.Errorf("plain go worker in Record+NewScope: recorded %v, intermediate released %v", rec, h.Released())
	}
}

// TestTreeReopenedByMember: a tree whose scopes have all ended is reopened
// by a goroutine started in it with nd.Go; the goroutine that started the
// tree belongs to no tree now and stays out of it: a scope it opens starts
// a tree of its own, whose arrays the member's scope does not release.
func TestTreeReopenedByMember(t *testing.T) {
	if !gid.Supported {
		t.Skip("goroutines cannot be told apart on this architecture")
	}
	dev := ctx.CPU(0)
	x := nd.PersistentSession().FromSlice(dev, []float32{1, 2})
	exit := nd.EnterMode(true) // this goroutine starts tree T
	start, opened, closeIt, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var member nd.Tree
	nd.Go(func() { // member of T for as long as it runs
		<-start
		sc := nd.NewScope() // reopens T after it closed
		member = nd.CurrentTree()
		close(opened)
		<-closeIt
		sc.Close()
		close(done)
	})
	exit() // T closes: this goroutine belongs to no tree now
	if nd.CurrentTree() != (nd.Tree{}) {
		t.Fatalf("still in a tree right after its last scope ended")
	}
	close(start)
	<-opened
	inTree := nd.CurrentTree() != (nd.Tree{})
	own := nd.NewScope()
	mine := nd.CurrentTree()
	y := nd.AddScalar(x, 1)
	close(closeIt)
	<-done
	if inTree || mine == member || y.Released() {
		t.Errorf("former owner of a tree reopened by a member: in a tree %v, its own scope in the member's tree %v, its array released by the member's scope %v", inTree, mine == member, y.Released())
	}
	own.Close()
	if !y.Released() {
		t.Error("its own scope did not release its array")
	}
}

// TestTreeScopeOnlyOwnMode: a tree with only a memory scope open (an
// evaluator relying on predict mode being the default) beside a learner
// in Record does not record and runs dropout in predict mode.
func TestTreeScopeOnlyOwnMode(t *testing.T) {
	dev := ctx.CPU(0)
	x := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	// The learner records on a goroutine of its own; the evaluator opens a
	// scope per batch and relies on predict mode being the default.
	defer otherTree(func() func() { return nd.EnterRecording(true) })()
	sc := nd.NewScope()
	defer sc.Close()
	rec, train := nd.IsRecording(), nd.IsTraining()
	y := nd.Dropout(x, 0.5).Float32s()
	if rec || train {
		t.Errorf("evaluator tree with its own scope: recording=%v training=%v (dropout output %v)", rec, train, y)
	}
}

// TestTreeLearnerBesideAutocastServer: a learner's ops outside its Record
// but inside its step's scope (Backward, a metric) keep its own state
// while a server beside it predicts under nd.Autocast(Float16): gradients
// and the metric's dtype are those of the learner alone.
func TestTreeLearnerBesideAutocastServer(t *testing.T) {
	dev := ctx.CPU(0)
	ps := nd.PersistentSession()
	w := ps.FromSlice(dev, []float32{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}, 3, 3)
	a := ps.FromSlice(dev, []float32{1.001, 2.002, 3.003, 4.004, 5.005, 6.006, 7.007, 8.008, 9.009}, 3, 3)
	w.AttachGrad(nd.GradWrite)
	step := func() ([]float32, nd.DType) {
		sc := nd.NewScope()
		defer sc.Close()
		var loss *nd.NDArray
		nd.DefaultSession().Record(func() { loss = nd.Sum(nd.MatMul(w, a)) })
		nd.Backward([]*nd.NDArray{loss}, nil, false)
		metric := nd.MatMul(a, a) // e.g. a metric between steps
		return w.Grad().Float32s(), metric.DType()
	}
	wantG, wantDT := step()
	release := otherTree(func() func() {
		cast, mode := nd.EnterAutocast(nd.Float16), nd.EnterMode(false)
		return func() { mode(); cast() }
	})
	gotG, gotDT := step()
	release()
	if gotDT != wantDT || !slices.Equal(gotG, wantG) {
		t.Errorf("learner beside a half-precision server: metric dtype %v (alone %v); grad %v (alone %v)", gotDT, wantDT, gotG, wantG)
	}
}

// TestTreeAutocastAll: amp.Init's autocast (EnterAutocastAll) applies to
// every tree of the default session, one started later by a plain go
// statement included, and to a plain worker inside that tree's Record.
func TestTreeAutocastAll(t *testing.T) {
	dev := ctx.CPU(0)
	a := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3, 4}, 2, 2)
	off := nd.DefaultSession().EnterAutocastAll(nd.Float16)
	defer off()
	var dt, workerDT nd.DType
	var workerErr error
	done := make(chan struct{})
	go func() { // the training loop's goroutine
		defer close(done)
		exit := nd.EnterRecording(true)
		defer exit()
		dt = nd.MatMul(a, a).DType()
		w := make(chan struct{})
		go func() { defer close(w); workerErr = nd.Catch(func() { workerDT = nd.MatMul(a, a).DType() }) }()
		<-w
	}()
	<-done
	if dt != nd.Float16 || workerDT != nd.Float16 || workerErr != nil {
		t.Errorf("after EnterAutocastAll: training goroutine %v, its worker %v (%v); want float16", dt, workerDT, workerErr)
	}
	exit := nd.EnterAutocast(nd.Float32) // a tree may still turn it off for itself
	defer exit()
	if got := nd.MatMul(a, a).DType(); got != nd.Float32 {
		t.Errorf("inside an Autocast(Float32) scope: %v, want float32", got)
	}
}

// otherTree runs open on a goroutine of its own (a tree of its own) and
// returns a function that calls the exit function open returned there and
// waits until that goroutine has ended.
func otherTree(open func() (exit func())) (release func()) {
	in, out, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		exit := open()
		close(in)
		<-out
		exit()
	}()
	<-in
	return func() { close(out); <-done }
}

package nd_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
	needGID(t)
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
	needGID(t)
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

// TestTreePlainGoroutine: a goroutine started with a plain go statement
// inside a Record and a scope belongs to no tree, as a new thread in
// PyTorch or MXNet starts with the default autograd state: it does not
// record, runs in predict mode, no scope tracks its arrays, and Backward
// on its result says how to start it instead. One started with nd.Go
// records and is tracked.
func TestTreePlainGoroutine(t *testing.T) {
	needGID(t)
	dev := ctx.CPU(0)
	w := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3})
	w.AttachGrad(nd.GradWrite)
	sc := nd.NewScope()
	exit := nd.EnterRecording(true)
	var plain, viaGo *nd.NDArray
	var plainRec, plainTrain, goRec bool
	var backErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		plainRec, plainTrain = nd.IsRecording(), nd.IsTraining()
		plain = nd.Sum(nd.MulScalar(w, 2))
		backErr = nd.Catch(func() { nd.Backward([]*nd.NDArray{plain}, nil, false) })
	}()
	<-done
	done = make(chan struct{})
	nd.Go(func() {
		defer close(done)
		goRec = nd.IsRecording()
		viaGo = nd.MulScalar(w, 2)
	})
	<-done
	exit()
	sc.Close()
	if plainRec || plainTrain || plain.Released() {
		t.Errorf("plain goroutine: recording %v, training %v, its array released by the scope %v; want the default state, untracked", plainRec, plainTrain, plain.Released())
	}
	var ne *nd.Error
	if !errors.As(backErr, &ne) || ne.Kind != nd.ErrGraph || !strings.Contains(backErr.Error(), "nd.Go") {
		t.Errorf("Backward on a plain goroutine's result: %v, want an ErrGraph naming nd.Go", backErr)
	}
	if !goRec || !viaGo.Released() {
		t.Errorf("nd.Go goroutine: recording %v, its array released by the scope %v", goRec, viaGo.Released())
	}
	plain.Release()
}

// TestTreeClosed: when a tree's last scope ends its owner belongs to no
// tree again (a learner between steps), while the goroutines it started
// with nd.Go stay in it as long as they run (a bucket's reduction that
// outlives the step's Record). While another tree serves under
// Autocast(Float16) with a scope per request, both work in the default
// state and the server's scope releases none of their arrays; a scope the
// worker opens reopens its tree, without the former owner.
func TestTreeClosed(t *testing.T) {
	needGID(t)
	dev := ctx.CPU(0)
	x := nd.PersistentSession().FromSlice(dev, []float32{1, 2, 3, 4}, 2, 2)
	exit := nd.EnterRecording(true) // the learner's step
	step := nd.CurrentTree()
	start, made, reopen, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	made2, end := make(chan struct{}), make(chan struct{})
	var tmp *nd.NDArray
	var tmpDT nd.DType
	var workerTree nd.Tree
	nd.Go(func() {
		defer close(done)
		<-start
		tmp = nd.MatMul(x, x)
		tmpDT = tmp.DType()
		close(made)
		<-reopen
		sc := nd.NewScope()
		workerTree = nd.CurrentTree()
		close(made2)
		<-end
		sc.Close()
	})
	exit()
	if nd.CurrentTree() != (nd.Tree{}) {
		t.Fatal("the owner still belongs to its tree after the tree's last scope ended")
	}
	release := otherTree(func() func() {
		cast, mode, sc := nd.EnterAutocast(nd.Float16), nd.EnterMode(false), nd.NewScope()
		return func() { sc.Close(); mode(); cast() }
	})
	close(start)
	<-made
	metric := nd.MatMul(x, x) // between steps
	born := nd.FromSlice(dev, []float32{9})
	nd.Relu(born)
	release() // the request ends
	if metric.DType() != nd.Float32 || tmpDT != nd.Float32 {
		t.Errorf("beside a half-precision server: learner %v, its worker %v; want float32", metric.DType(), tmpDT)
	}
	if metric.Released() || born.Released() || tmp.Released() {
		t.Errorf("the server's scope released the learner's arrays: metric %v, born %v, worker's %v", metric.Released(), born.Released(), tmp.Released())
	}
	close(reopen)
	<-made2
	if !workerTree.Same(step) || nd.CurrentTree().Same(step) {
		t.Errorf("a worker's scope reopened its tree %v; the former owner is back in it %v", workerTree.Same(step), nd.CurrentTree().Same(step))
	}
	close(end)
	<-done
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
// statement included, and to goroutines of no tree.
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

// TestTreeRunAcrossClose: the owner of a tree runs Tree.Run of another
// tree; meanwhile its own tree closes and a goroutine it started with
// nd.Go reopens it. When Run returns, the former owner belongs to no
// tree: it is not put back into the reopened one.
func TestTreeRunAcrossClose(t *testing.T) {
	needGID(t)
	var other nd.Tree
	release := otherTree(func() func() { e := nd.EnterMode(false); other = nd.CurrentTree(); return e })
	defer release()
	sc := nd.NewScope() // this goroutine owns a tree
	start, opened, closeIt, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var member nd.Tree
	nd.Go(func() {
		defer close(done)
		<-start
		s := nd.NewScope() // reopens the tree
		member = nd.CurrentTree()
		close(opened)
		<-closeIt
		s.Close()
	})
	var inside nd.Tree
	other.Run(func() {
		inside = nd.CurrentTree()
		sc.Close() // the owner's tree closes
		close(start)
		<-opened
	})
	after := nd.CurrentTree()
	close(closeIt)
	<-done
	if !inside.Same(other) {
		t.Error("Tree.Run did not run in the other tree")
	}
	if after.Same(member) || after != (nd.Tree{}) {
		t.Errorf("after Tree.Run the former owner is in a tree (the reopened one: %v)", after.Same(member))
	}
}

// needGID skips a test that needs goroutines told apart (internal/gid).
func needGID(t *testing.T) {
	t.Helper()
	if !gid.Supported {
		t.Skip("goroutines cannot be told apart on this architecture")
	}
}

// TestTreeLaterScopeKeepsOffWorkers: a scope the starter opens after a
// worker took the tree (one device's function of ForEachDevice, which runs
// on the calling goroutine, opening a scope while the other device's
// worker runs) does not track the worker's arrays, so closing it does not
// release them under the worker; the scope in place when the worker
// started does.
func TestTreeLaterScopeKeepsOffWorkers(t *testing.T) {
	needGID(t)
	dev := ctx.CPU(0)
	outer := nd.NewScope()
	defer outer.Close()
	nd.DefaultSession().Record(func() {
		tree := nd.CurrentTree()
		made := make(chan *nd.NDArray)
		opened, use := make(chan struct{}), make(chan struct{})
		done := make(chan []float32)
		go tree.Run(func() {
			<-opened
			a := nd.MulScalar(nd.Ones(dev, nd.Float32, 3), 1) // an op's result, bound to the session
			made <- a
			<-use
			done <- nd.MulScalar(a, 2).Float32s()
		})
		later := nd.NewScope() // opened after the worker took the tree
		close(opened)
		a := <-made
		later.Close()
		close(use)
		if got := <-done; !slices.Equal(got, []float32{2, 2, 2}) {
			t.Fatalf("the worker's array after the later scope closed: %v", got)
		}
		if a.Released() {
			t.Fatal("the later scope released the worker's array")
		}
		if outer.Len() == 0 {
			t.Error("the scope in place when the worker started does not track its arrays")
		}
	})
}

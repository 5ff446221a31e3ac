package nd_test

import (
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestTreeOwnerRunsOwnTree: the owner runs Tree.Run of its own tree and
// the tree's last scope ends inside: a goroutine running Tree.Run belongs
// to the tree while it runs, open or closed.
func TestTreeOwnerRunsOwnTree(t *testing.T) {
	needGID(t)
	exit := nd.EnterRecording(true)
	tr := nd.CurrentTree()
	var inside nd.Tree
	var leaked bool
	tr.Run(func() {
		exit()
		inside = nd.CurrentTree()
		sc := nd.NewScope() // should reopen tr (a member of a closed tree reopens it)
		leaked = !nd.CurrentTree().Same(tr)
		_ = sc
		defer sc.Close()
	})
	if !inside.Same(tr) {
		t.Errorf("inside its own tree's Run, after the tree closed, the goroutine is in no tree (want: the tree, open or closed)")
	}
	if leaked {
		t.Errorf("a scope opened there started a new tree instead of reopening the Run's tree")
	}
	if nd.CurrentTree() != (nd.Tree{}) {
		t.Errorf("after Run the goroutine still belongs to a tree")
	}
}

// TestTreeNestedRunClosed: nested Run of a closed tree inside another
// tree's Run restores the outer one; Run of a closed tree sees the default state.
func TestTreeNestedRunClosed(t *testing.T) {
	needGID(t)
	var closed nd.Tree
	func() {
		defer nd.EnterRecording(true)()
		closed = nd.CurrentTree()
	}()
	var rec nd.Tree
	release := otherTree(func() func() { e := nd.EnterRecording(true); rec = nd.CurrentTree(); return e })
	defer release()
	exit := nd.EnterMode(false)
	mine := nd.CurrentTree()
	rec.Run(func() {
		if !nd.IsRecording() || !nd.IsTraining() {
			t.Error("in rec's Run: not recording/training")
		}
		closed.Run(func() {
			if nd.IsRecording() || nd.IsTraining() {
				t.Error("in a closed tree's Run: not the default state")
			}
			var sawTree nd.Tree
			sc := nd.NewScope()
			sawTree = nd.CurrentTree()
			sc.Close()
			if !sawTree.Same(closed) {
				t.Error("scope in closed tree's Run did not reopen it")
			}
		})
		if !nd.CurrentTree().Same(rec) || !nd.IsRecording() {
			t.Error("nested Run did not restore rec")
		}
	})
	if !nd.CurrentTree().Same(mine) || nd.IsTraining() || nd.IsRecording() {
		t.Error("Run did not restore the owner's tree")
	}
	exit()
	if nd.CurrentTree() != (nd.Tree{}) {
		t.Error("after its last scope the owner is in a tree")
	}
}

// TestTreeRunRaceWithClose: the owner of a tree enters Tree.Run of
// another tree, again and again, while a member closes the owner's tree's
// last scope: whenever that happens, the former owner belongs to no tree
// once Run returns.
func TestTreeRunRaceWithClose(t *testing.T) {
	needGID(t)
	var other nd.Tree
	release := otherTree(func() func() { e := nd.EnterMode(false); other = nd.CurrentTree(); return e })
	defer release()
	for i := range 20000 {
		sc := nd.NewScope() // this goroutine owns a tree
		mine := nd.CurrentTree()
		opened, closeIt, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		nd.Go(func() {
			defer close(done)
			s := nd.NewScope()
			close(opened)
			<-closeIt
			s.Close() // the tree's last scope: it closes here
		})
		<-opened
		sc.Close()
		close(closeIt)
	loop:
		for {
			other.Run(func() {})
			select {
			case <-done:
				break loop
			default:
			}
		}
		other.Run(func() {})
		if got := nd.CurrentTree(); got != (nd.Tree{}) {
			t.Fatalf("iteration %d: after its tree closed, the former owner belongs to a tree (its old one: %v)", i, got.Same(mine))
		}
	}
}

// TestTreeWorkerScopes: two nd.Go workers of one tree each open a scope
// of their own; each scope tracks only its own worker's arrays, so B's
// Close does not release what A is still using.
func TestTreeWorkerScopes(t *testing.T) {
	needGID(t)
	dev := ctx.CPU(0)
	x := nd.PersistentSession().FromSlice(dev, []float32{1, 2}, 2)
	defer nd.EnterRecording(true)() // the step's tree
	aOpen, bOpen, aMade, bClosed, done := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan error)
	nd.Go(func() {
		done <- nd.Catch(func() {
			sa := nd.NewScope()
			defer sa.Close()
			close(aOpen)
			<-bOpen
			y := nd.Add(x, x)
			close(aMade)
			<-bClosed
			_ = nd.Add(y, y).Float32s()
		})
	})
	nd.Go(func() {
		<-aOpen
		sb := nd.NewScope()
		close(bOpen)
		<-aMade
		sb.Close()
		close(bClosed)
	})
	if err := <-done; err != nil {
		t.Fatalf("worker A's array was released by worker B's scope: %v", err)
	}
}

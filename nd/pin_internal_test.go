package nd

import (
	"errors"
	"testing"

	"github.com/goluon/goluon/ctx"
)

// TestPinsBalance: ops, Pack (which moves arrays to another storage while
// it has them pinned) and Release leave no pin behind, and a storage
// released while pinned is freed by its last unpin.
func TestPinsBalance(t *testing.T) {
	dev := ctx.CPU(0)
	a, b := Ones(dev, Float32, 3), Full(dev, Float32, 2, 4)
	old := a.st
	Sum(Mul(a, a)).Release()
	flat, _ := Pack([]*NDArray{a, b})
	if old.pins.Load() != freeing || !old.freed.Load() {
		t.Errorf("a's old storage: pins %d, freed %v; want %d (freed, no pin), true", old.pins.Load(), old.freed.Load(), freeing)
	}
	if n := flat.st.pins.Load(); n != 0 {
		t.Errorf("flat storage pins %d after Pack", n)
	}
	p := checkLive("test", a)
	a.Release()
	b.Release()
	flat.Release()
	if flat.st.freed.Load() {
		t.Fatal("a pinned storage was freed")
	}
	p.done()
	if !flat.st.freed.Load() || flat.st.pins.Load() != freeing {
		t.Errorf("after the last unpin: freed %v, pins %d", flat.st.freed.Load(), flat.st.pins.Load())
	}
}

// TestViewOfDeadStorage: an op that checked its input just before another
// goroutine released it (the interleaving is forced here: the storage's
// count reaches zero while the op holds its pin and the array's flag is
// not yet visible to it) cannot take a view that would bring the storage
// back: the view fails with ErrReleased, and the storage is freed at the
// op's unpin.
func TestViewOfDeadStorage(t *testing.T) {
	a := Ones(ctx.CPU(0), Float32, 4)
	p := checkLive("op", a)
	st := a.st
	st.refs.Add(-1) // Release on another goroutine, whose released flag the op read before
	st.release()
	err := Catch(func() { a.view(0, a.shape) })
	var ne *Error
	if !errors.As(err, &ne) || ne.Kind != ErrReleased {
		t.Fatalf("view of a storage whose last array was released: %v, want ErrReleased", err)
	}
	if st.refs.Load() != 0 || st.freed.Load() {
		t.Fatalf("refs %d, freed %v while pinned; want 0, false", st.refs.Load(), st.freed.Load())
	}
	p.done()
	if !st.freed.Load() {
		t.Error("the storage was not freed at the op's unpin")
	}
}

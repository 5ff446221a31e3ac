package nd

import (
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

package nd

// Pinning keeps an array's memory from being freed while an op works on
// it, whatever other goroutines do: a scope of another goroutine tree
// closing, a Release racing with a read.
//
// An op pins its inputs when it checks them (checkLive), before it reads
// their memory, and unpins them when it returns (pins.done, deferred).
// Release marks the array released first and frees the memory only when
// no op has it pinned; otherwise the last op to unpin it frees it. An op
// that pins an array and then finds it released fails with ErrReleased
// without touching the memory. So an op either fails at its start or runs
// to its end on memory nobody else has, and a kernel never reads a buffer
// that went back to the pool (before pinning, the race could hand the
// buffer to another array, or crash on a half-cleared buffer reference).
//
// The ordering argument: an op pins (pins.Add) and then reads released;
// Release sets released and then, once the storage's last array is
// released, reads pins. Go's atomics are sequentially consistent, so
// either the op sees released (and fails), or Release sees the pin (and
// leaves the free to the op's unpin). Whoever frees (Release, or the unpin
// that finds the storage dead) does so only by swapping a pin count of
// zero for a large negative one: an unpin that reached zero before another
// op pinned the storage, and read dead after Release set it, must not free
// under that op (TestReleaseWhileReading with GOMAXPROCS=4 hit exactly
// that).

// pins are the storages an op pinned (those of its arrays when it pinned
// them: Pack may move an array to another storage meanwhile); done unpins
// them. It holds up to four without allocating.
type pins struct {
	n     int
	first [4]*storage
	more  []*storage
	prof  bool // a Profile recorded the op's start (profile.go)
}

func (p *pins) add(st *storage) {
	if p.n < len(p.first) {
		p.first[p.n] = st
	} else {
		p.more = append(p.more, st)
	}
	p.n++
}

// done unpins the storages, freeing any that was released while pinned.
func (p pins) done() {
	if p.prof {
		profExit()
	}
	for i := 0; i < p.n; i++ {
		if i < len(p.first) {
			p.first[i].unpin()
		} else {
			p.more[i-len(p.first)].unpin()
		}
	}
}

// pin pins arrs and checks that none is nil or released; on failure it
// unpins what it pinned and panics.
func pin(op string, arrs []*NDArray) (p pins) {
	if len(arrs) > len(p.first) { // one allocation, not one per doubling
		p.more = make([]*storage, 0, len(arrs)-len(p.first))
	}
	for i, a := range arrs {
		if a == nil {
			p.done()
			fail(op, ErrArgument, "input %d is nil", i)
		}
		st := a.st
		st.pins.Add(1)
		p.add(st)
		if a.released.Load() {
			p.done()
			fail(op, ErrReleased, "input %d (shape %v on %v) was released", i, a.shape, st.dev)
		}
	}
	p.prof = profEnter(op, arrs)
	return p
}

// checkMemory pins the memory of a, an op's output that its backward pass
// reads, and fails with ErrReleased only when that memory is gone: the
// user may release the output itself while a view of it keeps the memory,
// as NDArray.Release allows (pin, for inputs, fails on the array).
func checkMemory(op string, a *NDArray) (p pins) {
	a.st.pins.Add(1)
	p.add(a.st)
	if a.st.dead.Load() {
		p.done()
		fail(op, ErrReleased, "an output (shape %v on %v) was released, with every view of it, before the backward pass that reads it", a.shape, a.st.dev)
	}
	return p
}

func (st *storage) unpin() {
	if st.pins.Add(-1) == 0 && st.dead.Load() {
		st.freeUnpinned()
	}
}

// release frees the storage, whose last array was released, now or at
// its last unpin.
func (st *storage) release() {
	st.dead.Store(true)
	if st.pins.Load() == 0 {
		st.freeUnpinned()
	}
}

// freeing is what pins holds once the storage is being freed: far below
// zero, so that an op pinning it afterwards (which then finds its array
// released and unpins) never brings the count back to zero.
const freeing = -1 << 30

// freeUnpinned frees the storage if no op has it pinned at this instant.
// An unpin that brought the count to zero may read dead only after another
// op pinned the storage again (that op's array was still live then, and
// released since): the count, not the earlier decrement, decides.
func (st *storage) freeUnpinned() {
	if st.pins.CompareAndSwap(0, freeing) {
		st.free()
	}
}

// free gives the buffer back to its pool, once.
func (st *storage) free() {
	if !st.freed.CompareAndSwap(false, true) {
		return
	}
	if st.owner == nil {
		st.be.Free(st.dev, st.buf)
	}
	st.buf = nil
}

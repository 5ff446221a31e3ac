//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/goluon/goluon/nd/backend"
)

// Write copies host data ([]float32, []float64, []int32, []int64, []uint8
// or []bool) into dst at element off, converting it on the host to dst's
// dtype as Cast converts. It returns once the host slice may be reused:
// the copy is queued on the device's stream behind earlier work (a copy
// from pageable memory is staged by the driver before the call returns).
func (b *Backend) Write(dst backend.Buffer, off int, src any) {
	db := dst.(*Buffer)
	d := db.dev
	hdt, n, ok := backend.HostDType(src)
	if !ok {
		panic(fmt.Sprintf("cuda: Write: unsupported host type %T", src))
	}
	if n == 0 {
		return
	}
	if off < 0 || off+n > db.n {
		panic(fmt.Sprintf("cuda: Write: %d elements at offset %d into a buffer of %d", n, off, db.n))
	}
	if !rawCompatible(hdt, db.dt) {
		conv := storageSlice(db.dt, n)
		backend.ConvertHost(conv, db.dt == backend.Bool, src)
		src = conv
	}
	host := hostPtr(src)
	size := int64(db.dt.Size())
	dptr := db.ptr + dptr(int64(off)*size)
	bytes := int64(n) * size
	err := d.call("Write", func() error {
		if bytes >= pinnedMin {
			err := d.stage.write(dptr, host, bytes, d.stream)
			runtime.KeepAlive(src)
			return err
		}
		err := drvHtoD(dptr, host, bytes, d.stream)
		runtime.KeepAlive(src)
		return err
	})
	if err != nil {
		deviceFail("Write", d.dev, err)
	}
}

// pinnedMin is the size in bytes from which Write stages through
// page-locked memory (GOLUON_CUDA_PINNED_MIN; default 64 KiB): a copy from
// pageable memory is staged by the driver before the call returns, and
// was slow on an H100 virtual machine (1.5 MB in about 1 ms, measured
// when Write was given freshly allocated host slices).
var pinnedMin = int64(envInt("GOLUON_CUDA_PINNED_MIN", 64<<10))

// staging is a device's two page-locked buffers for host-to-device copies,
// used in turn, each with the event recorded after its last copy. Only the
// device's worker touches it.
type staging struct {
	buf  [2]unsafe.Pointer
	size [2]int64
	ev   [2]event
	next int
}

// write copies n bytes from host into the next staging buffer, once the
// GPU has finished reading it for the copy before, and queues the copy to
// dst from there: the host memory may be reused as soon as it returns, and
// the GPU copies at full speed while the host goes on.
func (st *staging) write(dst dptr, host unsafe.Pointer, n int64, s stream) error {
	i := st.next
	st.next ^= 1
	if st.ev[i] != nil {
		if err := eventSync(st.ev[i]); err != nil {
			return err
		}
	} else {
		ev, err := newEvent()
		if err != nil {
			return err
		}
		st.ev[i] = ev
	}
	if st.size[i] < n {
		if st.buf[i] != nil {
			if err := drvHostFree(st.buf[i]); err != nil {
				return err
			}
			st.buf[i], st.size[i] = nil, 0
		}
		size := max(int64(64<<10), pinnedMin)
		for size < n {
			size *= 2
		}
		p, err := drvHostAlloc(size)
		if err != nil {
			return fmt.Errorf("allocating %d bytes of page-locked memory: %w", size, err)
		}
		st.buf[i], st.size[i] = p, size
	}
	// Copy and queue in pieces, so that the GPU reads one piece while the
	// host copies the next; large pieces are copied by several goroutines
	// (one thread's memcpy runs at a fraction of the host's bandwidth).
	for at := int64(0); at < n; {
		m := min(stageChunk, n-at)
		if n-at >= stageGroup && stageCopiers > 1 {
			m = stageGroup
		}
		p := unsafe.Add(st.buf[i], at)
		copyBytes(p, unsafe.Add(host, at), m)
		if err := drvHtoD(dst+dptr(at), p, m, s); err != nil {
			return err
		}
		at += m
	}
	return eventRecord(st.ev[i], s)
}

const (
	// stageChunk is the piece of a staged write that the host copies
	// before the GPU's copy of it is queued.
	stageChunk = 128 << 10
	// stageGroup is the piece copied by stageCopiers goroutines together,
	// for the part of a write that holds a whole one.
	stageGroup = 4 << 20
)

// stageCopiers is how many goroutines copy a stageGroup into page-locked
// memory (GOLUON_CUDA_STAGE_COPIERS; default the number of CPUs Go uses,
// at most 8).
var stageCopiers = envInt("GOLUON_CUDA_STAGE_COPIERS", min(runtime.GOMAXPROCS(0), 8))

// copyBytes copies m bytes from src to dst, split over stageCopiers
// goroutines when m is a stageGroup or more.
func copyBytes(dst, src unsafe.Pointer, m int64) {
	k := int64(stageCopiers)
	if m < stageGroup || k <= 1 {
		copy(unsafe.Slice((*byte)(dst), m), unsafe.Slice((*byte)(src), m))
		return
	}
	var wg sync.WaitGroup
	for j := range k {
		lo, hi := m*j/k, m*(j+1)/k
		wg.Go(func() {
			copy(unsafe.Slice((*byte)(unsafe.Add(dst, lo)), hi-lo), unsafe.Slice((*byte)(unsafe.Add(src, lo)), hi-lo))
		})
	}
	wg.Wait()
}

// Read copies len(dst) elements starting at off into the host slice dst
// (any type Write accepts), after the work queued on the buffer's device
// has finished, converting on the host as Cast converts.
func (b *Backend) Read(src backend.Buffer, off int, dst any) {
	sb := src.(*Buffer)
	d := sb.dev
	hdt, n, ok := backend.HostDType(dst)
	if !ok {
		panic(fmt.Sprintf("cuda: Read: unsupported host type %T", dst))
	}
	if n == 0 {
		return
	}
	if off < 0 || off+n > sb.n {
		panic(fmt.Sprintf("cuda: Read: %d elements at offset %d from a buffer of %d", n, off, sb.n))
	}
	tmp := dst
	raw := rawCompatible(sb.dt, hdt)
	if !raw {
		tmp = storageSlice(sb.dt, n)
	}
	host := hostPtr(tmp)
	size := int64(sb.dt.Size())
	sptr := sb.ptr + dptr(int64(off)*size)
	d.syncs.Add(1)
	err := d.call("Read", func() error {
		if err := drvDtoH(host, sptr, int64(n)*size, d.stream); err != nil {
			return err
		}
		err := streamSync(d.stream)
		runtime.KeepAlive(tmp)
		return err
	})
	if err != nil {
		deviceFail("Read", d.dev, err)
	}
	if !raw {
		backend.ConvertHost(dst, hdt == backend.Bool, tmp)
	}
}

// Copy copies a strided view of src into a strided view of dst. Within a
// device the copy is queued on its stream (a plain device-to-device copy
// when both views are contiguous, a kernel otherwise). Between devices it
// is queued on dst's device, ordered after src's queued work by events
// (crossDevice); neither the host nor either GPU waits for more.
func (b *Backend) Copy(shape []int, dst, src backend.Arg) {
	n := prod(shape)
	if n == 0 {
		return
	}
	ds, ss := dst.Strides, src.Strides
	if ds == nil {
		ds = backend.ContiguousStrides(shape)
	}
	if ss == nil {
		ss = backend.ContiguousStrides(shape)
	}
	dd, sd := devOf(dst), devOf(src)
	if dd == sd {
		dd.copyLocal(shape, dst, src, ds, ss)
		return
	}
	b.crossDevice("Copy", dd, sd, src, extent(shape, ss), func(src backend.Arg) {
		dd.copyLocal(shape, dst, src, ds, ss)
	})
}

// copyLocal queues a strided copy between operands the device can address.
func (d *device) copyLocal(shape []int, dst, src backend.Arg, ds, ss []int) {
	sh, st := backend.Coalesce(shape, ds, ss)
	dt := buf(dst).dt
	if len(sh) == 1 && st[0][0] == 1 && st[1][0] == 1 {
		dp, sp, bytes := devPtr(dst), devPtr(src), int64(sh[0]*dt.Size())
		d.async("Copy", func() error { return drvDtoD(dp, sp, bytes, d.stream) })
		return
	}
	forSlices(sh, st, func(offs, sh []int, st [][]int) {
		dd, sa := dst, src
		dd.Off += offs[0]
		sa.Off += offs[1]
		n := prod(sh)
		var a args
		a.ptr(dd)
		a.ptr(sa)
		a.i64(n)
		p := newDims(sh, st[0], st[1])
		p.add(&a)
		name := "copy_strided" + suffix(dt)
		if dt.IsHalf() { // a copy moves bits: one kernel for both
			name = "copy_strided_u16"
		}
		d.launch("Copy", name, n, 0, 0, 0, &a)
	})
}

// Cast converts n contiguous elements of src into dst: a copy when their
// storage agrees (the same dtype, or Bool into Uint8), else cast_S_D, or
// truth_S into a Bool dst.
func (b *Backend) Cast(dst, src backend.Arg, n int) {
	if n == 0 {
		return
	}
	ddt, sdt := buf(dst).dt, buf(src).dt
	if rawCompatible(sdt, ddt) {
		b.Copy([]int{n}, dst, src)
		return
	}
	name := "cast" + suffix(sdt) + suffix(ddt)
	if ddt == backend.Bool {
		name = "truth" + suffix(sdt)
	}
	dd, sd := devOf(dst), devOf(src)
	run := func(src backend.Arg) {
		var a args
		a.ptr(dst)
		a.ptr(src)
		a.i64(n)
		dd.launch("Cast", name, n, 0, 0, 0, &a)
	}
	if dd == sd {
		run(src)
		return
	}
	b.crossDevice("Cast", dd, sd, src, n, run)
}

// crossDevice runs fn on dd with src readable there, without the host
// waiting for either GPU: dd's stream first waits (on an event) for the
// work queued so far on sd's, so that src holds its final values, and after
// fn sd's stream waits for dd's, so that later work on sd (a new array in
// src's block, once src is freed) cannot overwrite src before fn has read
// it. Virtual GPUs of one physical device share its context and address
// space, so fn reads src in place. Between physical devices the span of src
// is first copied to a temporary block on dd with cuMemcpyPeerAsync (which
// needs no peer access: the driver stages it).
func (b *Backend) crossDevice(op string, dd, sd *device, src backend.Arg, span int, fn func(src backend.Arg)) {
	handoff(op, sd, dd)
	if dd.phys == sd.phys {
		fn(src)
	} else {
		dt := buf(src).dt
		tb, err := b.Alloc(dd.dev, dt, span)
		if err != nil {
			deviceFail(op, dd.dev, err)
		}
		tmp := tb.(*Buffer)
		dp, sp, bytes := tmp.ptr, devPtr(src), int64(span*dt.Size())
		dd.async(op, func() error { return drvPeer(dp, dd.phys, sp, sd.phys, bytes, dd.stream) })
		staged := src
		staged.Buf, staged.Off = tmp, 0
		fn(staged)
		b.Free(dd.dev, tmp)
	}
	handoff(op, dd, sd)
}

// handoff makes the work queued on to's stream from now on wait for the
// work queued so far on from's stream: an event recorded on from's stream
// in a round trip to from's worker (the host waits until the worker has
// issued what was queued before, not for the GPU) and waited for by to's
// stream. The event goes back to from's physical device's free list once
// the wait is queued.
//
// Two ways that avoid the round trip were measured slower or unsafe on an
// H200 (cuda/results/run16, run17): queueing the record and letting to's
// worker wait for it made LeNet on 4 virtual GPUs 25-30% slower, and
// stream memory operations (a counter word written by one stream, waited
// for by the other) hung a training run, as CUDA warns they may when the
// order they create is invisible to its scheduler.
func handoff(op string, from, to *device) {
	forbid(op, from, to)
	var ev event
	err := from.call(op, func() error {
		var err error
		ev, err = from.phys.takeEvent()
		if err != nil {
			return err
		}
		return eventRecord(ev, from.stream)
	})
	if err != nil {
		deviceFail(op, from.dev, err)
	}
	to.async(op, func() error {
		err := streamWaitEvent(to.stream, ev)
		from.phys.putEvent(ev)
		return err
	})
}

// takeEvent returns an event from p's free list, or a new one.
func (p *physical) takeEvent() (event, error) {
	p.evMu.Lock()
	if n := len(p.events); n > 0 {
		ev := p.events[n-1]
		p.events = p.events[:n-1]
		p.evMu.Unlock()
		return ev, nil
	}
	p.evMu.Unlock()
	return newEvent()
}

// putEvent returns ev to p's free list.
func (p *physical) putEvent(ev event) {
	p.evMu.Lock()
	p.events = append(p.events, ev)
	p.evMu.Unlock()
}

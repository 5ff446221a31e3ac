//go:build cuda || cudaemu

package cuda

// gpuTiming is GOLUON_CUDA_PROFILE=gpu: the worker records a timing event
// on its stream before and after every task instead of synchronising after
// it. A task's row then holds the time from the stream reaching its start
// to the stream finishing its work: the kernels or copies it queued, and
// also whatever the worker did on the host meanwhile (a staged Write's
// copy into page-locked memory, a launch onto an idle stream) and any wait
// for another stream. The row "(GPU idle between tasks)" holds the time
// the stream sat empty between tasks, waiting for the host. The tasks are
// not synchronised one by one as with GOLUON_CUDA_PROFILE=1, but the
// events are not free: recording them slowed LeNet's training step 2 to 3
// times on an H200, and the worker waits for its stream every timelineCap
// tasks to read them. Use it to see where the time goes, not to time.
var gpuTiming = profileMode == "gpu"

// idleOp names the profile row of the GPU's idle time between tasks.
const idleOp = "(GPU idle between tasks)"

// profileOp names the worker's harvesting task, which is not timed itself.
const profileOp = "profile"

// timelineCap is how many spans a worker keeps before it harvests them.
const timelineCap = 2048

// span is one task's start and end events.
type span struct {
	op         string
	start, end event
}

// timeline is a worker's recorded spans (only the worker touches it).
type timeline struct {
	spans   []span
	free    []event
	prevEnd event // the end of the last harvested span (for the next gap)
}

// get returns a free timing event, or a new one.
func (t *timeline) get() (event, error) {
	if n := len(t.free); n > 0 {
		e := t.free[n-1]
		t.free = t.free[:n-1]
		return e, nil
	}
	return newTimingEvent()
}

// begin records the start of a task on s and reports whether it did; a
// task whose start could not be recorded goes untimed (profiling never
// fails a task).
func (t *timeline) begin(s stream) bool {
	e, err := t.get()
	if err != nil {
		return false
	}
	if eventRecord(e, s) != nil {
		t.free = append(t.free, e)
		return false
	}
	t.spans = append(t.spans, span{start: e})
	return true
}

// end records the end of the task begun last (dropping its span if that
// fails) and harvests when the spans are full.
func (t *timeline) end(op string, s stream) {
	sp := &t.spans[len(t.spans)-1]
	e, err := t.get()
	if err == nil {
		if err = eventRecord(e, s); err != nil {
			t.free = append(t.free, e)
		}
	}
	if err != nil {
		t.free = append(t.free, sp.start)
		t.spans = t.spans[:len(t.spans)-1]
		return
	}
	sp.op, sp.end = op, e
	if len(t.spans) >= timelineCap {
		t.harvest()
	}
}

// harvest waits for the recorded events and adds each span's GPU time,
// and the gaps between spans, to the profile. A span whose times cannot be
// read is left out (and the gap before the next one); its events are
// reused all the same.
func (t *timeline) harvest() {
	if len(t.spans) == 0 {
		return
	}
	synced := eventSync(t.spans[len(t.spans)-1].end) == nil
	for _, sp := range t.spans {
		if synced {
			if t.prevEnd != nil {
				if gap, err := eventElapsed(t.prevEnd, sp.start); err == nil {
					profRecord(idleOp, gap)
				}
			}
			if busy, err := eventElapsed(sp.start, sp.end); err == nil {
				profRecord(sp.op, busy)
			}
		}
		t.dropPrev()
		t.free = append(t.free, sp.start)
		t.prevEnd = sp.end
	}
	t.spans = t.spans[:0]
	if !synced {
		t.dropPrev()
	}
}

// dropPrev forgets the last harvested span's end, so that the next gap is
// not measured from it.
func (t *timeline) dropPrev() {
	if t.prevEnd != nil {
		t.free = append(t.free, t.prevEnd)
		t.prevEnd = nil
	}
}

// harvestTimelines brings every started device's spans into the profile,
// waiting for each device's queued work. With reset, the next gap on each
// device is not measured from before this call.
func harvestTimelines(reset bool) {
	if !gpuTiming {
		return
	}
	b := defaultBackend
	b.mu.Lock()
	devs := append([]*device(nil), b.devs...)
	b.mu.Unlock()
	for _, d := range devs {
		if d != nil {
			_ = d.call(profileOp, func() error {
				d.tl.harvest()
				if reset {
					d.tl.dropPrev()
				}
				return nil
			})
		}
	}
}

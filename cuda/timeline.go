//go:build cuda || cudaemu

package cuda

import "fmt"

// gpuTiming is GOLUON_CUDA_PROFILE=gpu: the worker brackets every task with
// two timing events on its stream instead of synchronising after it, so
// that the profile holds each operation's time on the GPU (launch overhead
// excluded) and, as "(GPU idle)", the time the stream sat empty between
// tasks, waiting for the host. Unlike GOLUON_CUDA_PROFILE=1 the work stays
// asynchronous, so a step's wall time minus its GPU busy time is the host's
// share.
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

func (t *timeline) get() (event, error) {
	if n := len(t.free); n > 0 {
		e := t.free[n-1]
		t.free = t.free[:n-1]
		return e, nil
	}
	return newTimingEvent()
}

// begin records the start of a task on s. On failure the task goes
// untimed.
func (t *timeline) begin(s stream) error {
	e, err := t.get()
	if err != nil {
		return err
	}
	if err := eventRecord(e, s); err != nil {
		return err
	}
	t.spans = append(t.spans, span{start: e})
	return nil
}

// end records the end of the task begun last, and harvests when full.
func (t *timeline) end(op string, s stream) error {
	e, err := t.get()
	if err != nil {
		return err
	}
	if err := eventRecord(e, s); err != nil {
		return err
	}
	sp := &t.spans[len(t.spans)-1]
	sp.op, sp.end = op, e
	if len(t.spans) >= timelineCap {
		return t.harvest()
	}
	return nil
}

// harvest waits for the recorded events and adds each span's GPU time,
// and the gaps between spans, to the profile.
func (t *timeline) harvest() error {
	if len(t.spans) == 0 {
		return nil
	}
	if err := eventSync(t.spans[len(t.spans)-1].end); err != nil {
		return err
	}
	for _, sp := range t.spans {
		if t.prevEnd != nil {
			gap, err := eventElapsed(t.prevEnd, sp.start)
			if err != nil {
				return fmt.Errorf("profile: %w", err)
			}
			profRecord(idleOp, gap)
			t.free = append(t.free, t.prevEnd)
		}
		busy, err := eventElapsed(sp.start, sp.end)
		if err != nil {
			return fmt.Errorf("profile: %w", err)
		}
		profRecord(sp.op, busy)
		t.free = append(t.free, sp.start)
		t.prevEnd = sp.end
	}
	t.spans = t.spans[:0]
	return nil
}

// harvestTimelines brings every started device's spans into the profile.
func harvestTimelines() {
	if !gpuTiming {
		return
	}
	b := defaultBackend
	b.mu.Lock()
	devs := append([]*device(nil), b.devs...)
	b.mu.Unlock()
	for _, d := range devs {
		if d != nil {
			_ = d.call(profileOp, d.tl.harvest)
		}
	}
}

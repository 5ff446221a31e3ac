package nd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/goluon/goluon/internal/gid"
)

// A Profile records the time nd's ops take while it runs, as MXNet's
// profiler and torch.profiler do: for every op (and every backward
// function, named "<op> backward") its number of calls, its total time
// and its self time (the total less the time of the ops it called: a
// composite op's pieces are counted apart), grouped by op name (and by
// input shapes with ProfileOpts.Shapes). With ProfileOpts.Trace it also
// keeps each call as an event for chrome://tracing or Perfetto.
//
//	p, _ := nd.StartProfile(nd.ProfileOpts{})
//	train(100)            // any goroutines
//	p.Stop()
//	p.WriteTable(os.Stdout, 20)
//
// Times are host wall-clock times between an op's start and its return:
// on a GPU, whose kernels run asynchronously, that is the time to launch
// them (and any wait the op makes), not the kernels'. A hybridized block's
// replays run no ops and appear as the calls that run them. One profile
// runs at a time; while none does, an op pays one atomic load.
type Profile struct {
	opts  ProfileOpts
	start time.Time

	mu      sync.Mutex
	stacks  map[uintptr][]profFrame // per goroutine, the calls in progress
	tids    map[uintptr]int         // per goroutine, its trace thread id
	stats   map[profKey]*OpStat
	events  []profEvent
	dropped int64
	stopped bool
}

// ProfileOpts configures StartProfile.
type ProfileOpts struct {
	// Shapes groups the calls of an op by the shapes of its inputs too.
	Shapes bool
	// Trace keeps every call as an event, for WriteChromeTrace.
	Trace bool
	// MaxEvents bounds the events Trace keeps (0: one million); later
	// calls are counted in the statistics only.
	MaxEvents int
}

// OpStat is what a Profile recorded of one op (and input shapes).
type OpStat struct {
	Op     string
	Shapes string // the inputs' shapes, with ProfileOpts.Shapes
	Calls  int64
	Total  time.Duration // from each call's start to its return
	Self   time.Duration // Total less the time of the ops it called
}

type profKey struct{ op, shapes string }

type profFrame struct {
	key   profKey
	start time.Time
	child time.Duration
	// inner marks a check of the same op inside its own call or backward
	// function (an op's public function and its kernels both pin the
	// inputs): not a call of its own.
	inner bool
}

type profEvent struct {
	name       string
	start, dur time.Duration
	tid        int
}

// profiling is the running profile, nil when none runs.
var profiling atomic.Pointer[Profile]

// StartProfile starts recording; it fails when a profile is running.
func StartProfile(o ProfileOpts) (*Profile, error) {
	if o.MaxEvents == 0 {
		o.MaxEvents = 1 << 20
	}
	if o.MaxEvents < 0 {
		return nil, fmt.Errorf("nd: StartProfile: MaxEvents %d must be >= 0", o.MaxEvents)
	}
	p := &Profile{opts: o, start: time.Now(), stacks: map[uintptr][]profFrame{}, tids: map[uintptr]int{}, stats: map[profKey]*OpStat{}}
	if !profiling.CompareAndSwap(nil, p) {
		return nil, fmt.Errorf("nd: StartProfile: a profile is already running")
	}
	return p, nil
}

// Stop ends the recording; calls in progress are not counted. Stopping
// twice is harmless.
func (p *Profile) Stop() {
	profiling.CompareAndSwap(p, nil)
	p.mu.Lock()
	p.stopped = true
	p.stacks = nil
	p.mu.Unlock()
}

// profEnter records the start of a call of op on arrs; it returns
// whether it did (the caller must then call profExit). A call of the op
// whose call or backward function is the innermost in progress is a part
// of it (an op's public function and its kernels pin their inputs under
// one name), unless it is a backward function itself (own says so): a
// nested checkpoint's backward function is a call of its own.
func profEnter(op string, arrs []*NDArray) bool { return profEnterOwn(op, arrs, false) }

func profEnterOwn(op string, arrs []*NDArray, own bool) bool {
	p := profiling.Load()
	if p == nil {
		return false
	}
	k := profKey{op: op}
	if p.opts.Shapes {
		var b strings.Builder
		for i, a := range arrs {
			if i > 0 {
				b.WriteString(", ")
			}
			if a != nil {
				fmt.Fprint(&b, a.shape)
			}
		}
		k.shapes = b.String()
	}
	g := gid.Current()
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	st := p.stacks[g]
	// An op's kernels inside its own call, or inside its own backward
	// function (which names them after the op), are parts of that call.
	inner := !own && len(st) > 0 && (st[len(st)-1].key.op == op || st[len(st)-1].key.op == op+" backward")
	p.stacks[g] = append(st, profFrame{key: k, start: now, inner: inner})
	return true
}

// profExit records the return of the innermost call profEnter started on
// this goroutine.
func profExit() {
	p := profiling.Load()
	if p == nil {
		return
	}
	now := time.Now()
	g := gid.Current()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.stacks[g]
	if p.stopped || len(st) == 0 {
		return
	}
	f := st[len(st)-1]
	st = st[:len(st)-1]
	if len(st) == 0 {
		delete(p.stacks, g)
	} else {
		p.stacks[g] = st
	}
	if f.inner {
		// A part of the enclosing call: the time of the calls it made is
		// its parent's children's.
		if len(st) > 0 {
			st[len(st)-1].child += f.child
		}
		return
	}
	d := now.Sub(f.start)
	if len(st) > 0 {
		st[len(st)-1].child += d
	}
	s := p.stats[f.key]
	if s == nil {
		s = &OpStat{Op: f.key.op, Shapes: f.key.shapes}
		p.stats[f.key] = s
	}
	s.Calls++
	s.Total += d
	s.Self += d - f.child
	if p.opts.Trace {
		if len(p.events) >= p.opts.MaxEvents {
			p.dropped++
			return
		}
		tid, ok := p.tids[g]
		if !ok {
			tid = len(p.tids) + 1
			p.tids[g] = tid
		}
		name := f.key.op
		if f.key.shapes != "" {
			name += " " + f.key.shapes
		}
		p.events = append(p.events, profEvent{name: name, start: f.start.Sub(p.start), dur: d, tid: tid})
	}
}

// Stats returns what was recorded, the largest self time first.
func (p *Profile) Stats() []OpStat {
	p.mu.Lock()
	out := make([]OpStat, 0, len(p.stats))
	for _, s := range p.stats {
		out = append(out, *s)
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b OpStat) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		if c := strings.Compare(a.Op, b.Op); c != 0 {
			return c
		}
		return strings.Compare(a.Shapes, b.Shapes)
	})
	return out
}

// WriteTable writes the top entries of Stats (all for top <= 0) as a
// table: calls, self and total time, their means, and each self time's
// share of all.
func (p *Profile) WriteTable(w io.Writer, top int) error {
	stats := p.Stats()
	var all time.Duration
	for _, s := range stats {
		all += s.Self
	}
	if top > 0 && len(stats) > top {
		stats = stats[:top]
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tshapes\tcalls\tself\tself %\tself/call\ttotal\ttotal/call\t")
	for _, s := range stats {
		share := 0.0
		if all > 0 {
			share = 100 * float64(s.Self) / float64(all)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%.1f\t%v\t%v\t%v\t\n", s.Op, s.Shapes, s.Calls, s.Self.Round(time.Microsecond), share,
			(s.Self / time.Duration(s.Calls)).Round(100*time.Nanosecond), s.Total.Round(time.Microsecond),
			(s.Total / time.Duration(s.Calls)).Round(100*time.Nanosecond))
	}
	return tw.Flush()
}

// WriteChromeTrace writes the events ProfileOpts.Trace kept in the Trace
// Event Format that chrome://tracing and Perfetto read: one complete
// event per call, one thread per goroutine.
func (p *Profile) WriteChromeTrace(w io.Writer) error {
	type event struct {
		Name string  `json:"name"`
		Ph   string  `json:"ph"`
		Ts   float64 `json:"ts"`
		Dur  float64 `json:"dur"`
		Pid  int     `json:"pid"`
		Tid  int     `json:"tid"`
	}
	p.mu.Lock()
	evs := make([]event, len(p.events))
	for i, e := range p.events {
		evs[i] = event{Name: e.name, Ph: "X", Ts: float64(e.start.Nanoseconds()) / 1e3, Dur: float64(e.dur.Nanoseconds()) / 1e3, Pid: 1, Tid: e.tid}
	}
	dropped := p.dropped
	p.mu.Unlock()
	return json.NewEncoder(w).Encode(map[string]any{"traceEvents": evs, "displayTimeUnit": "ns", "otherData": map[string]any{"dropped_events": dropped}})
}

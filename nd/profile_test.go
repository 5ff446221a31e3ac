package nd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestProfile records a small training computation on two goroutines and
// checks the statistics, the self/total split, the table and the trace.
func TestProfile(t *testing.T) {
	p, err := nd.StartProfile(nd.ProfileOpts{Shapes: true, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nd.StartProfile(nd.ProfileOpts{}); err == nil {
		t.Error("a second profile started")
	}
	began := time.Now()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		nd.Go(func() {
			defer wg.Done()
			dev := ctx.CPU(i)
			w := nd.RandomNormal(dev, nd.Float32, 0, 1, 8, 4)
			w.AttachGrad(nd.GradWrite)
			x := nd.RandomNormal(dev, nd.Float32, 0, 1, 16, 8)
			for range 3 {
				var l *nd.NDArray
				autograd.Record(func() { l = nd.Sum(nd.LogSoftmax(nd.Dot(x, w, false, false), -1)) })
				autograd.Backward(l)
			}
		})
	}
	wg.Wait()
	wall := time.Since(began)
	p.Stop()
	p.Stop()
	stats := p.Stats()
	var self time.Duration
	found := map[string]int64{}
	for i, s := range stats {
		if s.Self > s.Total || s.Calls <= 0 || s.Total <= 0 {
			t.Errorf("%+v", s)
		}
		if i > 0 && s.Self > stats[i-1].Self {
			t.Errorf("not sorted by self time: %v after %v", s.Self, stats[i-1].Self)
		}
		self += s.Self
		found[s.Op] += s.Calls
	}
	if self > 2*wall { // two goroutines at most
		t.Errorf("self times sum to %v in %v of wall time", self, wall)
	}
	// Six calls of each op and of its backward function (whose kernels,
	// named after the op, are part of it).
	for op, want := range map[string]int64{"Dot": 6, "LogSoftmax": 6, "Sum": 6, "Dot backward": 6, "LogSoftmax backward": 6, "Sum backward": 6} {
		if found[op] != want {
			t.Errorf("%s: %d calls, want %d (stats %v)", op, found[op], want, found)
		}
	}
	dotShapes := map[string]int64{}
	for _, s := range stats {
		if s.Op == "Dot" {
			dotShapes[s.Shapes] += s.Calls
		}
	}
	if dotShapes["[16 8], [8 4]"] != 6 {
		t.Errorf("Dot's shapes %v", dotShapes)
	}
	var tab bytes.Buffer
	if err := p.WriteTable(&tab, 5); err != nil || strings.Count(tab.String(), "\n") != 6 || !strings.Contains(tab.String(), "self/call") {
		t.Errorf("table (%v):\n%s", err, tab.String())
	}
	var tr bytes.Buffer
	if err := p.WriteChromeTrace(&tr); err != nil {
		t.Fatal(err)
	}
	var trace struct {
		TraceEvents []struct {
			Name     string
			Ph       string
			Ts, Dur  float64
			Pid, Tid int
		}
	}
	if err := json.Unmarshal(tr.Bytes(), &trace); err != nil {
		t.Fatal(err)
	}
	tids := map[int]bool{}
	var calls int64
	for _, s := range stats {
		calls += s.Calls
	}
	for _, e := range trace.TraceEvents {
		if e.Ph != "X" || e.Dur < 0 || e.Ts < 0 {
			t.Fatalf("event %+v", e)
		}
		tids[e.Tid] = true
	}
	if int64(len(trace.TraceEvents)) != calls || len(tids) < 2 {
		t.Errorf("%d events on %d threads for %d calls", len(trace.TraceEvents), len(tids), calls)
	}
	// After Stop nothing is recorded, and a new profile may start.
	nd.Exp(nd.Ones(ctx.CPU(0), nd.Float32, 2))
	if len(p.Stats()) != len(stats) {
		t.Error("recorded after Stop")
	}
	q, err := nd.StartProfile(nd.ProfileOpts{Trace: true, MaxEvents: 1})
	if err != nil {
		t.Fatal(err)
	}
	nd.Exp(nd.Ones(ctx.CPU(0), nd.Float32, 2))
	nd.Exp(nd.Ones(ctx.CPU(0), nd.Float32, 2))
	q.Stop()
	var small bytes.Buffer
	_ = q.WriteChromeTrace(&small)
	if !strings.Contains(small.String(), `"dropped_events":`) || strings.Count(small.String(), `"ph":"X"`) != 1 {
		t.Errorf("MaxEvents 1: %s", small.String())
	}
	if _, err := nd.StartProfile(nd.ProfileOpts{MaxEvents: -1}); err == nil {
		t.Error("negative MaxEvents accepted")
	}
}

// BenchmarkOpProfiling measures an op's cost without a profile (the
// default: one atomic load) and with one.
func BenchmarkOpProfiling(b *testing.B) {
	x := nd.Ones(ctx.CPU(0), nd.Float32, 4)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			if on {
				p, _ := nd.StartProfile(nd.ProfileOpts{})
				defer p.Stop()
			}
			for b.Loop() {
				nd.Exp(x).Release()
			}
		})
	}
}

// ExampleStartProfile profiles a few ops and prints the table of the
// slowest (its times vary from run to run, so no output is checked).
func ExampleStartProfile() {
	p, err := nd.StartProfile(nd.ProfileOpts{})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := nd.RandomNormal(ctx.CPU(0), nd.Float32, 0, 1, 64, 64)
	for range 10 {
		nd.Dot(x, x, false, true).Release()
	}
	p.Stop()
	_ = p.WriteTable(os.Stdout, 5)
}

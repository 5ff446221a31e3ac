package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRun measures briefly and checks the report: a line per loop and
// thread count and a JSON line with positive rates.
func TestRun(t *testing.T) {
	if len(kernels()) == 0 {
		t.Skip("no FMA loop for this CPU")
	}
	var buf bytes.Buffer
	if err := run([]string{"-seconds", "0.02", "-reps", "1"}, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var out struct{ Results []result }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("last line: %v\n%s", err, buf.String())
	}
	if len(out.Results) == 0 {
		t.Fatalf("no results:\n%s", buf.String())
	}
	for _, r := range out.Results {
		if !(r.GFLOPS > 0) || r.Threads < 1 {
			t.Errorf("result %+v", r)
		}
	}
	if err := run([]string{"-seconds", "0"}, &buf); err == nil {
		t.Error("-seconds 0 gave no error")
	}
}

// TestHandoff checks the round trip: positive with two procs on two CPUs,
// 0 with one proc, and -handoff's JSON line.
func TestHandoff(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	// A partner that gets no core within a second (a loaded machine, such
	// as other test binaries running at once) gives 0, "not measured":
	// that is the program's answer then, not a failure.
	measured := true
	switch d := handoff(200, 3); {
	case d == 0:
		measured = false
	case d < 0 || d > 100*time.Microsecond:
		t.Errorf("round trip %v", d)
	}
	var buf bytes.Buffer
	if err := run([]string{"-handoff"}, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var out struct {
		Handoff *int64 `json:"handoff_ns"`
		Results []result
	}
	err := json.Unmarshal([]byte(lines[len(lines)-1]), &out)
	switch {
	case err != nil || out.Handoff == nil || *out.Handoff < 0 || out.Results != nil:
		t.Errorf("-handoff printed %q (%v)", buf.String(), err)
	case *out.Handoff == 0 && !strings.Contains(lines[0], "not measured"):
		t.Errorf("-handoff printed 0 without saying it was not measured: %q", buf.String())
	case *out.Handoff == 0 || !measured:
		t.Logf("the other core was busy: not measured (%q)", lines[0])
	}
	runtime.GOMAXPROCS(1)
	if d := handoff(200, 3); d != 0 {
		t.Errorf("one proc: round trip %v, want 0 (not measured)", d)
	}
}

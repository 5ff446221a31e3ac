package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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

//go:build cuda || cudaemu

package cuda

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// TestTimelineProfile runs TestTimelineChild in a child process with
// GOLUON_CUDA_PROFILE=gpu (the mode is fixed when the package starts) and
// checks its table: a row for each kind of op it ran, with as many calls
// as it made, and the GPU's idle time between them.
func TestTimelineProfile(t *testing.T) {
	needGPUs(t, 1)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTimelineChild$", "-test.v")
	cmd.Env = append(os.Environ(), ProfileEnv+"=gpu", "GOLUON_TIMELINE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	rows := map[string]float64{}
	row := regexp.MustCompile(`(?m)^(.+?)\s+([0-9.]+)\s+([0-9.]+)\s+[0-9.]+%$`)
	for _, m := range row.FindAllStringSubmatch(string(out), -1) {
		calls, _ := strconv.ParseFloat(m[2], 64)
		rows[m[1]] = calls
	}
	for _, want := range []struct {
		op    string
		calls float64
	}{
		{"Binary binary_flat_f32", timelineSteps},
		{"Write", 1},
		{"Read", 1},
		{idleOp, 0}, // present; its count is the gaps between tasks
	} {
		got, ok := rows[want.op]
		if !ok {
			t.Errorf("no row %q in\n%s", want.op, out)
			continue
		}
		if want.calls > 0 && got != want.calls {
			t.Errorf("%s: %v calls, want %v", want.op, got, want.calls)
		}
	}
	if !bytes.Contains(out, []byte("total")) {
		t.Errorf("no total in\n%s", out)
	}
	// Reading x back is the run's one host synchronisation.
	if m := regexp.MustCompile(`(?m)^host syncs on gpu\(0\)\s+([0-9.]+)$`).FindSubmatch(out); m == nil || string(m[1]) != "1.0" {
		t.Errorf("host syncs row %q, want 1.0, in\n%s", m, out)
	}
}

// timelineSteps is how many additions TestTimelineChild queues: more than
// a worker keeps before it harvests, so that harvesting in the middle of a
// run is covered too.
const timelineSteps = timelineCap + 100

// TestTimelineChild is TestTimelineProfile's child; it runs only there.
func TestTimelineChild(t *testing.T) {
	if os.Getenv("GOLUON_TIMELINE_CHILD") != "1" {
		t.Skip("run by TestTimelineProfile")
	}
	if !gpuTiming {
		t.Fatalf("%s=gpu did not turn the timeline on", ProfileEnv)
	}
	needGPUs(t, 1)
	s := nd.NewScope()
	defer s.Close()
	ResetProfile()
	x := nd.FromSlice(ctx.GPU(0), []float32{1, 2, 3}, 3)
	for range timelineSteps {
		nd.AddTo(x, x)
	}
	_ = x.Float32s()
	var buf bytes.Buffer
	WriteProfile(&buf, 1)
	os.Stdout.Write(buf.Bytes())
}

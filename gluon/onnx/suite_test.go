package onnx_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// suiteDir is where Debian's libonnx-testdata puts ONNX's backend test
// data (make test installs it).
const suiteDir = "/usr/share/libonnx-testdata/data"

// readTensor reads a serialized TensorProto (a test's input_N.pb).
func readTensor(path string) (*onnxpb.TensorProto, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t onnxpb.TensorProto
	return &t, proto.Unmarshal(data, &t)
}

// caseResult is one backend test's outcome: "pass", "fail" (with why) or
// "unsupported".
type caseResult struct {
	status, why string
	ops         []string
}

// runCase loads a test's model and checks every data set with ONNX's
// backend test tolerances (rtol 1e-3, atol 1e-7).
func runCase(dir string) (res caseResult) {
	var mp onnxpb.ModelProto
	if data, err := os.ReadFile(filepath.Join(dir, "model.onnx")); err != nil {
		return caseResult{"fail", err.Error(), nil}
	} else if err := proto.Unmarshal(data, &mp); err != nil {
		return caseResult{"fail", err.Error(), nil}
	}
	for _, n := range mp.GetGraph().GetNode() {
		if !slices.Contains(res.ops, n.GetOpType()) {
			res.ops = append(res.ops, n.GetOpType())
		}
	}
	m, err := onnx.Load(filepath.Join(dir, "model.onnx"))
	if err != nil {
		if strings.Contains(err.Error(), "unsupported op types") {
			return caseResult{"unsupported", "", res.ops}
		}
		return caseResult{"fail", "load: " + err.Error(), res.ops}
	}
	sets, _ := filepath.Glob(filepath.Join(dir, "test_data_set_*"))
	for _, set := range sets {
		var ins []*nd.NDArray
		for i := 0; ; i++ {
			t, err := readTensor(filepath.Join(set, fmt.Sprintf("input_%d.pb", i)))
			if err != nil {
				break
			}
			a, err := onnx.TensorArray(t, ctx.CPU(0))
			if err != nil {
				return caseResult{"fail", "input: " + err.Error(), res.ops}
			}
			ins = append(ins, a)
		}
		var outs []*nd.NDArray
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return nd.Catch(func() { outs = m.ForwardMulti(ins...) })
		}()
		if err != nil {
			return caseResult{"fail", err.Error(), res.ops}
		}
		for i := range outs {
			t, err := readTensor(filepath.Join(set, fmt.Sprintf("output_%d.pb", i)))
			if err != nil {
				return caseResult{"fail", "expected output: " + err.Error(), res.ops}
			}
			want, err := onnx.TensorArray(t, ctx.CPU(0))
			if err != nil {
				return caseResult{"fail", "expected output: " + err.Error(), res.ops}
			}
			if why := compareOut(outs[i], want); why != "" {
				return caseResult{"fail", fmt.Sprintf("output %d: %s", i, why), res.ops}
			}
		}
	}
	res.status = "pass"
	return res
}

func compareOut(got, want *nd.NDArray) string {
	if got == nil {
		return "no output"
	}
	if !slices.Equal(got.Shape(), want.Shape()) {
		return fmt.Sprintf("shape %v, want %v", got.Shape(), want.Shape())
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range w {
		if math.IsNaN(w[i]) && math.IsNaN(g[i]) {
			continue
		}
		if d := math.Abs(g[i] - w[i]); !(d <= 1e-7+1e-3*math.Abs(w[i])) {
			return fmt.Sprintf("element %d = %g, want %g", i, g[i], w[i])
		}
	}
	return ""
}

// TestBackendSuite runs ONNX's own backend test data (node,
// pytorch-converted, pytorch-operator and simple models) and prints the
// pass, fail and unsupported counts. Every test of an op Goluon supports
// must pass unless knownFailures lists it with its reason.
func TestBackendSuite(t *testing.T) {
	if _, err := os.Stat(suiteDir); err != nil {
		t.Skipf("%s missing (Debian's libonnx-testdata; make test installs it)", suiteDir)
	}
	for _, suite := range []string{"node", "pytorch-converted", "pytorch-operator", "simple"} {
		dirs, _ := filepath.Glob(filepath.Join(suiteDir, suite, "test_*"))
		counts := map[string]int{}
		var unexpected []string
		for _, dir := range dirs {
			name := filepath.Base(dir)
			r := runCase(dir)
			counts[r.status]++
			_, known := knownFailures[name]
			switch {
			case r.status == "fail" && !known:
				unexpected = append(unexpected, fmt.Sprintf("%s (%s): %s", name, strings.Join(r.ops, " "), r.why))
			case r.status == "pass" && known:
				t.Errorf("%s passes now: remove it from knownFailures", name)
			}
		}
		sort.Strings(unexpected)
		for _, u := range unexpected {
			t.Errorf("%s/%s", suite, u)
		}
		t.Logf("%s: %d tests: %d pass, %d fail (%d known), %d unsupported", suite, len(dirs), counts["pass"], counts["fail"], counts["fail"]-len(unexpected), counts["unsupported"])
	}
}

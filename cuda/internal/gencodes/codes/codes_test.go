package codes

import (
	"bytes"
	"os"
	"testing"
)

// TestCommittedFilesCurrent: cuda/kernels/opcodes.cuh and
// cuda/opcodes_gen.go are what the generator makes from nd/backend now,
// so an op added to the backend without regenerating fails here (in the
// default build, which CI runs) rather than in a kernel on a GPU.
func TestCommittedFilesCurrent(t *testing.T) {
	header, goFile, err := Files("../../../../nd/backend")
	if err != nil {
		t.Fatal(err)
	}
	params, paramsGo, err := Params()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{"../../../kernels/opcodes.cuh": header, "../../../opcodes_gen.go": goFile,
		"../../../kernels/params.cuh": params, "../../../params_gen.go": paramsGo} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./cuda/internal/gencodes", path)
		}
	}
	if !bytes.Contains(header, []byte("\tU_ADD_SCALAR = 11,\n")) || !bytes.Contains(header, []byte("\tDT_BFLOAT16 = 7,\n")) {
		t.Errorf("unexpected header:\n%s", header)
	}
}

func TestCName(t *testing.T) {
	for in, want := range map[string]string{"Neg": "NEG", "AddScalar": "ADD_SCALAR", "RSqrt": "RSQRT", "Log1p": "LOG1P",
		"ArgMax": "ARG_MAX", "BFloat16": "BFLOAT16", "Float32": "FLOAT32", "NotEqual": "NOT_EQUAL"} {
		if got := cName(in); got != want {
			t.Errorf("cName(%q) = %q, want %q", in, got, want)
		}
	}
}

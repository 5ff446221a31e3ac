// Package onnxtest is the ONNX export round trip the tests share: export a
// network, load the file back with gluon/onnx, compare the outputs.
package onnxtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/nd"
)

// ExportDirEnv names the environment variable that keeps the exported
// files in a directory (make onnx-check runs ONNX's checker on them).
const ExportDirEnv = "GOLUON_ONNX_EXPORT_DIR"

// RoundTrip saves net as <name>.onnx for the example input shape, loads it
// with onnx.Load and checks that, in predict mode, the loaded model's
// output for each input equals the network's within 1e-5 relative (L2).
func RoundTrip(t testing.TB, name string, net gluon.Block, shape []int, opts onnx.ExportOpts, inputs ...*nd.NDArray) {
	t.Helper()
	dir := os.Getenv(ExportDirEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name+".onnx")
	if err := onnx.Save(path, net, shape, opts); err != nil {
		t.Fatal(err)
	}
	m, err := onnx.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(ExportDirEnv) != "" && len(inputs) > 0 {
		var y *nd.NDArray
		autograd.PredictMode(func() { y = net.Forward(inputs[0]) })
		if err := WriteIO(filepath.Join(dir, name+".io.json"), inputs[0], y); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range inputs {
		var want, got []float32
		autograd.PredictMode(func() {
			want = net.Forward(x).Float32s()
			got = m.Forward(x).Float32s()
		})
		if len(got) != len(want) {
			t.Fatalf("input %v: %d outputs, want %d", x.Shape(), len(got), len(want))
		}
		if rel := numcmp.RelL2(got, want); rel > 1e-5 || rel != rel {
			t.Errorf("input %v: relative L2 difference %.3g", x.Shape(), rel)
		}
	}
}

// ioTensor is one array of an io.json file: its ONNX element type name
// (float32, float16, float64, int64), shape and little-endian bytes.
type ioTensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  []byte `json:"data"` // base64 in JSON
}

// WriteIO writes path, the input x and the network's output y of an
// exported model, for tools/onnx_ort_check.js (make onnx-ort), which runs
// the model in ONNX Runtime and compares.
func WriteIO(path string, x, y *nd.NDArray) error {
	in, err := encodeIO(x)
	if err != nil {
		return err
	}
	out, err := encodeIO(y)
	if err != nil {
		return err
	}
	data, err := json.Marshal(map[string]ioTensor{"input": in, "output": out})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// WriteIOMulti is WriteIO for a model of several inputs and outputs, by
// the graph's names.
func WriteIOMulti(path string, inNames []string, xs []*nd.NDArray, outNames []string, ys []*nd.NDArray) error {
	type named struct {
		Name string `json:"name"`
		ioTensor
	}
	var f struct {
		Inputs  []named `json:"inputs"`
		Outputs []named `json:"outputs"`
	}
	for i, x := range xs {
		t, err := encodeIO(x)
		if err != nil {
			return err
		}
		f.Inputs = append(f.Inputs, named{inNames[i], t})
	}
	for i, y := range ys {
		t, err := encodeIO(y)
		if err != nil {
			return err
		}
		f.Outputs = append(f.Outputs, named{outNames[i], t})
	}
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// encodeIO encodes one array of an io.json file.
func encodeIO(a *nd.NDArray) (ioTensor, error) {
	t := ioTensor{Shape: a.Shape()}
	switch a.DType() {
	case nd.Float32:
		t.DType = "float32"
		for _, v := range a.Float32s() {
			t.Data = binary.LittleEndian.AppendUint32(t.Data, math.Float32bits(v))
		}
	case nd.Float64:
		t.DType = "float64"
		for _, v := range a.Float64s() {
			t.Data = binary.LittleEndian.AppendUint64(t.Data, math.Float64bits(v))
		}
	case nd.Float16:
		t.DType = "float16"
		for _, v := range a.Float32s() {
			t.Data = binary.LittleEndian.AppendUint16(t.Data, uint16(nd.F16From(v)))
		}
	case nd.Int64:
		t.DType = "int64"
		for _, v := range a.Int64s() {
			t.Data = binary.LittleEndian.AppendUint64(t.Data, uint64(v))
		}
	case nd.Bool:
		t.DType = "bool"
		for _, v := range a.Bools() {
			b := byte(0)
			if v {
				b = 1
			}
			t.Data = append(t.Data, b)
		}
	default:
		return t, fmt.Errorf("onnxtest: %v arrays are not written", a.DType())
	}
	return t, nil
}

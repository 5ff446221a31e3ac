package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// hostTensor decodes an ONNX tensor into a Go slice ([]float32, []float64,
// []int64, []int32, []uint8 or []bool) and its shape.
func hostTensor(t *onnxpb.TensorProto) (any, []int, error) {
	shape := make([]int, len(t.GetDims()))
	n := 1
	for i, d := range t.GetDims() {
		if d < 0 {
			return nil, nil, fmt.Errorf("tensor %q: negative dimension %d", t.GetName(), d)
		}
		if d > 0 && n > math.MaxInt32/int(min(d, math.MaxInt32)) {
			return nil, nil, fmt.Errorf("tensor %q: dimensions %v hold more than 2^31 elements", t.GetName(), t.GetDims())
		}
		shape[i] = int(d)
		n *= int(d)
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, nil, fmt.Errorf("tensor %q: external data is read only by Load, from the file beside the model", t.GetName())
	}
	raw := t.GetRawData()
	check := func(got int) error {
		if got != n {
			return fmt.Errorf("tensor %q: %d values for shape %v", t.GetName(), got, shape)
		}
		return nil
	}
	dt := onnxpb.TensorProto_DataType(t.GetDataType())
	if size, ok := elemSize[dt]; ok && raw != nil && len(raw) != n*size {
		return nil, nil, fmt.Errorf("tensor %q: %d bytes of raw data for shape %v of %v (%d bytes)", t.GetName(), len(raw), shape, dt, n*size)
	}
	switch dt {
	case onnxpb.TensorProto_FLOAT:
		v := t.GetFloatData()
		if raw != nil {
			v = make([]float32, len(raw)/4)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		return v, shape, check(len(v))
	case onnxpb.TensorProto_DOUBLE:
		v := t.GetDoubleData()
		if raw != nil {
			v = make([]float64, len(raw)/8)
			for i := range v {
				v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		return v, shape, check(len(v))
	case onnxpb.TensorProto_INT64:
		v := t.GetInt64Data()
		if raw != nil {
			v = make([]int64, len(raw)/8)
			for i := range v {
				v[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		return v, shape, check(len(v))
	case onnxpb.TensorProto_INT32:
		if raw == nil {
			v := t.GetInt32Data()
			return append([]int32(nil), v...), shape, check(len(v))
		}
		v := make([]int32, len(raw)/4)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return v, shape, check(len(v))
	case onnxpb.TensorProto_FLOAT16, onnxpb.TensorProto_BFLOAT16:
		// Raw data holds the 16-bit patterns; int32_data holds one per value.
		bits := make([]uint16, 0, len(raw)/2)
		if raw != nil {
			for i := 0; i+2 <= len(raw); i += 2 {
				bits = append(bits, binary.LittleEndian.Uint16(raw[i:]))
			}
		} else {
			for _, v := range t.GetInt32Data() {
				bits = append(bits, uint16(v))
			}
		}
		if err := check(len(bits)); err != nil {
			return nil, nil, err
		}
		if dt == onnxpb.TensorProto_FLOAT16 {
			v := make([]nd.F16, len(bits))
			for i, b := range bits {
				v[i] = nd.F16(b)
			}
			return v, shape, nil
		}
		v := make([]nd.BF16, len(bits))
		for i, b := range bits {
			v[i] = nd.BF16(b)
		}
		return v, shape, nil
	case onnxpb.TensorProto_BOOL, onnxpb.TensorProto_UINT8:
		b := raw
		if b == nil {
			if err := check(len(t.GetInt32Data())); err != nil {
				return nil, nil, err
			}
			for _, x := range t.GetInt32Data() {
				b = append(b, uint8(x))
			}
		}
		if dt == onnxpb.TensorProto_BOOL {
			v := make([]bool, len(b))
			for i, x := range b {
				v[i] = x != 0
			}
			return v, shape, check(len(v))
		}
		return b, shape, check(len(b))
	}
	return nil, nil, fmt.Errorf("tensor %q: element type %v is not supported", t.GetName(), dt)
}

// elemSize is the size in bytes of one raw_data element of each supported
// type.
var elemSize = map[onnxpb.TensorProto_DataType]int{
	onnxpb.TensorProto_FLOAT: 4, onnxpb.TensorProto_DOUBLE: 8, onnxpb.TensorProto_INT64: 8,
	onnxpb.TensorProto_INT32: 4, onnxpb.TensorProto_BOOL: 1, onnxpb.TensorProto_UINT8: 1,
	onnxpb.TensorProto_FLOAT16: 2, onnxpb.TensorProto_BFLOAT16: 2,
}

// constArray makes a neutral, untracked array of an ONNX tensor on dev.
func constArray(t *onnxpb.TensorProto, dev ctx.Context) (*nd.NDArray, error) {
	data, shape, err := hostTensor(t)
	if err != nil {
		return nil, err
	}
	var a *nd.NDArray
	if err := nd.Catch(func() {
		a = nd.PersistentSession().FromSliceShaped(dev, data, shape) // a scalar stays 0-d
	}); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", t.GetName(), err)
	}
	return a, nil
}

// dtypeOf maps an ONNX element type to nd's.
func dtypeOf(t int64) (nd.DType, error) {
	switch onnxpb.TensorProto_DataType(t) {
	case onnxpb.TensorProto_FLOAT:
		return nd.Float32, nil
	case onnxpb.TensorProto_DOUBLE:
		return nd.Float64, nil
	case onnxpb.TensorProto_INT64:
		return nd.Int64, nil
	case onnxpb.TensorProto_INT32:
		return nd.Int32, nil
	case onnxpb.TensorProto_UINT8:
		return nd.Uint8, nil
	case onnxpb.TensorProto_BOOL:
		return nd.Bool, nil
	case onnxpb.TensorProto_FLOAT16:
		return nd.Float16, nil
	case onnxpb.TensorProto_BFLOAT16:
		return nd.BFloat16, nil
	}
	return 0, fmt.Errorf("element type %v is not supported", onnxpb.TensorProto_DataType(t))
}

// attrs gives a node's attributes by name.
type attrs map[string]*onnxpb.AttributeProto

func attrsOf(n *onnxpb.NodeProto) attrs {
	a := attrs{}
	for _, at := range n.GetAttribute() {
		a[at.GetName()] = at
	}
	return a
}

func (a attrs) int(name string, def int) int {
	if at, ok := a[name]; ok {
		return int(at.GetI())
	}
	return def
}

func (a attrs) float(name string, def float64) float64 {
	if at, ok := a[name]; ok {
		return float64(at.GetF())
	}
	return def
}

func (a attrs) ints(name string) []int {
	at, ok := a[name]
	if !ok {
		return nil
	}
	out := make([]int, len(at.GetInts()))
	for i, v := range at.GetInts() {
		out[i] = int(v)
	}
	return out
}

func (a attrs) str(name, def string) string {
	if at, ok := a[name]; ok {
		return string(at.GetS())
	}
	return def
}

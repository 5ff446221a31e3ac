package onnx

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
)

// External data: models over protobuf's 2 GB limit keep their tensors in
// files beside the model (onnx.save_model(..., save_as_external_data=True),
// torch.onnx.export of large models). Each such tensor names a location
// (relative to the model's directory), an offset and a length.

// loadExternal reads the external tensors of the graph (initializers and
// Constant nodes' values, in subgraphs too) into their raw data.
func loadExternal(g *onnxpb.GraphProto, dir string) error {
	for _, t := range g.GetInitializer() {
		if err := readExternal(t, dir); err != nil {
			return err
		}
	}
	for _, n := range g.GetNode() {
		for _, a := range n.GetAttribute() {
			if t := a.GetT(); t != nil {
				if err := readExternal(t, dir); err != nil {
					return err
				}
			}
			for _, sub := range append([]*onnxpb.GraphProto{a.GetG()}, a.GetGraphs()...) {
				if sub != nil {
					if err := loadExternal(sub, dir); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// readExternal moves an external tensor's bytes into its raw data.
func readExternal(t *onnxpb.TensorProto, dir string) error {
	if t.GetDataLocation() != onnxpb.TensorProto_EXTERNAL {
		return nil
	}
	var location string
	offset, length := int64(0), int64(-1)
	for _, kv := range t.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			location = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil || offset < 0 {
			return fmt.Errorf("tensor %q: external data %s %q is not a non-negative integer", t.GetName(), kv.GetKey(), kv.GetValue())
		}
	}
	clean := filepath.Clean(location)
	if location == "" || filepath.IsAbs(location) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return fmt.Errorf("tensor %q: external data location %q must name a file in the model's directory", t.GetName(), location)
	}
	f, err := os.Open(filepath.Join(dir, clean))
	if err != nil {
		return fmt.Errorf("tensor %q: external data: %w", t.GetName(), err)
	}
	defer f.Close()
	if length < 0 {
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("tensor %q: external data: %w", t.GetName(), err)
		}
		length = st.Size() - offset
	}
	if length < 0 || length > 1<<34 {
		return fmt.Errorf("tensor %q: external data of %d bytes at offset %d of %s", t.GetName(), length, offset, location)
	}
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, offset); err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%s holds fewer than %d bytes at offset %d", location, length, offset)
		}
		return fmt.Errorf("tensor %q: external data: %w", t.GetName(), err)
	}
	t.RawData = buf
	t.DataLocation = onnxpb.TensorProto_DEFAULT.Enum()
	t.ExternalData = nil
	return nil
}

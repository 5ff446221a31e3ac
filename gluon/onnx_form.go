package gluon

import "github.com/goluon/goluon/nd"

// ONNXGraph is what a block writes its inference form into when a network
// is exported to ONNX (gluon/onnx.Export implements it). Values are named
// by strings; attribute values are int, float64, string, []int, []float64
// or []string, and float32 for a one-element tensor (ConstantOfShape's
// value).
type ONNXGraph interface {
	// Param returns the name of p's value in the graph, adding it as an
	// initializer the first time.
	Param(p *Parameter) string
	// Const adds a constant (a []float32 or []int64 of the given shape) and
	// returns its name.
	Const(data any, shape ...int) string
	// Op appends a node of the default domain and returns the names of its
	// nOut outputs.
	Op(opType string, inputs []string, attrs map[string]any, nOut int) []string
	// Block writes b's form on the given input and returns its output: b's
	// ExportONNX, or an error naming b when it has none.
	Block(b Component, input string) (string, error)
	// BlockMulti writes the form of b, a MultiBlock (or a Block, for one
	// input), on the given inputs ("" for a nil input) and returns its
	// outputs: b's ExportONNXMulti, or an error naming b.
	BlockMulti(b Component, inputs []string) ([]string, error)
}

// ONNXMultiExporter is implemented by MultiBlocks that can write their
// inference form for several inputs (MultiHeadAttention with its key,
// value and masks, the Transformer layers with their masks). Inputs holds
// one value name per input of ForwardMulti, "" for a nil one (an optional
// input left out); the result holds one name per output.
type ONNXMultiExporter interface {
	ExportONNXMulti(g ONNXGraph, inputs []string) ([]string, error)
}

// ONNXTypes is implemented by an ONNXGraph that can tell the element type
// a value takes on the example inputs (gluon/onnx's exporter does): for a
// form that depends on it, such as a mask that is Bool (excluded
// positions) or floating (added to the scores).
type ONNXTypes interface {
	DType(value string) (nd.DType, error)
}

// ONNXExporter is implemented by blocks that can write their inference
// form (predict mode: no dropout, running statistics) into an ONNX graph:
// the nn layers, the containers and the model zoo's networks. A block of
// one's own implements it to be exportable; its children are written with
// g.Block.
type ONNXExporter interface {
	ExportONNX(g ONNXGraph, input string) (string, error)
}

// ONNXShapes is implemented by an ONNXGraph that can tell the shape a
// value takes on the example input the network is exported with
// (gluon/onnx.Export's graph does): for forms that depend on sizes, such
// as pooling in ceil mode, whose output size ONNX's opsets before 19
// compute otherwise.
type ONNXShapes interface {
	Shape(value string) ([]int, error)
}

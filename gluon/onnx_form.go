package gluon

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

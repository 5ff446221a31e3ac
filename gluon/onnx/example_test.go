package onnx_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/nd"
)

// ExampleSave exports LeNet with a free batch size, loads the file back
// and runs it on a batch of another size.
func ExampleSave() {
	dev := ctx.CPU(0)
	net := modelzoo.LeNet()
	if err := gluon.Initialize(net, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "onnx-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "lenet.onnx")
	if err := onnx.Save(path, net, []int{1, 1, 28, 28}, onnx.ExportOpts{}); err != nil {
		fmt.Println(err)
		return
	}
	m, err := onnx.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	y := m.Forward(nd.Zeros(dev, nd.Float32, 4, 1, 28, 28))
	fmt.Println(m.Inputs, m.Outputs, y.Shape())
	// Output:
	// [input] [output] [4 10]
}

// ExampleExportMulti exports a transformer decoder layer with its target,
// the encoder's output and a Bool padding mask over the memory; the
// optional masks between them are left out.
func ExampleExportMulti() {
	dev := ctx.CPU(0)
	dec := nn.NewTransformerDecoderLayer(16, 4, nn.TransformerOpts{FeedForward: 32, Layout: "NTC"})
	if err := gluon.Initialize(dec, initializer.Xavier{}, dev); err != nil {
		fmt.Println(err)
		return
	}
	mp, err := onnx.ExportMulti(dec, []onnx.ExportInput{
		{Name: "tgt", Shape: []int{2, 5, 16}, FreeAxes: []int{1}},
		{Name: "memory", Shape: []int{2, 9, 16}, FreeAxes: []int{1}},
		{Omitted: true}, {Omitted: true}, {Omitted: true}, // tgt mask, memory mask, tgt padding
		{Name: "memory_key_padding_mask", Shape: []int{2, 9}, DType: nd.Bool, FreeAxes: []int{1}},
	}, onnx.ExportOpts{OutputNames: []string{"out"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, vi := range append(mp.GetGraph().GetInput(), mp.GetGraph().GetOutput()...) {
		var shape []string
		for _, d := range vi.GetType().GetTensorType().GetShape().GetDim() {
			switch {
			case d.GetDimParam() != "":
				shape = append(shape, d.GetDimParam())
			case d.GetDimValue() != 0:
				shape = append(shape, fmt.Sprint(d.GetDimValue()))
			default:
				shape = append(shape, "?")
			}
		}
		fmt.Println(vi.GetName(), shape) // sizes, or the names of free ones ("?": unnamed)
	}
	// Output:
	// tgt [N tgt_L1 16]
	// memory [N memory_L1 16]
	// memory_key_padding_mask [N memory_key_padding_mask_L1]
	// out [N ? 16]
}

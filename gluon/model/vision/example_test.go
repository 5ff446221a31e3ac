package vision_test

import (
	"fmt"
	"path/filepath"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/nd"
)

// A ResNet-18 (here a narrow one, as in the tests) loads a torchvision
// state dict converted with tools/torch2safetensors.py, gets a new head
// for 5 classes and is frozen but for it, ready to fine-tune.
func ExampleResNet18() {
	dev := []ctx.Context{ctx.CPU(0)}
	net := vision.ResNet18(vision.Options{Classes: 10, Width: 8})
	params := gluon.CollectParams(net)
	if err := vision.LoadStateDict(params, filepath.Join("testdata", "resnet18.safetensors"), dev); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(params.Names()[:3], len(params.Names()), "parameters")
	net.ReplaceHead(5)
	vision.FreezeAllButHead(net)
	var y *nd.NDArray
	autograd.PredictMode(func() { y = net.Forward(nd.Zeros(dev[0], nd.Float32, 1, 3, 32, 32)) })
	fmt.Println("output", y.Shape())
	// Output:
	// [conv1.weight bn1.weight bn1.bias] 102 parameters
	// output [1 5]
}

// A Swin Transformer loads a torchvision state dict (its
// relative_position_index buffers are computed, not loaded) and takes
// images of any size: maps that are not a multiple of the window are
// padded.
func ExampleNewSwin() {
	dev := []ctx.Context{ctx.CPU(0)}
	net := vision.NewSwin(vision.SwinOptions{Options: vision.Options{Classes: 10, Width: 8},
		WindowSize: 4, Heads: [4]int{1, 2, 4, 8}})
	if err := vision.LoadStateDict(gluon.CollectParams(net), filepath.Join("testdata", "swin_t.safetensors"), dev); err != nil {
		fmt.Println(err)
		return
	}
	var y *nd.NDArray
	autograd.PredictMode(func() { y = net.Forward(nd.Zeros(dev[0], nd.Float32, 1, 3, 40, 56)) })
	fmt.Println("output", y.Shape())
	// Output:
	// output [1 10]
}

// torchvision's pretrained GoogLeNet has no auxiliary classifiers: its
// checkpoint's aux1 and aux2 are skipped when loading into the default
// model. With AuxLogits they load, and ForwardAux returns their scores
// after the main ones in training mode.
func ExampleGoogLeNet_ForwardAux() {
	dev := []ctx.Context{ctx.CPU(0)}
	opts := vision.Options{Classes: 10, Width: 8}
	for _, aux := range []bool{false, true} {
		net := vision.NewGoogLeNet(vision.InceptionOptions{Options: opts, AuxLogits: &aux})
		params := gluon.CollectParams(net)
		if err := vision.LoadStateDict(params, filepath.Join("testdata", "googlenet.safetensors"), dev); err != nil {
			fmt.Println(err)
			return
		}
		var ys []*nd.NDArray
		autograd.TrainMode(func() { ys = net.ForwardAux(nd.Zeros(dev[0], nd.Float32, 2, 3, 64, 64)) })
		fmt.Println("auxiliary classifiers:", aux, len(params.Names()), "parameters,", len(ys), "outputs")
	}
	// Output:
	// auxiliary classifiers: false 287 parameters, 1 outputs
	// auxiliary classifiers: true 305 parameters, 3 outputs
}

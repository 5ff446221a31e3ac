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

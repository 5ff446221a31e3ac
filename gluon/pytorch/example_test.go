package pytorch_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/pytorch"
)

// A training checkpoint saved by torch.save({"model": model.state_dict(),
// "optimizer": opt.state_dict(), "epoch": 3, ...}, path).
func ExampleLoadStateDict() {
	sd, err := pytorch.LoadStateDict("testdata/checkpoint.pt", ctx.CPU(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	w := sd["0.weight"]
	fmt.Println(len(sd), w.DType(), w.Shape())
	// Output: 9 float32 [4 3 3 3]
}

func ExampleLoad() {
	v, err := pytorch.Load("testdata/checkpoint.pt", ctx.CPU(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	ckpt := v.(*pytorch.Dict)
	epoch, _ := ckpt.Get("epoch")
	betas, _ := ckpt.Get("betas")
	fmt.Println(ckpt.Keys[:3], epoch, betas)
	// Output: [model optimizer epoch] 3 [0.9 0.999]
}

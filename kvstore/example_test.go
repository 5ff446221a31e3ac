package kvstore_test

import (
	"fmt"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/kvstore"
	"github.com/goluon/goluon/nd"
)

// A kvstore sums the values each device pushes for a key and hands the
// sum back to every device: the all-reduce behind gluon.Trainer.
func Example() {
	kv, err := kvstore.Create("device")
	if err != nil {
		fmt.Println(err)
		return
	}
	devs := []ctx.Context{ctx.CPU(0), ctx.CPU(1)}
	if err := kv.Init([]string{"w"}, []*nd.NDArray{nd.Zeros(devs[0], nd.Float32, 2)}); err != nil {
		fmt.Println(err)
		return
	}
	grads := []*nd.NDArray{
		nd.FromSlice(devs[0], []float32{1, 2}),
		nd.FromSlice(devs[1], []float32{10, 20}),
	}
	if err := kv.PushPull("w", grads, grads); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(grads[0])
	fmt.Println(grads[1])
	// Output:
	// NDArray[2] float32 @cpu(0) [11 22]
	// NDArray[2] float32 @cpu(1) [11 22]
}

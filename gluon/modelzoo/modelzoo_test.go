package modelzoo_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/nd"
)

// count initialises net on cpu(0), runs one forward pass on an input of
// the given shape and returns the output shape and the parameter count.
func count(t *testing.T, net gluon.Block, in ...int) ([]int, int) {
	t.Helper()
	params := gluon.CollectParams(net)
	if err := params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false); err != nil {
		t.Fatal(err)
	}
	out := net.Forward(nd.Zeros(ctx.CPU(0), nd.Float32, in...))
	n := 0
	for _, p := range params.List() {
		n += p.ListData()[0].Size()
	}
	return out.Shape(), n
}

func TestNetworks(t *testing.T) {
	cases := []struct {
		name   string
		net    gluon.Block
		in     []int
		out    []int
		params int // computed by hand from the layers; Keras reports the same for the CIFAR CNN
	}{
		// 6·25+6 + 16·6·9+16 + 120·400+120 + 84·120+84 + 10·84+10 = 156+880+48120+10164+850
		{"LeNet", modelzoo.LeNet(), []int{2, 1, 28, 28}, []int{2, 10}, 60170},
		{"KerasCIFARCNN", modelzoo.KerasCIFARCNN(), []int{2, 3, 32, 32}, []int{2, 10}, 1250858},
		// 784·256+256 + 256·256+256 + 256·10+10
		{"MLP", modelzoo.MLP(10, 256, 256), []int{2, 784}, []int{2, 10}, 269322},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, n := count(t, c.net, c.in...)
			if !slices.Equal(out, c.out) || n != c.params {
				t.Errorf("output %v with %d parameters, want %v and %d", out, n, c.out, c.params)
			}
		})
	}
}

func ExampleLeNet() {
	net := modelzoo.LeNet()
	params := gluon.CollectParams(net)
	_ = params.Initialize(initializer.Xavier{}, []ctx.Context{ctx.CPU(0)}, false)
	net.Forward(nd.Zeros(ctx.CPU(0), nd.Float32, 1, 1, 28, 28)) // infers the input sizes
	for _, name := range params.Names() {
		fmt.Println(name, params.Get(name).Shape())
	}
	// Output:
	// conv0.weight [6 1 5 5]
	// conv0.bias [6]
	// conv1.weight [16 6 3 3]
	// conv1.bias [16]
	// dense0.weight [120 400]
	// dense0.bias [120]
	// dense1.weight [84 120]
	// dense1.bias [84]
	// dense2.weight [10 84]
	// dense2.bias [10]
}

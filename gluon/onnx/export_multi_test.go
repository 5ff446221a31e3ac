package onnx_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/gluon/onnx"
	"github.com/goluon/goluon/internal/numcmp"
	"github.com/goluon/goluon/internal/onnxtest"
	"github.com/goluon/goluon/nd"
)

// causalFloat is an additive causal mask [t, t]: −inf above the diagonal.
func causalFloat(dev ctx.Context, t int) *nd.NDArray {
	m := make([]float32, t*t)
	for i := range t {
		for j := i + 1; j < t; j++ {
			m[i*t+j] = float32(math.Inf(-1))
		}
	}
	return nd.FromSlice(dev, m, t, t)
}

// TestExportMulti exports MultiBlocks with several inputs (masks, Bool and
// floating, omitted ones) and outputs, loads each file back and runs it on
// inputs other than the example's (a larger batch, longer sequences).
func TestExportMulti(t *testing.T) {
	dev := ctx.CPU(0)
	padMask := func(n, s int) *nd.NDArray { // the last key of every other sample padded
		v := make([]bool, n*s)
		for i := 0; i < n; i += 2 {
			v[i*s+s-1] = true
		}
		return nd.FromSlice(dev, v, n, s)
	}
	for _, c := range []struct {
		name   string
		net    func() gluon.Component
		inputs []onnx.ExportInput
		outs   []string
		// run gives inputs of other sizes for the loaded model: batch n,
		// target length t, memory length s.
		run func(n, t, s int) []*nd.NDArray
	}{
		{"decoder-ntc-masks", func() gluon.Component {
			return nn.NewTransformerDecoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC"})
		}, []onnx.ExportInput{
			{Name: "tgt", Shape: []int{2, 5, 8}, FreeAxes: []int{1}},
			{Name: "memory", Shape: []int{2, 7, 8}, FreeAxes: []int{1}},
			{Name: "tgt_mask", Example: causalFloat(dev, 5), NoBatch: true, FreeAxes: []int{0, 1}},
			{Omitted: true}, {Omitted: true},
			{Name: "memory_key_padding_mask", DType: nd.Bool, Example: padMask(2, 7), FreeAxes: []int{1}},
		}, nil, func(n, t, s int) []*nd.NDArray {
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, n, t, 8), nd.RandomNormal(dev, nd.Float32, 0, 1, n, s, 8),
				causalFloat(dev, t), padMask(n, s)}
		}},
		{"attention-cross-two-outputs", func() gluon.Component {
			return nn.NewMultiHeadAttention(8, 4, nn.AttentionOpts{})
		}, []onnx.ExportInput{
			{Name: "query", Shape: []int{4, 3, 8}, BatchAxis: 1},
			{Name: "key", Shape: []int{6, 3, 8}, BatchAxis: 1, FreeAxes: []int{0}},
			{Name: "value", Shape: []int{6, 3, 8}, BatchAxis: 1, FreeAxes: []int{0}},
			{Name: "key_padding_mask", DType: nd.Bool, Example: padMask(3, 6), FreeAxes: []int{1}},
		}, []string{"out", "weights"}, func(n, t, s int) []*nd.NDArray {
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, 4, n, 8), nd.RandomNormal(dev, nd.Float32, 0, 1, s, n, 8),
				nd.RandomNormal(dev, nd.Float32, 0, 1, s, n, 8), padMask(n, s)}
		}},
		{"transformer-ntc-masks", func() gluon.Component {
			return nn.NewTransformer(8, 2, 2, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC", NormFirst: true})
		}, []onnx.ExportInput{
			{Name: "src", Shape: []int{2, 7, 8}, FreeAxes: []int{1}},
			{Name: "tgt", Shape: []int{2, 5, 8}, FreeAxes: []int{1}},
			{Omitted: true},
			{Name: "tgt_mask", Example: causalFloat(dev, 5), NoBatch: true, FreeAxes: []int{0, 1}},
			{Omitted: true},
			{Name: "src_key_padding_mask", Example: padMask(2, 7), FreeAxes: []int{1}},
			{Omitted: true},
			{Name: "memory_key_padding_mask", Example: padMask(2, 7), FreeAxes: []int{1}},
		}, nil, func(n, t, s int) []*nd.NDArray {
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, n, s, 8), nd.RandomNormal(dev, nd.Float32, 0, 1, n, t, 8),
				causalFloat(dev, t), padMask(n, s), padMask(n, s)}
		}},
		{"encoder-stack-tnc-padding", func() gluon.Component {
			return nn.NewTransformerEncoder(2, 8, 2, nn.TransformerOpts{FeedForward: 16}, true)
		}, []onnx.ExportInput{
			{Name: "src", Shape: []int{5, 2, 8}, BatchAxis: 1, FreeAxes: []int{0}},
			{Name: "src_key_padding_mask", Example: padMask(2, 5), FreeAxes: []int{1}},
		}, nil, func(n, t, s int) []*nd.NDArray {
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, t, n, 8), padMask(n, t)}
		}},
		{"encoder-tnc-causal-padding", func() gluon.Component {
			return nn.NewTransformerEncoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Causal: true, NormFirst: true})
		}, []onnx.ExportInput{
			{Name: "src", Shape: []int{5, 2, 8}, BatchAxis: 1, FreeAxes: []int{0}},
			{Name: "src_key_padding_mask", DType: nd.Bool, Example: padMask(2, 5), FreeAxes: []int{1}},
		}, nil, func(n, t, s int) []*nd.NDArray {
			return []*nd.NDArray{nd.RandomNormal(dev, nd.Float32, 0, 1, t, n, 8), padMask(n, t)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd.Seed(11)
			net := c.net()
			if err := gluon.CollectParams(net).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			dir := os.Getenv(onnxtest.ExportDirEnv)
			if dir == "" {
				dir = t.TempDir()
			}
			path := filepath.Join(dir, c.name+".onnx")
			if err := onnx.SaveMulti(path, net, c.inputs, onnx.ExportOpts{OutputNames: c.outs}); err != nil {
				t.Fatal(err)
			}
			m, err := onnx.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range [][3]int{{3, 6, 9}, {1, 2, 3}} {
				xs := c.run(size[0], size[1], size[2])
				full := make([]*nd.NDArray, len(c.inputs))
				k := 0
				for i, in := range c.inputs {
					if !in.Omitted {
						full[i] = xs[k]
						k++
					}
				}
				var want, got []*nd.NDArray
				autograd.PredictMode(func() {
					want = gluon.Call(net, full...)
					got = m.ForwardMulti(xs...)
				})
				if len(got) != max(len(c.outs), 1) {
					t.Fatalf("%d outputs", len(got))
				}
				for j := range got {
					if rel := numcmp.RelL2(got[j].Float32s(), want[j].Float32s()); !(rel < 1e-5) {
						t.Errorf("size %v, output %d: relative difference %.3g", size, j, rel)
					}
				}
				if size[0] == 3 && os.Getenv(onnxtest.ExportDirEnv) != "" {
					var names []string
					for _, in := range c.inputs {
						if !in.Omitted {
							names = append(names, in.Name)
						}
					}
					outNames := c.outs
					if outNames == nil {
						outNames = []string{"output0"}
					}
					if err := onnxtest.WriteIOMulti(filepath.Join(dir, c.name+".io.json"), names, xs, outNames, want[:len(outNames)]); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// TestExportMultiErrors: misuse is an error that says what to change.
func TestExportMultiErrors(t *testing.T) {
	dev := ctx.CPU(0)
	dec := nn.NewTransformerDecoderLayer(8, 2, nn.TransformerOpts{FeedForward: 16, Layout: "NTC"})
	if err := gluon.CollectParams(dec).Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
		t.Fatal(err)
	}
	two := []onnx.ExportInput{{Shape: []int{2, 3, 8}}, {Shape: []int{2, 4, 8}}}
	lambda := nn.NewLambda(nd.Relu)
	for name, c := range map[string]struct {
		net    gluon.Component
		inputs []onnx.ExportInput
		opts   onnx.ExportOpts
		want   string
	}{
		"no inputs":       {dec, nil, onnx.ExportOpts{}, "no inputs"},
		"bad dtype":       {dec, []onnx.ExportInput{{Shape: []int{2, 3, 8}, DType: nd.Int32}, two[1]}, onnx.ExportOpts{}, "dtype"},
		"example shape":   {dec, []onnx.ExportInput{{Shape: []int{2, 3, 8}, Example: nd.Zeros(dev, nd.Float32, 2, 3)}, two[1]}, onnx.ExportOpts{}, "example of shape"},
		"free batch axis": {dec, []onnx.ExportInput{{Shape: []int{2, 3, 8}, FreeAxes: []int{0}}, two[1]}, onnx.ExportOpts{}, "free axis 0"},
		"too many names":  {dec, two, onnx.ExportOpts{OutputNames: []string{"a", "b"}}, "2 output names"},
		"name collision":  {dec, []onnx.ExportInput{{Name: "x", Shape: []int{2, 3, 8}}, {Name: "x", Shape: []int{2, 4, 8}}}, onnx.ExportOpts{}, "named"},
		"no form":         {lambda, []onnx.ExportInput{{Shape: []int{2, 3}}}, onnx.ExportOpts{}, "no ONNX form"},
		"forward fails":   {dec, two[:1], onnx.ExportOpts{}, "forward pass failed"},
	} {
		_, err := onnx.ExportMulti(c.net, c.inputs, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, c.want)
		}
	}
}

// TestExportMultiEdges: cases a review found.
func TestExportMultiEdges(t *testing.T) {
	dev := ctx.CPU(0)
	init := func(c gluon.Component) gluon.Component {
		if err := gluon.Initialize(c, initializer.Xavier{}, dev); err != nil {
			t.Fatal(err)
		}
		return c
	}
	pad := nd.FromSlice(dev, []bool{false, false, false, true, false, false, true, true}, 2, 4)
	t.Run("a Bool example makes a Bool input", func(t *testing.T) {
		// It was converted to an additive 0/1 float mask.
		a := init(nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{Layout: "NTC"}))
		mp, err := onnx.ExportMulti(a, []onnx.ExportInput{{Shape: []int{2, 4, 8}}, {Omitted: true}, {Omitted: true}, {Example: pad}},
			onnx.ExportOpts{OutputNames: []string{"out"}})
		if err != nil {
			t.Fatal(err)
		}
		if et := mp.GetGraph().GetInput()[1].GetType().GetTensorType().GetElemType(); et != 9 { // BOOL
			t.Fatalf("mask input of element type %d, want BOOL", et)
		}
		if _, err := onnx.ExportMulti(a, []onnx.ExportInput{{Shape: []int{2, 4, 8}}, {Omitted: true}, {Omitted: true}, {Example: pad, DType: nd.Float16}},
			onnx.ExportOpts{}); err == nil {
			t.Error("a Bool example for a float16 input was accepted")
		}
	})
	t.Run("causal attention with more queries than keys", func(t *testing.T) {
		// The first rows see no key: NaN in the network and in the graph.
		a := init(nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{Layout: "NTC", Causal: true}))
		if _, err := onnx.ExportMulti(a, []onnx.ExportInput{{Shape: []int{2, 5, 8}}, {Shape: []int{2, 3, 8}}, {Shape: []int{2, 3, 8}}},
			onnx.ExportOpts{OutputNames: []string{"out"}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an output that is two batches is not named N", func(t *testing.T) {
		c := nn.NewConcurrent(nn.NewIdentity(), nn.NewIdentity())
		c.Axis = 0
		mp, err := onnx.ExportMulti(c, []onnx.ExportInput{{Shape: []int{2, 3}}}, onnx.ExportOpts{})
		if err != nil {
			t.Fatal(err)
		}
		if d := mp.GetGraph().GetOutput()[0].GetType().GetTensorType().GetShape().GetDim()[0]; d.GetDimParam() != "" || d.GetDimValue() != 0 {
			t.Errorf("axis 0 of [2N, 3] declared as %v", d)
		}
	})
	for name, c := range map[string]struct {
		net    gluon.Component
		inputs []onnx.ExportInput
		opts   onnx.ExportOpts
		want   string
	}{
		"omitted input of a Block": {init(nn.NewDense(3, nn.DenseOpts{InUnits: 4})), []onnx.ExportInput{{Omitted: true}}, onnx.ExportOpts{}, "single-input Block"},
		"duplicate output names": {init(nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{})), []onnx.ExportInput{{Shape: []int{4, 2, 8}, BatchAxis: 1}},
			onnx.ExportOpts{OutputNames: []string{"y", "y"}}, "distinct"},
		"negative batch axis": {init(nn.NewDense(3, nn.DenseOpts{InUnits: 4})), []onnx.ExportInput{{Shape: []int{2, 4}, BatchAxis: -1}}, onnx.ExportOpts{}, "NoBatch"},
		"rank follows a free axis": {nn.NewLambda(func(x *nd.NDArray) *nd.NDArray {
			if x.Shape()[1] == 2 {
				return nd.Reshape(x, x.Shape()[0], -1)
			}
			return x
		}), []onnx.ExportInput{{Shape: []int{2, 1, 3}, FreeAxes: []int{1}}}, onnx.ExportOpts{}, "rank changes"},
		"mask without NoBatch": {init(nn.NewMultiHeadAttention(8, 2, nn.AttentionOpts{Layout: "NTC"})),
			[]onnx.ExportInput{{Shape: []int{2, 4, 8}}, {Omitted: true}, {Omitted: true}, {Omitted: true}, {Shape: []int{4, 4}}},
			onnx.ExportOpts{}, "NoBatch"},
	} {
		_, err := onnx.ExportMulti(c.net, c.inputs, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, c.want)
		}
	}
}

// TestExportFreeCeilPooling: a ceil-mode pooling of stride 3 along a free
// axis agrees with the network one size longer but not two; the export
// refuses it (it wrote a file wrong at most lengths).
func TestExportFreeCeilPooling(t *testing.T) {
	net := nn.NewSequential(nn.NewMaxPool1D(2, nn.Pool1DOpts{Stride: 3, CeilMode: true}))
	_, err := onnx.Export(net, []int{1, 1, 5}, onnx.ExportOpts{FreeAxes: []int{2}})
	if err == nil || !strings.Contains(err.Error(), "fixes that size") {
		t.Errorf("got %v, want the form's fixed size reported", err)
	}
	_, err = onnx.ExportMulti(net, []onnx.ExportInput{{Shape: []int{1, 1, 5}, FreeAxes: []int{2}}}, onnx.ExportOpts{})
	if err == nil || !strings.Contains(err.Error(), "fixes that size") {
		t.Errorf("ExportMulti: got %v, want the form's fixed size reported", err)
	}
}

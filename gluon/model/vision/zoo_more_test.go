package vision_test

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goluon/goluon/autograd"
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/model/vision"
	"github.com/goluon/goluon/gluon/optimizer"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// auxNet is a GoogLeNet or an InceptionV3.
type auxNet interface {
	vision.Model
	ForwardAux(x *nd.NDArray) []*nd.NDArray
}

// TestAuxLogitsMatchTorchvision: GoogLeNet's and Inception v3's
// auxiliary classifiers give torchvision's training-mode outputs
// (GoogLeNetOutputs' aux1 and aux2 scores, InceptionOutputs' aux_logits)
// within 1e-4 relative; in predict mode ForwardAux returns
// the main scores alone; and the checkpoints load into the models
// without auxiliary classifiers (torchvision's pretrained googlenet),
// which compute the same scores.
func TestAuxLogitsMatchTorchvision(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	for _, c := range []struct {
		name  string
		build func(aux bool) auxNet
		keys  []string
	}{
		{"googlenet", func(aux bool) auxNet {
			return vision.NewGoogLeNet(vision.InceptionOptions{Options: vision.Options{Classes: 10, Width: 8, Dropout: -1}, AuxLogits: &aux})
		}, []string{"train_aux1", "train_aux2"}},
		{"inception_v3", func(aux bool) auxNet {
			return vision.NewInceptionV3(vision.InceptionOptions{Options: vision.Options{Classes: 10, Width: 4, Dropout: -1}, AuxLogits: &aux})
		}, []string{"train_aux"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name+".safetensors")
			f, err := safetensors.ReadFile(filepath.Join("testdata", c.name+"_io.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			in, _ := f.Tensors["input"].Float32s()
			x := nd.FromSlice(dev[0], in, f.Tensors["input"].Shape...)
			net := c.build(true)
			if err := vision.LoadStateDict(gluon.CollectParams(net), path, dev); err != nil {
				t.Fatal(err)
			}
			var train, eval []*nd.NDArray
			autograd.PredictMode(func() { eval = net.ForwardAux(x) })
			autograd.TrainMode(func() { train = net.ForwardAux(x) })
			if len(eval) != 1 || len(train) != 1+len(c.keys) {
				t.Fatalf("%d outputs in predict mode, %d in training mode; want 1 and %d", len(eval), len(train), 1+len(c.keys))
			}
			for i, k := range c.keys {
				want, _ := f.Tensors[k].Float32s()
				e := relErr(train[i+1].Float32s(), want)
				t.Logf("%s: relative error %.3g", k, e)
				if e > 1e-4 {
					t.Errorf("%s: relative error %.3g", k, e)
				}
			}
			plain := c.build(false)
			params := gluon.CollectParams(plain)
			if err := vision.LoadStateDict(params, path, dev); err != nil {
				t.Fatal(err)
			}
			if len(params.Names()) >= len(gluon.CollectParams(net).Names()) {
				t.Fatal("the model without auxiliary classifiers has as many parameters")
			}
			var got []*nd.NDArray
			autograd.TrainMode(func() { got = plain.ForwardAux(x) })
			if len(got) != 1 || !slices.Equal(got[0].Float32s(), train[0].Float32s()) {
				t.Error("without auxiliary classifiers the training-mode scores differ")
			}
		})
	}
}

// TestSwinPositionIndex: SaveStateDict writes each window attention's
// relative_position_index with torchvision's values.
func TestSwinPositionIndex(t *testing.T) {
	dev := []ctx.Context{ctx.CPU(0)}
	net := zooNet(t, "swin_t")
	torchPath := filepath.Join("testdata", "swin_t.safetensors")
	if err := vision.LoadStateDict(gluon.CollectParams(net), torchPath, dev); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "swin.safetensors")
	if err := vision.SaveStateDict(gluon.CollectParams(net), path); err != nil {
		t.Fatal(err)
	}
	torch, err := safetensors.ReadFile(torchPath)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range torch.Names() {
		if filepath.Ext(k) != ".relative_position_index" {
			continue
		}
		want, err := torch.Tensors[k].Int64s()
		if err != nil {
			t.Fatal(err)
		}
		got, err := saved.Tensors[k].Int64s()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: saved %v (%v), torch %v", k, got, err, want)
		}
		n++
	}
	if n != 12 {
		t.Errorf("%d position indices, want 12", n)
	}
}

// zooNet builds the zoo's model name.
func zooNet(t *testing.T, name string) vision.Headed {
	t.Helper()
	for _, m := range zoo {
		if m.name == name {
			return m.build()
		}
	}
	t.Fatalf("no model %s in the zoo", name)
	return nil
}

// TestTrainingStepZooMore runs one SGD step of the newer models (small
// configurations, their default dropout and stochastic depth on), the
// auxiliary classifiers' losses weighted 0.3 as torchvision's references
// do: the loss is finite, every weight gets a finite gradient, not all
// zero, the running statistics move, and the step changes the head.
func TestTrainingStepZooMore(t *testing.T) {
	dev := ctx.CPU(0)
	nets := []struct {
		name  string
		size  int
		build func() vision.Model
	}{
		{"swin", 48, func() vision.Model {
			return vision.NewSwin(vision.SwinOptions{Options: vision.Options{Classes: 4, Width: 8, StochasticDepth: 0.3},
				WindowSize: 4, Heads: [4]int{1, 2, 4, 8}})
		}},
		{"regnet_y", 32, func() vision.Model {
			return vision.NewRegNet(vision.RegNetParams{Depth: 6, W0: 16, WA: 16, WM: 2, GroupWidth: 8, SERatio: 0.25}, vision.Options{Classes: 4, Width: 16})
		}},
		{"shufflenet_v2", 32, func() vision.Model {
			return vision.NewShuffleNetV2([3]int{2, 2, 2}, [5]int{8, 16, 32, 64, 64}, vision.Options{Classes: 4})
		}},
		{"mnasnet", 32, func() vision.Model { return vision.MNASNet0_5(vision.Options{Classes: 4, Width: 16}) }},
		{"googlenet", 64, func() vision.Model {
			return vision.NewGoogLeNet(vision.InceptionOptions{Options: vision.Options{Classes: 4, Width: 8}, AuxLogits: new(true)})
		}},
		{"inception_v3", 299, func() vision.Model {
			return vision.NewInceptionV3(vision.InceptionOptions{Options: vision.Options{Classes: 4, Width: 4}})
		}},
		{"efficientnet_v2_s", 32, func() vision.Model { return vision.EfficientNetV2S(vision.Options{Classes: 4, Width: 4}) }},
	}
	for _, m := range nets {
		t.Run(m.name, func(t *testing.T) {
			nd.Seed(3)
			net := m.build()
			params := gluon.CollectParams(net)
			if err := params.Initialize(initializer.Xavier{}, []ctx.Context{dev}, false); err != nil {
				t.Fatal(err)
			}
			tr, err := gluon.NewTrainer(params, optimizer.NewSGD(0.05), "local", gluon.TrainerOpts{})
			if err != nil {
				t.Fatal(err)
			}
			const batch = 4
			x := nd.RandomNormal(dev, nd.Float32, 0, 1, batch, 3, m.size, m.size)
			labels := nd.FromSlice(dev, []float32{0, 1, 2, 3}, batch)
			var l *nd.NDArray
			autograd.Record(func() {
				var outs []*nd.NDArray
				if a, ok := net.(auxNet); ok {
					outs = a.ForwardAux(x)
				} else {
					outs = []*nd.NDArray{net.Forward(x)}
				}
				l = nd.Mean(nd.SoftmaxCrossEntropy(outs[0], labels, 1))
				for _, aux := range outs[1:] {
					l = nd.Add(l, nd.MulScalar(nd.Mean(nd.SoftmaxCrossEntropy(aux, labels, 1)), 0.3))
				}
				autograd.Backward(l)
			})
			if v := l.Float64s()[0]; math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("loss %v", v)
			}
			checkGradients(t, params, dev)
			w := params.Get(net.Head() + ".weight")
			old := w.Data(dev).Float32s()
			if err := tr.Step(batch); err != nil {
				t.Fatal(err)
			}
			if slices.Equal(old, w.Data(dev).Float32s()) {
				t.Error("the step left the head's weights as they were")
			}
		})
	}
}

package nn_test

import (
	"slices"
	"testing"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/gluon/modelzoo"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

func childNames(b gluon.Block) []string {
	var out []string
	for _, c := range b.Meta().Children() {
		out = append(out, c.Meta().Name())
	}
	return out
}

func TestChildNames(t *testing.T) {
	cases := []struct {
		name string
		b    gluon.Block
		want []string
	}{
		{"LeNet", modelzoo.LeNet(), []string{"conv0", "pool0", "conv1", "pool1", "flatten0", "dense0", "dense1", "dense2"}},
		{"mixed", nn.NewSequential(
			nn.NewDense(3, nn.DenseOpts{}), nn.NewActivation("relu"), nn.NewDropout(0.1),
			nn.NewBatchNorm(nn.BatchNormOpts{}), nn.NewActivation("tanh"), nn.NewActivation("relu"),
			nn.NewGlobalAvgPool2D(), nn.NewSequential(), nn.NewConcurrent(), nn.NewSequential(),
		), []string{"dense0", "relu0", "dropout0", "batchnorm0", "tanh0", "relu1", "pool0", "sequential0", "concurrent0", "sequential1"}},
		{"concurrent", nn.NewConcurrent(
			nn.NewConv2D(2, 1, nn.Conv2DOpts{}), nn.NewConv2D(2, 3, nn.Conv2DOpts{}), nn.NewMaxPool2D(3, nn.PoolOpts{}),
		), []string{"conv0", "conv1", "pool0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := childNames(tc.b); !slices.Equal(got, tc.want) {
				t.Errorf("children %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("explicit-name-kept", func(t *testing.T) {
		d := nn.NewDense(3, nn.DenseOpts{})
		d.SetName("head")
		s := nn.NewSequential(nn.NewDense(2, nn.DenseOpts{}), d, nn.NewDense(2, nn.DenseOpts{}))
		// AddChild's documented rule gives an unnamed child the first free
		// kind+number: the third child is dense1.
		if got, want := childNames(s), []string{"dense0", "head", "dense1"}; !slices.Equal(got, want) {
			t.Errorf("children %v, want %v", got, want)
		}
		if got, want := gluon.CollectParams(s).Names(), []string{
			"dense0.weight", "dense0.bias", "head.weight", "head.bias", "dense1.weight", "dense1.bias",
		}; !slices.Equal(got, want) {
			t.Errorf("names %v, want %v", got, want)
		}
	})
	t.Run("auto-name-avoids-explicit-names", func(t *testing.T) {
		// A user-chosen name that happens to look automatic must not make
		// the automatic naming of a later sibling collide with it.
		d := nn.NewDense(3, nn.DenseOpts{})
		d.SetName("dense1")
		var s *nn.Sequential
		if err := nd.Catch(func() { s = nn.NewSequential(d, nn.NewDense(2, nn.DenseOpts{})) }); err != nil {
			t.Fatalf("adding an unnamed Dense after one named dense1: %v", err)
		}
		names := childNames(s)
		if names[0] != "dense1" || names[1] == "dense1" {
			t.Errorf("children %v: want dense1 kept and a different name for the second", names)
		}
	})
	t.Run("duplicate-name-panics", func(t *testing.T) {
		a, b := nn.NewDense(3, nn.DenseOpts{}), nn.NewDense(3, nn.DenseOpts{})
		a.SetName("fc")
		b.SetName("fc")
		s := nn.NewSequential(a)
		mustNDPanic(t, nd.ErrArgument, func() { s.Add(b) }, `"fc"`)
	})
}

func TestParamNames(t *testing.T) {
	cases := []struct {
		name string
		b    gluon.Block
		want []string
	}{
		{"LeNet", modelzoo.LeNet(), []string{
			"conv0.weight", "conv0.bias", "conv1.weight", "conv1.bias",
			"dense0.weight", "dense0.bias", "dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias",
		}},
		{"nested", nn.NewSequential(
			nn.NewSequential(nn.NewConv2D(4, 3, nn.Conv2DOpts{}), nn.NewBatchNorm(nn.BatchNormOpts{}), nn.NewActivation("relu")),
			nn.NewSequential(nn.NewConv2D(4, 3, nn.Conv2DOpts{NoBias: true})),
			nn.NewFlatten(),
			nn.NewDense(10, nn.DenseOpts{}),
		), []string{
			"sequential0.conv0.weight", "sequential0.conv0.bias",
			"sequential0.batchnorm0.gamma", "sequential0.batchnorm0.beta",
			"sequential0.batchnorm0.running_mean", "sequential0.batchnorm0.running_var",
			"sequential1.conv0.weight",
			"dense0.weight", "dense0.bias",
		}},
		{"deeply-nested", nn.NewSequential(nn.NewSequential(nn.NewSequential(nn.NewDense(2, nn.DenseOpts{NoBias: true})))),
			[]string{"sequential0.sequential0.dense0.weight"}},
		{"concurrent", nn.NewSequential(
			nn.NewConcurrent(
				nn.NewConv2D(2, 1, nn.Conv2DOpts{}),
				nn.NewSequential(nn.NewConv2D(2, 1, nn.Conv2DOpts{}), nn.NewConv2D(2, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}})),
				nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}}),
			),
			nn.NewConv2D(2, 1, nn.Conv2DOpts{NoBias: true}),
		), []string{
			"concurrent0.conv0.weight", "concurrent0.conv0.bias",
			"concurrent0.sequential0.conv0.weight", "concurrent0.sequential0.conv0.bias",
			"concurrent0.sequential0.conv1.weight", "concurrent0.sequential0.conv1.bias",
			"conv0.weight",
		}},
		{"batchnorm-options", nn.NewSequential(
			nn.NewBatchNorm(nn.BatchNormOpts{NoScale: true}), nn.NewBatchNorm(nn.BatchNormOpts{NoCenter: true}),
		), []string{
			"batchnorm0.beta", "batchnorm0.running_mean", "batchnorm0.running_var",
			"batchnorm1.gamma", "batchnorm1.running_mean", "batchnorm1.running_var",
		}},
		{"no-params", nn.NewSequential(nn.NewMaxPool2D(2, nn.PoolOpts{}), nn.NewFlatten(), nn.NewDropout(0.5), nn.NewActivation("relu")), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := gluon.CollectParams(tc.b)
			if got := d.Names(); !slices.Equal(got, tc.want) {
				t.Fatalf("names\n got %v\nwant %v", got, tc.want)
			}
			if d.Len() != len(tc.want) {
				t.Errorf("Len %d, want %d", d.Len(), len(tc.want))
			}
			for i, p := range d.List() {
				if p.Name() != tc.want[i] {
					t.Errorf("List()[%d].Name() = %q, want %q", i, p.Name(), tc.want[i])
				}
				if d.Get(tc.want[i]) != p {
					t.Errorf("Get(%q) is not List()[%d]", tc.want[i], i)
				}
			}
			if d.Get("nonexistent.weight") != nil {
				t.Error("Get of an unknown name is not nil")
			}
		})
	}
}

func TestParamNamesLeNetShapes(t *testing.T) {
	net := modelzoo.LeNet()
	params := initNet(t, net, initializer.Xavier{}, nd.Float32)
	y := forward(net, randX(cpu0, 20, 2, 1, 28, 28))
	if !slices.Equal(y.Shape(), []int{2, 10}) {
		t.Fatalf("output %v, want [2 10]", y.Shape())
	}
	want := map[string][]int{
		"conv0.weight": {6, 1, 5, 5}, "conv0.bias": {6},
		"conv1.weight": {16, 6, 3, 3}, "conv1.bias": {16},
		"dense0.weight": {120, 400}, "dense0.bias": {120},
		"dense1.weight": {84, 120}, "dense1.bias": {84},
		"dense2.weight": {10, 84}, "dense2.bias": {10},
	}
	got := shapesOf(params)
	if len(got) != len(want) {
		t.Fatalf("%d parameters, want %d", len(got), len(want))
	}
	for n, s := range want {
		if !slices.Equal(got[n], s) {
			t.Errorf("%s: %v, want %v", n, got[n], s)
		}
	}
}

func TestSelect(t *testing.T) {
	net := nn.NewSequential(
		nn.NewSequential(nn.NewConv2D(4, 3, nn.Conv2DOpts{}), nn.NewBatchNorm(nn.BatchNormOpts{})),
		nn.NewConv2D(4, 3, nn.Conv2DOpts{}),
		nn.NewDense(10, nn.DenseOpts{}),
	)
	all := gluon.CollectParams(net)
	cases := []struct {
		pattern string
		want    []string
	}{
		{".*weight", []string{"sequential0.conv0.weight", "conv0.weight", "dense0.weight"}},
		{".*bias", []string{"sequential0.conv0.bias", "conv0.bias", "dense0.bias"}},
		{`conv[0-9]+\..*`, []string{"conv0.weight", "conv0.bias"}},
		{`.*conv[0-9]+\..*`, []string{"sequential0.conv0.weight", "sequential0.conv0.bias", "conv0.weight", "conv0.bias"}},
		{`sequential0\..*`, []string{
			"sequential0.conv0.weight", "sequential0.conv0.bias",
			"sequential0.batchnorm0.gamma", "sequential0.batchnorm0.beta",
			"sequential0.batchnorm0.running_mean", "sequential0.batchnorm0.running_var"}},
		{".*running_.*", []string{"sequential0.batchnorm0.running_mean", "sequential0.batchnorm0.running_var"}},
		{".*(gamma|beta)", []string{"sequential0.batchnorm0.gamma", "sequential0.batchnorm0.beta"}},
		{"dense0.weight|conv0.bias", []string{"conv0.bias", "dense0.weight"}},
		{"nothing", nil},
	}
	for _, tc := range cases {
		t.Run(tc.pattern, func(t *testing.T) {
			sel, err := all.Select(tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Names(); !slices.Equal(got, tc.want) {
				t.Errorf("Select(%q) = %v, want %v", tc.pattern, got, tc.want)
			}
			for _, n := range sel.Names() {
				if sel.Get(n) != all.Get(n) {
					t.Errorf("%s: selected parameter is not the collected one", n)
				}
			}
		})
	}
	t.Run("bad-regexp", func(t *testing.T) {
		if _, err := all.Select("conv[0-"); err == nil {
			t.Error("no error for an invalid regular expression")
		}
	})
	t.Run("initialize-selection-only", func(t *testing.T) {
		sel, _ := all.Select(".*weight")
		if err := sel.Initialize(initializer.Xavier{}, nil, false); err == nil {
			t.Error("initialising on no contexts is not an error")
		}
		if err := sel.Initialize(initializer.Constant{Value: 3}, []ctx.Context{cpu0}, false); err != nil {
			t.Fatal(err)
		}
		for _, n := range all.Names() {
			isWeight := slices.Contains(sel.Names(), n)
			// dense0.weight and the convolutions' weights are deferred until
			// the first forward pass, so none is initialised yet; the
			// others must not be touched at all.
			if p := all.Get(n); p.Initialized() && !isWeight {
				t.Errorf("%s initialised although not selected", n)
			}
		}
		rest, err := all.Select(".*(bias|gamma|beta|running_mean|running_var)")
		if err != nil {
			t.Fatal(err)
		}
		if rest.Len()+sel.Len() != all.Len() {
			t.Fatalf("selections of %d and %d parameters do not cover all %d", rest.Len(), sel.Len(), all.Len())
		}
		if err := rest.Initialize(initializer.Constant{Value: 5}, []ctx.Context{cpu0}, false); err != nil {
			t.Fatal(err)
		}
		if err := sel.Initialize(initializer.Xavier{}, []ctx.Context{cpu0}, false); err == nil {
			t.Error("initialising twice without force is not an error")
		}
		forward(net, randX(cpu0, 21, 1, 2, 7, 7))
		if got := all.Get("conv0.bias").Data(cpu0).Float64s()[0]; got != 0 {
			t.Errorf("bias = %g, want 0 (by name)", got)
		}
		if got := all.Get("conv0.weight").Data(cpu0).Float64s()[0]; got != 3 {
			t.Errorf("selected weight = %g, want 3", got)
		}
	})
}

func TestSequentialValues(t *testing.T) {
	// Sequential must equal running its children by hand.
	c := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}, Act: "relu"})
	p := nn.NewMaxPool2D(2, nn.PoolOpts{})
	f := nn.NewFlatten()
	d := nn.NewDense(4, nn.DenseOpts{Act: "tanh"})
	s := nn.NewSequential()
	s.Add(c, p)
	s.Add(f, d)
	if got := len(s.Children()); got != 4 {
		t.Fatalf("%d children, want 4", got)
	}
	initNet(t, s, initializer.Xavier{}, nd.Float32)
	x := randX(cpu0, 22, 2, 2, 6, 6)
	y := forward(s, x)
	want := forward(d, forward(f, forward(p, forward(c, x))))
	allClose(t, "sequential", y, want, 0, 0)
	if !slices.Equal(y.Shape(), []int{2, 4}) {
		t.Errorf("shape %v", y.Shape())
	}
	t.Run("empty-is-identity", func(t *testing.T) {
		allClose(t, "identity", forward(nn.NewSequential(), x), x, 0, 0)
	})
}

func TestConcurrentValues(t *testing.T) {
	b1 := nn.NewConv2D(2, 1, nn.Conv2DOpts{})
	b2 := nn.NewConv2D(3, 3, nn.Conv2DOpts{Pad: [2]int{1, 1}})
	b3 := nn.NewMaxPool2D(3, nn.PoolOpts{Stride: [2]int{1, 1}, Pad: [2]int{1, 1}})
	c := nn.NewConcurrent(b1)
	c.Add(b2, b3)
	initNet(t, c, initializer.Xavier{}, nd.Float32)
	x := randX(cpu0, 23, 2, 4, 5, 5)
	y := forward(c, x)
	if want := []int{2, 2 + 3 + 4, 5, 5}; !slices.Equal(y.Shape(), want) {
		t.Fatalf("shape %v, want %v", y.Shape(), want)
	}
	allClose(t, "branch 0", nd.SliceAxis(y, 0, 2, 1), forward(b1, x), 0, 0)
	allClose(t, "branch 1", nd.SliceAxis(y, 2, 5, 1), forward(b2, x), 0, 0)
	allClose(t, "branch 2", nd.SliceAxis(y, 5, 9, 1), forward(b3, x), 0, 0)

	t.Run("axis-last", func(t *testing.T) {
		d1 := nn.NewDense(2, nn.DenseOpts{NoFlatten: true})
		d2 := nn.NewDense(3, nn.DenseOpts{NoFlatten: true})
		cc := nn.NewConcurrent(d1, d2)
		cc.Axis = 2
		initNet(t, cc, initializer.Xavier{}, nd.Float32)
		xx := randX(cpu0, 24, 2, 3, 4)
		yy := forward(cc, xx)
		if !slices.Equal(yy.Shape(), []int{2, 3, 5}) {
			t.Fatalf("shape %v, want [2 3 5]", yy.Shape())
		}
		allClose(t, "branch 0", nd.SliceAxis(yy, 0, 2, 2), forward(d1, xx), 0, 0)
		allClose(t, "branch 1", nd.SliceAxis(yy, 2, 5, 2), forward(d2, xx), 0, 0)
	})
	t.Run("mismatched-branches-panic", func(t *testing.T) {
		cc := nn.NewConcurrent(nn.NewConv2D(2, 1, nn.Conv2DOpts{}), nn.NewConv2D(2, 3, nn.Conv2DOpts{}))
		initNet(t, cc, initializer.Xavier{}, nd.Float32)
		mustNDPanic(t, nd.ErrShape, func() { forward(cc, randX(cpu0, 25, 1, 1, 5, 5)) }, "Concat")
	})
}

package ndtest

import (
	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/nd"
)

// gradNNCases checks Softmax, LogSoftmax, Pick, Conv2D, BiasRelu and
// Dropout, and one end-to-end chain of them.
func gradNNCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for _, op := range []struct {
		name string
		f    func(x *nd.NDArray, axis int) *nd.NDArray
	}{{"Softmax", nd.Softmax}, {"LogSoftmax", nd.LogSoftmax}} {
		for _, c := range []struct {
			name  string
			shape []int
			axis  int
		}{
			{"2-D/axis-1", []int{3, 5}, 1},
			{"2-D/axis-neg1", []int{3, 5}, -1},
			{"2-D/axis-0", []int{3, 5}, 0},
			{"3-D/axis-1", []int{2, 3, 4}, 1},
			{"3-D/axis-neg1", []int{2, 3, 4}, -1},
			{"3-D/axis-0", []int{2, 3, 4}, 0},
		} {
			cases = append(cases, gradCase{
				op: op.name, name: c.name,
				in: func() []*nd.NDArray { return gradIn(Rand(dev, 61, -3, 3, c.shape...)) },
				f:  func(in []*nd.NDArray) *nd.NDArray { return op.f(in[0], c.axis) },
			})
		}
	}
	// Large logits: the stable formulation must keep the gradient finite
	// and right.
	cases = append(cases, gradCase{
		op: "LogSoftmax", name: "2-D/large-logits",
		in: func() []*nd.NDArray { return gradIn(Rand(dev, 62, 50, 60, 3, 5)) },
		f:  func(in []*nd.NDArray) *nd.NDArray { return nd.LogSoftmax(in[0], 1) },
	})

	for _, c := range []struct {
		name   string
		shape  []int
		labels []float64
		lshape []int
		axis   int
	}{
		{"axis-1", []int{4, 5}, []float64{0, 4, 2, 2}, []int{4}, 1},
		{"axis-neg1", []int{4, 5}, []float64{3, 1, 0, 4}, []int{4}, -1},
		{"axis-0", []int{4, 5}, []float64{0, 3, 1, 1, 2}, []int{5}, 0},
		{"3-D/axis-1", []int{2, 3, 4}, []float64{0, 1, 2, 1, 2, 2, 0, 0}, []int{2, 4}, 1},
		// Indices outside [0, n) are clipped to the nearest end.
		{"axis-1/out-of-range-clipped", []int{4, 5}, []float64{-1, 7, 2, 5}, []int{4}, 1},
	} {
		cases = append(cases, gradCase{
			op: "Pick", name: c.name, noGrad: []int{1},
			in: func() []*nd.NDArray {
				return gradIn(gradSigned(dev, 63, c.shape...), gradLabels(dev, c.labels, c.lshape...))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Pick(in[0], in[1], c.axis) },
		})
	}
	// Pick after LogSoftmax: the cross-entropy pattern.
	cases = append(cases, gradCase{
		op: "Pick", name: "after-log-softmax", noGrad: []int{1},
		in: func() []*nd.NDArray {
			return gradIn(gradSigned(dev, 64, 4, 5), gradLabels(dev, []float64{1, 0, 4, 3}, 4))
		},
		f: func(in []*nd.NDArray) *nd.NDArray { return nd.Pick(nd.LogSoftmax(in[0], 1), in[1], 1) },
	})

	cases = append(cases, gradConvCases(dev)...)

	// BiasRelu: inputs at least 0.3 away from the kink once the bias
	// (within ±0.2) is added; long runs (NCHW), short runs (a dense
	// layer's [N, C]) and another axis.
	for i, c := range []struct {
		name  string
		shape []int
		axis  int
	}{
		{"4-D/axis-1", []int{2, 3, 3, 4}, 1},
		{"2-D/axis-1", []int{4, 5}, 1},
		{"3-D/axis-2", []int{2, 3, 4}, 2},
		{"3-D/axis-0", []int{3, 2, 9}, 0},
	} {
		ch := c.shape[(c.axis+len(c.shape))%len(c.shape)]
		seed := 80 + 2*uint64(i)
		cases = append(cases, gradCase{
			op: "BiasRelu", name: c.name,
			in: func() []*nd.NDArray {
				return gradIn(gradNonzero(dev, seed, c.shape...), Rand(dev, seed+1, -0.2, 0.2, ch))
			},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.BiasRelu(in[0], in[1], c.axis) },
		})
	}

	dropout := func(p float64) func(in []*nd.NDArray) *nd.NDArray {
		return func(in []*nd.NDArray) *nd.NDArray { return nd.Dropout(in[0], p) }
	}
	x := func() []*nd.NDArray { return gradIn(gradSigned(dev, 65, 4, 5)) }
	cases = append(cases,
		// CheckGrad reseeds the generators before every evaluation, so the
		// mask is the same in the recorded and the perturbed runs.
		gradCase{op: "Dropout", name: "train/p-0.5", in: x, f: dropout(0.5), tol: GradTol{Train: true}},
		gradCase{op: "Dropout", name: "train/p-0.2", in: x, f: dropout(0.2), tol: GradTol{Train: true}},
		gradCase{op: "Dropout", name: "train/p-0", in: x, f: dropout(0), tol: GradTol{Train: true}},
		gradCase{op: "Dropout", name: "predict/p-0.5", in: x, f: dropout(0.5)},
		gradCase{op: "Dropout", name: "train/then-tanh", in: x, tol: GradTol{Train: true},
			f: func(in []*nd.NDArray) *nd.NDArray { return nd.Tanh(nd.Dropout(in[0], 0.5)) }},
	)

	// Conv2D → Relu → Flatten → FullyConnected → LogSoftmax → Pick → Mean:
	// a classifier's loss, differentiated with respect to the input and
	// every parameter.
	cases = append(cases, gradCase{
		op: "Composite", name: "conv-relu-fc-logsoftmax-pick-mean", noGrad: []int{5},
		in: func() []*nd.NDArray {
			return gradIn(
				gradSigned(dev, 71, 2, 1, 5, 5), // x
				gradSigned(dev, 72, 2, 1, 3, 3), // conv weight
				gradSigned(dev, 73, 2),          // conv bias
				gradSigned(dev, 74, 3, 18),      // dense weight
				gradSigned(dev, 75, 3),          // dense bias
				gradLabels(dev, []float64{2, 0}, 2),
			)
		},
		f: func(in []*nd.NDArray) *nd.NDArray {
			h := nd.Relu(nd.Conv2D(in[0], in[1], in[2], nd.ConvOpts{}))
			z := nd.FullyConnected(nd.Flatten(h), in[3], in[4])
			return nd.Mean(nd.Pick(nd.LogSoftmax(z, 1), in[5], 1))
		},
	})
	return cases
}

// gradConvCases checks Conv2D with every option: padding, stride,
// dilation, groups (depthwise included), 1x1 and non-square kernels, with
// and without bias; gradients for x, w and b.
func gradConvCases(dev ctx.Context) []gradCase {
	var cases []gradCase
	for i, c := range []struct {
		name    string
		x, w    []int
		o       nd.ConvOpts
		noBias  bool
		onlyXOf bool // differentiate x only
	}{
		{name: "plain", x: []int{2, 2, 4, 4}, w: []int{3, 2, 3, 3}},
		{name: "plain/no-bias", x: []int{2, 2, 4, 4}, w: []int{3, 2, 3, 3}, noBias: true},
		{name: "pad-1", x: []int{1, 2, 4, 4}, w: []int{2, 2, 3, 3}, o: nd.ConvOpts{Pad: [2]int{1, 1}}},
		{name: "stride-2", x: []int{1, 2, 5, 5}, w: []int{2, 2, 3, 3}, o: nd.ConvOpts{Stride: [2]int{2, 2}}},
		{name: "stride-2/pad-1", x: []int{1, 2, 5, 5}, w: []int{2, 2, 3, 3},
			o: nd.ConvOpts{Stride: [2]int{2, 2}, Pad: [2]int{1, 1}}},
		// Stride larger than the kernel: some inputs reach no output and
		// must get a zero gradient.
		{name: "stride-3/kernel-2", x: []int{1, 1, 7, 7}, w: []int{2, 1, 2, 2}, o: nd.ConvOpts{Stride: [2]int{3, 3}}},
		{name: "dilation-2", x: []int{1, 2, 5, 5}, w: []int{2, 2, 2, 2}, o: nd.ConvOpts{Dilate: [2]int{2, 2}}},
		{name: "dilation-2/pad-2", x: []int{1, 2, 4, 4}, w: []int{2, 2, 3, 3},
			o: nd.ConvOpts{Dilate: [2]int{2, 2}, Pad: [2]int{2, 2}}},
		{name: "groups-2", x: []int{1, 4, 4, 4}, w: []int{4, 2, 2, 2}, o: nd.ConvOpts{Groups: 2}},
		{name: "groups-2/no-bias", x: []int{1, 4, 4, 4}, w: []int{2, 2, 2, 2}, o: nd.ConvOpts{Groups: 2}, noBias: true},
		{name: "depthwise", x: []int{1, 3, 4, 4}, w: []int{3, 1, 3, 3}, o: nd.ConvOpts{Groups: 3, Pad: [2]int{1, 1}}},
		{name: "depthwise/multiplier-2", x: []int{1, 3, 4, 4}, w: []int{6, 1, 3, 3}, o: nd.ConvOpts{Groups: 3}},
		{name: "1x1", x: []int{2, 3, 3, 3}, w: []int{4, 3, 1, 1}},
		{name: "1x1/no-bias", x: []int{2, 3, 3, 3}, w: []int{4, 3, 1, 1}, noBias: true},
		{name: "non-square-kernel", x: []int{1, 2, 4, 5}, w: []int{2, 2, 2, 3}},
		{name: "non-square-everything", x: []int{1, 2, 5, 6}, w: []int{2, 2, 2, 3},
			o: nd.ConvOpts{Stride: [2]int{1, 2}, Pad: [2]int{1, 0}, Dilate: [2]int{2, 1}}},
		{name: "plain/x-only", x: []int{2, 2, 4, 4}, w: []int{3, 2, 3, 3}, onlyXOf: true},
	} {
		seed := 80 + 3*uint64(i)
		gc := gradCase{op: "Conv2D", name: c.name}
		if c.noBias {
			gc.in = func() []*nd.NDArray { return gradIn(gradSigned(dev, seed, c.x...), gradSigned(dev, seed+1, c.w...)) }
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2D(in[0], in[1], nil, c.o) }
		} else {
			gc.in = func() []*nd.NDArray {
				return gradIn(gradSigned(dev, seed, c.x...), gradSigned(dev, seed+1, c.w...), gradSigned(dev, seed+2, c.w[0]))
			}
			gc.f = func(in []*nd.NDArray) *nd.NDArray { return nd.Conv2D(in[0], in[1], in[2], c.o) }
		}
		if c.onlyXOf {
			gc.noGrad = []int{1, 2}
		}
		cases = append(cases, gc)
	}
	return cases
}

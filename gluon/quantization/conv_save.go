package quantization

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goluon/goluon/gluon/safetensors"
)

// tensors implements qlayer for Conv2D: the int8 weights in nn.Conv2D's
// layout, their scales, the bias and the input quantization.
func (c *Conv2D) tensors(p string, extra map[string]safetensors.Tensor) {
	extra[p+weightName] = int8Tensor(c.q, c.wshape()...)
	extra[p+scaleName] = safetensors.FromFloat32([]int{len(c.scales)}, c.scales)
	if c.bias != nil {
		extra[p+biasName] = safetensors.FromFloat32([]int{c.channels}, c.bias)
	}
	inputTensors(p, c.in, extra)
}

// wshape is the shape of c's weights, [channels, in/groups, kh, kw].
func (c *Conv2D) wshape() []int { return []int{c.channels, c.inC / c.groups, c.kh, c.kw} }

// read implements qlayer for Conv2D: the tensors must fit c's geometry
// and bias.
func (c *Conv2D) read(f *safetensors.File, p string) ([]string, func(), error) {
	shape := c.wshape()
	w, ok := f.Tensors[p+weightName]
	if !ok {
		return nil, nil, fmt.Errorf("no int8 weights %s%s", p, weightName)
	}
	if w.DType != "I8" || !slices.Equal(w.Shape, shape) || len(w.Data) != len(c.q) {
		return nil, nil, fmt.Errorf("%s%s is %s %v, want I8 %v", p, weightName, w.DType, w.Shape, shape)
	}
	scales, err := f32(f, p+scaleName, -1, c.channels)
	if err != nil {
		return nil, nil, err
	}
	var bias []float32
	if c.bias != nil {
		if bias, err = f32(f, p+biasName, c.channels, c.channels); err != nil {
			return nil, nil, err
		}
	} else if _, ok := f.Tensors[p+biasName]; ok {
		return nil, nil, fmt.Errorf("%s%s: the layer has no bias", p, biasName)
	}
	in, err := readInput(f, p)
	if err != nil {
		return nil, nil, err
	}
	g := convGeom{channels: c.channels, inC: c.inC, kh: c.kh, kw: c.kw, stride: c.stride, pad: c.pad, dilate: c.dilate, groups: c.groups}
	st, err := newConv2D(g, in, int8s(w.Data), scales, bias, c.actName)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", strings.TrimSuffix(p, "."), err)
	}
	names := []string{p + weightName, p + scaleName, p + biasName, p + inScaleName, p + inZeroName}
	return names, func() { c.in, c.q, c.scales, c.bias, c.packed = st.in, st.q, st.scales, st.bias, st.packed }, nil
}

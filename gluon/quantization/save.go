package quantization

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/safetensors"
)

// The names of a quantized layer's tensors in a file, after its path.
const (
	weightName = "weight"       // I8, [units, in]
	scaleName  = "weight_scale" // F32, [1] or [units]
	biasName   = "bias"         // F32, [units], when the layer has a bias
	// A static layer's input quantization (NewDenseStatic, Conv2D).
	inScaleName = "input_scale"      // F32, [1]
	inZeroName  = "input_zero_point" // I32, [1]
)

// qlayer is a quantized layer Save and Load keep: Dense or Conv2D.
type qlayer interface {
	gluon.Component
	// tensors adds the layer's tensors, named after prefix p, to extra.
	tensors(p string, extra map[string]safetensors.Tensor)
	// read checks the layer's tensors in f and returns the names it
	// takes and the function that installs them.
	read(f *safetensors.File, p string) (names []string, install func(), err error)
}

// layers returns the quantized layers of net by path prefix ("dense0.",
// "" for net itself), each once (the first path that reaches it).
func layers(net gluon.Component) (prefixes []string, ls []qlayer) {
	seen := map[qlayer]bool{}
	var walk func(c gluon.Component, prefix string)
	walk = func(c gluon.Component, prefix string) {
		if l, ok := c.(qlayer); ok {
			if !seen[l] {
				seen[l] = true
				prefixes, ls = append(prefixes, prefix), append(ls, l)
			}
			return
		}
		for _, ch := range c.Meta().Children() {
			walk(ch, prefix+ch.Meta().Name()+".")
		}
	}
	walk(net, "")
	return prefixes, ls
}

// Save writes net's state to path in the safetensors format (replacing
// the file atomically): its float parameters as gluon.SaveParameters
// writes them, and for each quantized layer (Dense, Conv2D) at path p the
// tensors p.weight (I8: units × in, or Conv2D's [channels, in/groups, kh,
// kw]), p.weight_scale (F32, one or one per output) and p.bias (F32, when
// it has one), and for a static layer (NewDenseStatic, Conv2D) its input
// quantization, p.input_scale (F32 [1]) and p.input_zero_point (I32 [1]).
func Save(net gluon.Component, path string) error {
	prefixes, ls := layers(net)
	extra := map[string]safetensors.Tensor{}
	for i, l := range ls {
		l.tensors(prefixes[i], extra)
	}
	if err := gluon.CollectParams(net).SaveWith(path, extra); err != nil {
		return fmt.Errorf("quantization.Save: %v", err)
	}
	return nil
}

// int8Tensor is w as an I8 tensor of the given shape.
func int8Tensor(w []int8, shape ...int) safetensors.Tensor {
	q := make([]byte, len(w))
	for j, v := range w {
		q[j] = byte(v)
	}
	return safetensors.Tensor{DType: "I8", Shape: shape, Data: q}
}

// inputTensors adds a static layer's input quantization to extra.
func inputTensors(p string, in QParams, extra map[string]safetensors.Tensor) {
	extra[p+inScaleName] = safetensors.FromFloat32([]int{1}, []float32{in.Scale})
	z := make([]byte, 4)
	binary.LittleEndian.PutUint32(z, uint32(in.Zero))
	extra[p+inZeroName] = safetensors.Tensor{DType: "I32", Shape: []int{1}, Data: z}
}

func (d *Dense) tensors(p string, extra map[string]safetensors.Tensor) {
	extra[p+weightName] = int8Tensor(d.q, d.units, d.in)
	extra[p+scaleName] = safetensors.FromFloat32([]int{len(d.scales)}, d.scales)
	if d.bias != nil {
		extra[p+biasName] = safetensors.FromFloat32([]int{d.units}, d.bias)
	}
	if d.fixed != nil {
		inputTensors(p, *d.fixed, extra)
	}
}

// Load reads a file Save wrote into net, quantized the same way as the
// network saved (QuantizeDynamic with the same options; Prepare, a batch
// of any data and Convert, or QuantizeStatic, for a static one: the file
// replaces what calibration chose): each quantized layer takes its int8
// weights, scales and bias from the file (a static one its input
// quantization too), the float parameters are loaded
// as gluon.LoadParameters loads them onto devs (cpu(0) when none are
// given). Everything is checked before anything changes: a missing
// tensor, a shape or dtype that does not fit, a tensor nothing takes is
// an error and leaves net as it was. Load must not run while net is
// being called.
func Load(net gluon.Component, path string, devs ...ctx.Context) error {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return fmt.Errorf("quantization.Load: %v", err)
	}
	prefixes, ls := layers(net)
	installs := make([]func(), len(ls))
	ours := map[string]bool{}
	for i, l := range ls {
		names, install, err := l.read(f, prefixes[i])
		if err != nil {
			return fmt.Errorf("quantization.Load %s: %v", path, err)
		}
		installs[i] = install
		for _, n := range names {
			ours[n] = true
		}
	}
	params := gluon.CollectParams(net)
	if params.Len() > 0 {
		if len(devs) == 0 {
			devs = []ctx.Context{ctx.CPU(0)}
		}
		if err := params.Load(path, devs, gluon.LoadOpts{Skip: func(n string) bool { return ours[n] }}); err != nil {
			return fmt.Errorf("quantization.Load: %v", err)
		}
	} else {
		var extra []string
		for _, n := range f.Names() {
			if !ours[n] {
				extra = append(extra, n)
			}
		}
		if len(extra) > 0 {
			return fmt.Errorf("quantization.Load %s: the file has values for unknown parameters %s", path, strings.Join(extra, ", "))
		}
	}
	for _, install := range installs {
		install()
	}
	return nil
}

// read implements qlayer for Dense.
func (d *Dense) read(f *safetensors.File, p string) ([]string, func(), error) {
	st, err := readLayer(f, p, d)
	if err != nil {
		return nil, nil, err
	}
	names := []string{p + weightName, p + scaleName, p + biasName}
	var fixed *QParams
	if d.fixed != nil {
		in, err := readInput(f, p)
		if err != nil {
			return nil, nil, err
		}
		fixed = &in
		names = append(names, p+inScaleName, p+inZeroName)
	}
	return names, func() {
		d.q, d.scales, d.bias, d.packed = st.q, st.scales, st.bias, st.packed
		if fixed != nil {
			d.fixed = fixed
		}
	}, nil
}

// readInput reads and checks a static layer's input quantization.
func readInput(f *safetensors.File, p string) (QParams, error) {
	s, err := f32(f, p+inScaleName, 1, 1)
	if err != nil {
		return QParams{}, err
	}
	t, ok := f.Tensors[p+inZeroName]
	if !ok {
		return QParams{}, fmt.Errorf("no tensor %s%s", p, inZeroName)
	}
	z, err := t.Int32s()
	if err != nil || t.DType != "I32" || len(z) != 1 {
		return QParams{}, fmt.Errorf("%s%s is %s %v, want I32 [1]", p, inZeroName, t.DType, t.Shape)
	}
	in := QParams{Scale: s[0], Zero: z[0]}
	if err := checkInput(in); err != nil {
		return QParams{}, fmt.Errorf("%s: %v", strings.TrimSuffix(p, "."), err)
	}
	return in, nil
}

// readLayer reads and checks the tensors of the quantized layer d at
// prefix p.
func readLayer(f *safetensors.File, p string, d *Dense) (*Dense, error) {
	w, ok := f.Tensors[p+weightName]
	if !ok {
		return nil, fmt.Errorf("no int8 weights %s%s", p, weightName)
	}
	if w.DType != "I8" || !slices.Equal(w.Shape, []int{d.units, d.in}) || len(w.Data) != d.units*d.in {
		return nil, fmt.Errorf("%s%s is %s %v, want I8 [%d %d]", p, weightName, w.DType, w.Shape, d.units, d.in)
	}
	q := int8s(w.Data)
	scales, err := f32(f, p+scaleName, -1, d.units)
	if err != nil {
		return nil, err
	}
	var bias []float32
	if d.bias != nil {
		if bias, err = f32(f, p+biasName, d.units, d.units); err != nil {
			return nil, err
		}
	} else if _, ok := f.Tensors[p+biasName]; ok {
		return nil, fmt.Errorf("%s%s: the layer has no bias", p, biasName)
	}
	st, err := newDense(d.units, d.in, q, scales, bias, d.actName, d.noFlatten, d.reduceRange)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", strings.TrimSuffix(p, "."), err)
	}
	return st, nil
}

// f32 reads the F32 vector name of n values (n < 0: 1 or alt).
func f32(f *safetensors.File, name string, n, alt int) ([]float32, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("no tensor %s", name)
	}
	size := 0
	if len(t.Shape) == 1 {
		size = t.Shape[0]
	}
	okSize := size == n || (n < 0 && (size == 1 || size == alt))
	if t.DType != "F32" || !okSize || len(t.Data) != 4*size {
		return nil, fmt.Errorf("%s is %s %v, want F32 [%d]", name, t.DType, t.Shape, max(n, alt))
	}
	v := make([]float32, size)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// int8s returns bytes as signed values.
func int8s(b []byte) []int8 {
	q := make([]int8, len(b))
	for i, v := range b {
		q[i] = int8(v)
	}
	return q
}

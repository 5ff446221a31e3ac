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
)

// layers returns the quantized layers of net by path prefix ("dense0.",
// "" for net itself), each once (the first path that reaches it).
func layers(net gluon.Component) (prefixes []string, ds []*Dense) {
	seen := map[*Dense]bool{}
	var walk func(c gluon.Component, prefix string)
	walk = func(c gluon.Component, prefix string) {
		if d, ok := c.(*Dense); ok {
			if !seen[d] {
				seen[d] = true
				prefixes, ds = append(prefixes, prefix), append(ds, d)
			}
			return
		}
		for _, ch := range c.Meta().Children() {
			walk(ch, prefix+ch.Meta().Name()+".")
		}
	}
	walk(net, "")
	return prefixes, ds
}

// Save writes net's state to path in the safetensors format (replacing
// the file atomically): its float parameters as gluon.SaveParameters
// writes them, and for each quantized Dense at path p the tensors
// p.weight (I8, units × in), p.weight_scale (F32, one or one per unit) and
// p.bias (F32, when it has one).
func Save(net gluon.Component, path string) error {
	prefixes, ds := layers(net)
	extra := map[string]safetensors.Tensor{}
	for i, d := range ds {
		p := prefixes[i]
		q := make([]byte, len(d.q))
		for j, v := range d.q {
			q[j] = byte(v)
		}
		extra[p+weightName] = safetensors.Tensor{DType: "I8", Shape: []int{d.units, d.in}, Data: q}
		extra[p+scaleName] = safetensors.FromFloat32([]int{len(d.scales)}, d.scales)
		if d.bias != nil {
			extra[p+biasName] = safetensors.FromFloat32([]int{d.units}, d.bias)
		}
	}
	if err := gluon.CollectParams(net).SaveWith(path, extra); err != nil {
		return fmt.Errorf("quantization.Save: %v", err)
	}
	return nil
}

// Load reads a file Save wrote into net, quantized (QuantizeDynamic) the
// same way as the network saved: each quantized Dense takes its int8
// weights, scales and bias from the file, the float parameters are loaded
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
	prefixes, ds := layers(net)
	type state struct {
		q            []int8
		scales, bias []float32
	}
	states := make([]state, len(ds))
	ours := map[string]bool{}
	for i, d := range ds {
		p := prefixes[i]
		st, err := readLayer(f, p, d)
		if err != nil {
			return fmt.Errorf("quantization.Load %s: %v", path, err)
		}
		states[i] = state{st.q, st.scales, st.bias}
		for _, n := range []string{weightName, scaleName, biasName} {
			ours[p+n] = true
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
	for i, d := range ds {
		fresh, err := newDense(d.units, d.in, states[i].q, states[i].scales, states[i].bias, d.actName, d.noFlatten, d.reduceRange)
		if err != nil { // checked by readLayer
			return fmt.Errorf("quantization.Load %s: %s: %v", path, prefixes[i], err)
		}
		d.q, d.scales, d.bias, d.packed = fresh.q, fresh.scales, fresh.bias, fresh.packed
	}
	return nil
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
	q := make([]int8, len(w.Data))
	for i, b := range w.Data {
		q[i] = int8(b)
	}
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

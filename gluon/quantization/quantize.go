package quantization

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
)

// Opts configures QuantizeDynamic and NewDense. The zero value is
// PyTorch's quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8) on
// x86: weights per tensor, activations to 0..127.
type Opts struct {
	// PerChannel gives each output unit's weights a scale of their own
	// (torch's per_channel_dynamic_qconfig) instead of one per layer
	// (default_dynamic_qconfig): more accurate when rows differ in range.
	PerChannel bool
	// FullRange quantizes activations to 0..255 instead of 0..127. PyTorch
	// reduces the range on x86 (FBGEMM, oneDNN) so that AVX2's int16 pair
	// sums cannot saturate; nd/cpu's kernels are exact either way (on
	// AVX2 full-range activations take a kernel half as fast), so this
	// buys one bit of activation precision at the price of differing
	// from PyTorch's x86 results.
	FullRange bool
	// Skip, when set, leaves the Dense layers at the paths it returns true
	// for ("0", "encoder.dense1": the names gluon.CollectParams prefixes
	// parameters with, without the dot) in float32.
	Skip func(path string) bool
	// IgnoreHeld leaves in float32, instead of failing, the Dense layers
	// whose parent also keeps them in a field (see QuantizeDynamic).
	IgnoreHeld bool
}

// QuantizeDynamic replaces, in place, every nn.Dense of net's block tree
// with its quantized form (Dense; NewDense's rules), and returns the paths
// of the layers it replaced. It is PyTorch's
// torch.ao.quantization.quantize_dynamic(net, {nn.Linear},
// dtype=torch.qint8, inplace=True) and the quantized FullyConnected of
// MXNet's quantize_net: weights to int8 once, activations to uint8 on
// every call, int32 products, float32 outputs. The network is then for
// inference: its quantized layers panic inside autograd.Record, and
// Save/Load keep their int8 state. Other layers (convolutions, the
// recurrent layers of gluon/rnn) stay float32.
//
// A layer is replaced through its parent's children (ReplaceChild), which
// is what containers (nn.Sequential, ...) run. A parent that also keeps
// the layer in a struct field of its own most likely calls it through
// that field, and would go on running the float layer: such layers are an
// error naming them (set Opts.IgnoreHeld to leave them float32, or
// Opts.Skip to choose). Everything is checked before anything changes: on
// an error net is as it was. A layer shared by several parents (tied
// weights) becomes one quantized layer shared alike. net itself cannot be
// a Dense (use NewDense).
func QuantizeDynamic(net gluon.Component, o Opts) ([]string, error) {
	if net == nil {
		return nil, errors.New("quantization.QuantizeDynamic: nil network")
	}
	if _, ok := net.(*nn.Dense); ok {
		return nil, errors.New("quantization.QuantizeDynamic: the network is a Dense itself; use NewDense for it")
	}
	type site struct {
		parent     *gluon.BlockMeta
		name, path string
		dense      *nn.Dense
	}
	var sites []site
	var held []string
	var walk func(c gluon.Component, prefix string)
	walk = func(c gluon.Component, prefix string) {
		for _, ch := range c.Meta().Children() {
			path := prefix + ch.Meta().Name()
			d, ok := ch.(*nn.Dense)
			if !ok {
				walk(ch, path+".")
				continue
			}
			if o.Skip != nil && o.Skip(path) {
				continue
			}
			if field := holds(c, d); field != "" {
				if !o.IgnoreHeld {
					held = append(held, fmt.Sprintf("%s (field %s of %T)", path, field, c))
				}
				continue
			}
			sites = append(sites, site{c.Meta(), ch.Meta().Name(), path, d})
		}
	}
	walk(net, "")
	if len(held) > 0 {
		return nil, fmt.Errorf("quantization.QuantizeDynamic: %s: the parent keeps the layer in a field and would go on calling the float one; set Opts.IgnoreHeld to leave such layers float32", strings.Join(held, ", "))
	}
	made := map[*nn.Dense]*Dense{}
	for _, s := range sites {
		if made[s.dense] != nil {
			continue
		}
		q, err := NewDense(s.dense, o)
		if err != nil {
			return nil, err
		}
		made[s.dense] = q
	}
	paths := make([]string, len(sites))
	for i, s := range sites {
		s.parent.ReplaceChild(s.name, made[s.dense])
		paths[i] = s.path
	}
	return paths, nil
}

// holds returns the name of a field of parent (a struct, through one
// pointer) that holds d: directly, as an interface, in a slice, array or
// map value, or in a struct field of those; "" if none. The embedded
// gluon.BlockMeta, which holds every child, does not count.
func holds(parent gluon.Component, d *nn.Dense) string {
	v := reflect.ValueOf(parent)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	target := reflect.ValueOf(d).Pointer()
	meta := reflect.TypeFor[gluon.BlockMeta]()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type == meta {
			continue
		}
		if found(v.Field(i), target, 4) {
			return f.Name
		}
	}
	return ""
}

// found reports whether v holds the pointer target, looking depth levels
// into interfaces, slices, arrays, maps and structs (not through other
// pointers: those are other blocks, with their own children).
func found(v reflect.Value, target uintptr, depth int) bool {
	if depth == 0 {
		return false
	}
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil() && v.Pointer() == target
	case reflect.Interface:
		return !v.IsNil() && found(v.Elem(), target, depth-1)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if found(v.Index(i), target, depth-1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if found(it.Value(), target, depth-1) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if found(v.Field(i), target, depth-1) {
				return true
			}
		}
	}
	return false
}

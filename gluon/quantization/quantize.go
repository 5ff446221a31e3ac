package quantization

import (
	"errors"
	"fmt"

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
// is what containers (nn.Sequential, ...) run, and the float layer
// delegates its Forward to the quantized one (nn.Dense.Delegate), so that
// parents that call it through a field of their own (transformer layers,
// BERT) run int8 too. Everything is checked before anything
// changes: on an error net is as it was. A layer shared by several
// parents (tied weights) becomes one quantized layer shared alike. net
// itself cannot be a Dense (use NewDense).
func QuantizeDynamic(net gluon.Component, o Opts) ([]string, error) {
	if net == nil {
		return nil, errors.New("quantization.QuantizeDynamic: nil network")
	}
	if _, ok := denseOf(net); ok {
		return nil, errors.New("quantization.QuantizeDynamic: the network is a Dense itself; use NewDense for it")
	}
	type site struct {
		parent     *gluon.BlockMeta
		name, path string
		dense      *nn.Dense
	}
	var sites []site
	skipped := map[*nn.Dense]string{} // a shared layer skipped at one of its paths
	var walk func(c gluon.Component, prefix string)
	walk = func(c gluon.Component, prefix string) {
		for _, ch := range c.Meta().Children() {
			path := prefix + ch.Meta().Name()
			d, ok := denseOf(ch) // a hybridized Dense (gluon.Hybridize) too: the child is replaced whole
			if !ok {
				walk(ch, path+".")
				continue
			}
			if o.Skip != nil && o.Skip(path) {
				skipped[d] = path
				continue
			}
			sites = append(sites, site{c.Meta(), ch.Meta().Name(), path, d})
		}
	}
	walk(net, "")
	for _, s := range sites {
		if at, ok := skipped[s.dense]; ok {
			return nil, fmt.Errorf("quantization.QuantizeDynamic: the Dense at %s is also at %s, which Opts.Skip skips: a shared layer is quantized at all its paths or none", s.path, at)
		}
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
		s.dense.Delegate(made[s.dense])
		paths[i] = s.path
	}
	return paths, nil
}

// denseOf returns the nn.Dense c is, or wraps (a gluon.Hybridize of one).
func denseOf(c gluon.Component) (*nn.Dense, bool) {
	if h, ok := c.(*gluon.HybridBlock); ok {
		c = h.Unwrap()
	}
	d, ok := c.(*nn.Dense)
	return d, ok
}

package quantization

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/nn"
	"github.com/goluon/goluon/nd"
)

// StaticOpts configures Prepare, QuantizeStatic, NewConv2D and
// NewDenseStatic. The zero value is PyTorch 1.13's static quantization on
// x86 with a MinMaxObserver for activations: weights symmetric per output
// channel, activations calibrated to 0..127 (reduce_range).
type StaticOpts struct {
	// PerTensor gives each layer's weights one scale (torch's
	// default_weight_observer) instead of one per output channel
	// (default_per_channel_weight_observer, per_channel_symmetric).
	PerTensor bool
	// FullRange maps the calibrated activation range to 0..255 instead
	// of 0..127 (torch's x86 qconfigs reduce the range; its onednn one
	// does not).
	FullRange bool
	// Histogram calibrates with a histogram of each layer's inputs and
	// the range search of torch's HistogramObserver (its x86 default),
	// which drops outlying bins while that lowers the L2 error of the
	// quantized histogram, instead of their whole range (MinMaxObserver).
	// The search is torch's; the histogram is not bit-identical to torch
	// 1.13's, which bins over the range truncated to integers.
	Histogram bool
	// NoDense leaves the nn.Dense layers float32: only the convolutions
	// are quantized (QuantizeDynamic can take the Dense layers then).
	NoDense bool
	// Skip, when set, leaves the layers at the paths it returns true for
	// ("features.0", "layer1.0.conv1": gluon.CollectParams's prefixes
	// without the dot) in float32.
	Skip func(path string) bool
}

// MinMaxQParams returns the quantization PyTorch's MinMaxObserver (quint8,
// per_tensor_affine) chooses for activations observed in [lo, hi]: the
// range widened to hold 0, scale = float32(hi − lo)/float32(qmax − qmin)
// rounded once in float32, at least 2⁻²³, and zero point qmin −
// roundEven(lo/scale) (the quotient in float32) clamped to [qmin, qmax];
// [qmin, qmax] is [0, 127] with reduceRange, else [0, 255]. lo > hi, a
// bound that is not finite or a range too wide for float32 is an error.
func MinMaxQParams(lo, hi float32, reduceRange bool) (QParams, error) {
	if !(lo <= hi) || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
		return QParams{}, fmt.Errorf("quantization: cannot quantize the range [%v, %v]", lo, hi)
	}
	qmax := int32(255)
	if reduceRange {
		qmax = 127
	}
	lo, hi = min(lo, 0), max(hi, 0)
	d := hi - lo
	if math.IsInf(float64(d), 0) {
		return QParams{}, fmt.Errorf("quantization: the range [%v, %v] is too wide for float32", lo, hi)
	}
	scale := max(d/float32(qmax), eps)
	z := -int32(math.RoundToEven(float64(lo / scale)))
	return QParams{Scale: scale, Zero: min(max(z, 0), qmax)}, nil
}

// NewDenseStatic returns the statically quantized form of d: its weights
// as NewConv2D quantizes a convolution's (per output unit unless
// o.PerTensor), its inputs quantized with the fixed parameters in
// instead of each call's range. Such a layer does not check its inputs
// for NaN (quantized to 0) and clamps values beyond the calibrated range.
// d itself is not changed.
func NewDenseStatic(d *nn.Dense, in QParams, o StaticOpts) (*Dense, error) {
	if err := checkInput(in); err != nil {
		return nil, fmt.Errorf("quantization.NewDenseStatic: %v", err)
	}
	qd, err := NewDense(d, Opts{PerChannel: !o.PerTensor, FullRange: o.FullRange})
	if err != nil {
		return nil, err
	}
	qd.fixed = &in
	return qd, nil
}

// Input returns the fixed quantization of a static layer's inputs
// (NewDenseStatic), and false for a dynamic layer, whose inputs are
// quantized with each call's range.
func (d *Dense) Input() (QParams, bool) {
	if d.fixed == nil {
		return QParams{}, false
	}
	return *d.fixed, true
}

// Calibration is a network prepared for static quantization (Prepare):
// each of its convolutions and Dense layers is watched by an observer that
// records the range of its inputs and computes the float layer. Run a few
// representative batches through the network (Forward, in predict mode:
// BatchNorm must use its running statistics), then Convert. The observers
// may be called from several goroutines at once.
type Calibration struct {
	o     StaticOpts
	sites []calSite
	obs   []*observer // one per layer, in order of first appearance
	done  bool
}

// calSite is a place of the block tree a layer is a child at: orig is
// the child there (the layer, or a wrapper of it).
type calSite struct {
	parent     *gluon.BlockMeta
	name, path string
	orig       gluon.Component
	obs        *observer
}

// observer watches one layer during calibration (torch's MinMaxObserver
// on the layer's input): it records the range of every input and returns
// the float layer's output, computed by a twin that shares the layer's
// parameters (the layer itself delegates to the observer).
type observer struct {
	gluon.BlockMeta
	layer  gluon.Component // the float *nn.Conv2D or *nn.Dense
	twin   gluon.Block
	path   string
	hist   bool // keep a histogram (StaticOpts.Histogram)
	mu     sync.Mutex
	lo, hi float32
	calls  int  // calls with inputs, NaN and infinities aside
	bad    bool // an input held a NaN or an infinity
	h      histogram
}

// Meta returns the watched layer's: during calibration the network's
// parameters stay listed under their names (gluon.CollectParams,
// SaveParameters), as torch's prepared model keeps them.
func (o *observer) Meta() *gluon.BlockMeta { return o.layer.Meta() }

// Forward records x's range (and histogram) and computes the float
// layer.
func (o *observer) Forward(x *nd.NDArray) *nd.NDArray {
	if x.Size() > 0 {
		var l, h float32
		var xs []float32
		nan := false
		if o.hist {
			xs = x.AsType(nd.Float32).Float32s()
			var ok bool
			l, h, ok = nd.MinMaxF32(xs)
			nan = !ok
		} else {
			lo, hi := nd.Min(x), nd.Max(x)
			lv, hv := lo.Scalar(), hi.Scalar()
			lo.Release()
			hi.Release()
			l, h, nan = float32(lv), float32(hv), lv != lv || hv != hv
		}
		bad := nan || math.IsInf(float64(l), 0) || math.IsInf(float64(h), 0)
		o.mu.Lock()
		o.bad = o.bad || bad
		if !bad {
			if o.calls == 0 {
				o.lo, o.hi = l, h
			} else {
				o.lo, o.hi = min(o.lo, l), max(o.hi, h)
			}
			if o.hist {
				o.h.add(xs, l, h)
			}
			o.calls++
		}
		o.mu.Unlock()
	}
	return o.twin.Forward(x)
}

// EagerOnly makes gluon.Hybridize run a network being calibrated eagerly:
// the observers read their inputs' ranges on every call.
func (o *observer) EagerOnly() string { return "calibration observes every input" }

// Range is a layer's calibration record: the least and greatest input
// value it saw over Calls calls (with inputs, all finite).
type Range struct {
	Path   string
	Lo, Hi float32
	Calls  int
}

// Prepare makes net ready for static quantization, in place, and returns
// the Calibration that Convert completes: each nn.Conv2D and (unless
// o.NoDense) nn.Dense of net's block tree not skipped is watched by an
// observer (torch.ao.quantization.prepare with a MinMaxObserver per
// layer's input; MXNet's quantize_net calib_mode="naive"). The network
// computes as before meanwhile. Layers wrapped by gluon.Hybridize are
// found through the wrapper (which the quantized layer replaces: it runs
// eagerly anyway). A layer shared by several parents is watched once; a
// Skip of any of its paths leaves it float32 at all of them. net itself
// cannot be a layer; a network with nothing to quantize is an error.
func Prepare(net gluon.Component, o StaticOpts) (*Calibration, error) {
	if net == nil {
		return nil, errors.New("quantization.Prepare: nil network")
	}
	switch unwrap(net).(type) {
	case *nn.Conv2D, *nn.Dense:
		return nil, errors.New("quantization.Prepare: the network is a single layer; use NewConv2D or NewDenseStatic for it")
	}
	c := &Calibration{o: o}
	made := map[gluon.Component]*observer{}
	skipped := map[gluon.Component]bool{}
	var walk func(p gluon.Component, prefix string)
	walk = func(p gluon.Component, prefix string) {
		for _, ch := range p.Meta().Children() {
			path := prefix + ch.Meta().Name()
			layer := unwrap(ch)
			var twin gluon.Block
			switch l := layer.(type) {
			case *nn.Conv2D:
				t := nn.NewConv2D(l.Channels, 1, l.Options())
				t.Weight, t.Bias = l.Weight, l.Bias
				twin = t
			case *nn.Dense:
				if o.NoDense {
					continue
				}
				t := nn.NewDense(l.Units, l.Options())
				t.Weight, t.Bias = l.Weight, l.Bias
				twin = t
			default:
				walk(ch, path+".")
				continue
			}
			if o.Skip != nil && o.Skip(path) {
				skipped[layer] = true
				continue
			}
			ob := made[layer]
			if ob == nil {
				ob = &observer{BlockMeta: gluon.NewBlockMeta("observer"), layer: layer, twin: twin, path: path, hist: o.Histogram}
				made[layer] = ob
			}
			c.sites = append(c.sites, calSite{p.Meta(), ch.Meta().Name(), path, ch, ob})
		}
	}
	walk(net, "")
	// A layer is one: skipped at one of its places, it stays float at all.
	c.sites = slices.DeleteFunc(c.sites, func(s calSite) bool { return skipped[s.obs.layer] })
	for _, s := range c.sites {
		if !slices.Contains(c.obs, s.obs) {
			c.obs = append(c.obs, s.obs)
		}
	}
	if len(c.sites) == 0 {
		return nil, errors.New("quantization.Prepare: the network has no Conv2D or Dense layer to quantize")
	}
	for _, s := range c.sites {
		s.parent.ReplaceChild(s.name, s.obs)
		delegate(s.obs.layer, s.obs)
	}
	return c, nil
}

// unwrap returns the block a wrapper holds (gluon.Hybridize's
// HybridBlock: Unwrap), or c.
func unwrap(c gluon.Component) gluon.Component {
	for {
		u, ok := c.(interface{ Unwrap() gluon.Component })
		if !ok {
			return c
		}
		c = u.Unwrap()
	}
}

// delegate makes the float layer l compute b instead (nil: itself).
func delegate(l gluon.Component, b gluon.Block) {
	switch l := l.(type) {
	case *nn.Conv2D:
		l.Delegate(b)
	case *nn.Dense:
		l.Delegate(b)
	}
}

// Ranges returns what each watched layer has seen so far, in network
// order.
func (c *Calibration) Ranges() []Range {
	out := make([]Range, len(c.obs))
	for i, o := range c.obs {
		o.mu.Lock()
		out[i] = Range{Path: o.path, Lo: o.lo, Hi: o.hi, Calls: o.calls}
		o.mu.Unlock()
	}
	return out
}

// Cancel restores the float network Prepare changed, without quantizing
// it.
func (c *Calibration) Cancel() {
	if c.done {
		return
	}
	c.done = true
	for _, s := range c.sites {
		s.parent.ReplaceChild(s.name, s.orig)
		delegate(s.obs.layer, nil)
	}
}

// Convert replaces every watched layer with its int8 form (NewConv2D,
// NewDenseStatic) for the inputs' quantization MinMaxQParams chooses from
// the range it saw, or the histogram's searched range
// (torch.ao.quantization.convert), and returns the paths of the layers
// replaced, in network order. The float layers delegate to the quantized
// ones, so parents that call them through fields of their own run int8
// too. A layer that saw no input, or a NaN or an infinity, is an error
// listing them all; everything is checked before anything changes, and
// on an error the network stays prepared (Cancel restores it). Neither
// Convert nor Cancel may run while the network is being called.
func (c *Calibration) Convert() ([]string, error) {
	if c.done {
		return nil, errors.New("quantization.Convert: the calibration was converted or cancelled already")
	}
	var unseen []string
	q := map[*observer]gluon.Block{}
	for _, o := range c.obs {
		if o.calls == 0 || o.bad {
			unseen = append(unseen, o.path)
			continue
		}
		in, err := MinMaxQParams(o.lo, o.hi, !c.o.FullRange)
		if o.hist {
			in, err = histQParams(&o.h, !c.o.FullRange)
		}
		if err != nil {
			return nil, fmt.Errorf("quantization: %s: %v", o.path, err)
		}
		switch l := o.layer.(type) {
		case *nn.Conv2D:
			qc, err := NewConv2D(l, in, c.o)
			if err != nil {
				return nil, err
			}
			q[o] = qc
		case *nn.Dense:
			qd, err := NewDenseStatic(l, in, c.o)
			if err != nil {
				return nil, err
			}
			q[o] = qd
		}
	}
	if len(unseen) > 0 {
		sort.Strings(unseen)
		return nil, fmt.Errorf("quantization.Convert: no calibration data (or NaN or infinite inputs) for %s: run batches through the network first, or Skip these layers", strings.Join(unseen, ", "))
	}
	paths := make([]string, len(c.sites))
	for i, s := range c.sites {
		s.parent.ReplaceChild(s.name, q[s.obs])
		delegate(s.obs.layer, q[s.obs])
		paths[i] = s.path
	}
	c.done = true
	return paths, nil
}

// QuantizeStatic is Prepare, the batches through net (one Forward each,
// in predict mode, not recorded) and Convert: post-training static quantization of net's
// convolutions and Dense layers in place, MXNet's quantize_net with
// calib_mode="naive" and PyTorch's prepare, calibrate, convert. It
// returns the paths of the layers replaced. On an error net is as it
// was. For a network of several inputs (a gluon.MultiBlock), or batches
// that come from a loader, use Prepare and Convert.
func QuantizeStatic(net gluon.Block, o StaticOpts, batches ...*nd.NDArray) (paths []string, err error) {
	if len(batches) == 0 {
		return nil, errors.New("quantization.QuantizeStatic: no calibration batches")
	}
	c, err := Prepare(net, o)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Cancel()
		}
	}()
	for _, x := range batches {
		if x == nil {
			return nil, errors.New("quantization.QuantizeStatic: a nil calibration batch")
		}
		// Predict mode (BatchNorm's running statistics), nothing recorded.
		run := func() { x.Session().PauseMode(false, func() { net.Forward(x).Release() }) }
		if err := nd.Catch(run); err != nil {
			return nil, fmt.Errorf("quantization.QuantizeStatic: calibration: %v", err)
		}
	}
	return c.Convert()
}

// Package gluon is Goluon's high-level training API, after MXNet Gluon:
// Blocks with Parameters (one replica per context), SplitAndLoad to shard
// a batch over contexts, and a Trainer that sums the per-device gradients
// through a kvstore and applies an optimizer.
//
// Layers live in gluon/nn, initializers in gluon/initializer, losses in
// gluon/loss, optimizers and learning-rate schedules in gluon/optimizer,
// metrics in gluon/metric.
//
// Errors follow nd's rule: programmer mistakes (a parameter used on a
// context it was not initialised on, shapes that do not fit) panic with an
// *nd.Error naming the operation, e.g. "gluon.Parameter.Data: context
// mismatch: ..."; conditions a program must handle (an indivisible batch,
// stale gradients, I/O) are returned as errors.
package gluon

import (
	"fmt"
	"regexp"
	"strconv"
	"sync/atomic"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon/initializer"
	"github.com/goluon/goluon/nd"
)

func errorf(format string, args ...any) error { return fmt.Errorf("gluon: "+format, args...) }

// Component is what every layer has: a Meta holding its name, its
// parameters and its children. CollectParams, AddChild and the save and
// load functions work on Components, so they take Blocks and MultiBlocks
// alike.
type Component interface {
	Meta() *BlockMeta
}

// Block is a piece of a network: it maps an input to an output on the
// input's context and owns parameters and child blocks through its Meta.
type Block interface {
	Component
	Forward(x *nd.NDArray) *nd.NDArray
}

// MultiBlock is a layer with several inputs and outputs, the way Gluon's
// forward takes *args: a recurrent layer takes its input and begin state
// and returns its output and final state, attention takes queries, keys,
// values and a mask. A nil input stands for an optional one left out (no
// mask); each layer documents its inputs and outputs. A MultiBlock may
// also implement Block for its common single-array use. Call runs either
// kind.
type MultiBlock interface {
	Component
	ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray
}

// Call runs c on inputs: a MultiBlock's ForwardMulti, or a Block's Forward
// on its one input. Any other combination panics with an *nd.Error of kind
// ErrArgument naming the component.
func Call(c Component, inputs ...*nd.NDArray) []*nd.NDArray {
	if m, ok := c.(MultiBlock); ok {
		return m.ForwardMulti(inputs...)
	}
	b, ok := c.(Block)
	if !ok {
		nd.Panicf("gluon.Call", nd.ErrArgument, "%s (%T) has no Forward or ForwardMulti", c.Meta().Name(), c)
	}
	if len(inputs) != 1 || inputs[0] == nil {
		nd.Panicf("gluon.Call", nd.ErrArgument, "%s is a single-input Block; got %d inputs (a nil one counts as none)", c.Meta().Name(), len(inputs)-nilCount(inputs))
	}
	return []*nd.NDArray{b.Forward(inputs[0])}
}

func nilCount(xs []*nd.NDArray) int {
	n := 0
	for _, x := range xs {
		if x == nil {
			n++
		}
	}
	return n
}

// BlockMeta holds what every block has: a name, a kind (used to name
// children: "conv" → conv0, conv1), its own parameters and its children.
// Embed it in a custom block and register parameters and children in the
// block's constructor.
type BlockMeta struct {
	name     string
	kind     string
	params   []*Parameter
	children []Component
	replaced []*Parameter // taken out by ReplaceParam: named while derived
}

// structureGen counts the changes to any block's parameters or children
// (AddParam, AddChild, ReplaceChild): a hybridized block collects its
// network's parameters again when it has moved, as Gluon drops a cached
// graph when a child is set.
var structureGen atomic.Uint64

// NewBlockMeta returns the metadata for a block of the given kind.
func NewBlockMeta(kind string) BlockMeta { return BlockMeta{kind: kind} }

// Meta returns m itself; it makes any struct embedding BlockMeta satisfy
// the Meta half of Block.
func (m *BlockMeta) Meta() *BlockMeta { return m }

// Name returns the block's name within its parent ("" for a root).
func (m *BlockMeta) Name() string { return m.name }

// SetName names the block; a parent only names children that have none.
func (m *BlockMeta) SetName(name string) { m.name = name }

// Kind returns the block's kind ("dense", "conv", ...).
func (m *BlockMeta) Kind() string { return m.kind }

// AddParam registers a parameter under its local name ("weight").
func (m *BlockMeta) AddParam(p *Parameter) *Parameter {
	m.params = append(m.params, p)
	p.owners.Add(1)
	structureGen.Add(1)
	return p
}

// Changed notes that the block computes otherwise than before outside its
// parameters and children (a delegate set, nn.Dense.Delegate), so that
// hybridized networks holding it walk it again.
func (m *BlockMeta) Changed() { structureGen.Add(1) }

// Params returns the block's own parameters (not its children's).
func (m *BlockMeta) Params() []*Parameter { return m.params }

// AddChild registers a child (a Block or a MultiBlock). A child without a
// name gets its kind and the first free number: conv0, conv1, dense0. It
// returns the child.
func (m *BlockMeta) AddChild(b Component) Component {
	cm := b.Meta()
	taken := map[string]bool{}
	for _, c := range m.children {
		taken[c.Meta().name] = true
	}
	name := cm.name
	if name == "" { // the first free kind+number: conv0, conv1, ...
		for n := 0; ; n++ {
			if name = cm.kind + strconv.Itoa(n); !taken[name] {
				break
			}
		}
	}
	if taken[name] {
		nd.Panicf("gluon.AddChild", nd.ErrArgument, "a child named %q already exists", name)
	}
	cm.name = name
	m.children = append(m.children, b)
	structureGen.Add(1)
	return b
}

// ReplaceChild puts b in the place of the child named name, under that
// name (a new classifier for transfer learning, say), and returns b. It
// panics with ErrArgument when there is no such child.
func (m *BlockMeta) ReplaceChild(name string, b Component) Component {
	for i, c := range m.children {
		if c.Meta().name == name {
			b.Meta().name = name
			m.children[i] = b
			structureGen.Add(1)
			return b
		}
	}
	nd.Panicf("gluon.ReplaceChild", nd.ErrArgument, "no child named %q", name)
	return nil
}

// Children returns the children in order.
func (m *BlockMeta) Children() []Component { return m.children }

// ParamDict is an ordered set of parameters keyed by full name.
type ParamDict struct {
	names  []string
	params map[string]*Parameter
}

// CollectParams returns every parameter of b and its descendants, named by
// their path: "conv0.weight", "stage1.conv0.bias". It also gives each
// parameter that full name. A parameter registered in several blocks
// (weights tied between an embedding and an output layer) is listed once,
// under the first path that reaches it, as PyTorch's named_parameters and
// Gluon's shared parameters are.
func CollectParams(b Component) *ParamDict {
	d := &ParamDict{params: map[string]*Parameter{}}
	seen := map[*Parameter]bool{}
	var walk func(b Component, prefix string)
	walk = func(b Component, prefix string) {
		m := b.Meta()
		for _, p := range m.params {
			if seen[p] { // shared (tied weights): listed once, under its first name
				continue
			}
			seen[p] = true
			full := prefix + p.local
			p.setName(full)
			d.add(full, p)
		}
		for _, p := range m.replaced { // derived weights: named, not listed
			if !seen[p] && p.Derivation() != nil {
				p.setName(prefix + p.local)
			}
		}
		for _, c := range m.children {
			walk(c, prefix+c.Meta().name+".")
		}
	}
	walk(b, "")
	return d
}

func (d *ParamDict) add(name string, p *Parameter) {
	if _, dup := d.params[name]; dup {
		nd.Panicf("gluon.CollectParams", nd.ErrArgument, "two parameters are named %q", name)
	}
	d.names = append(d.names, name)
	d.params[name] = p
}

// Names returns the full names in registration order.
func (d *ParamDict) Names() []string { return append([]string(nil), d.names...) }

// Len returns the number of parameters.
func (d *ParamDict) Len() int { return len(d.names) }

// Get returns the parameter with the given full name, or nil.
func (d *ParamDict) Get(name string) *Parameter { return d.params[name] }

// List returns the parameters in order.
func (d *ParamDict) List() []*Parameter {
	out := make([]*Parameter, len(d.names))
	for i, n := range d.names {
		out[i] = d.params[n]
	}
	return out
}

// Select returns the parameters whose full names match the regular
// expression from their start, as Gluon's collect_params(select) does with
// re.match: ".*weight" selects every weight, "conv0" everything of conv0.
func (d *ParamDict) Select(pattern string) (*ParamDict, error) {
	re, err := regexp.Compile("^(?:" + pattern + ")")
	if err != nil {
		return nil, errorf("select %q: %v", pattern, err)
	}
	out := &ParamDict{params: map[string]*Parameter{}}
	for _, n := range d.names {
		if re.MatchString(n) {
			out.add(n, d.params[n])
		}
	}
	return out, nil
}

// Initialize initialises every parameter on devs (deferring those whose
// shape is not known yet). Parameters with their own Init use it; the rest
// use init by name (weights init, biases zero, gamma one, ...).
func (d *ParamDict) Initialize(init initializer.Initializer, devs []ctx.Context, force bool) error {
	for _, p := range d.List() {
		if err := p.Initialize(init, devs, force); err != nil {
			return err
		}
	}
	return nil
}

// ZeroGrad zeroes every gradient.
func (d *ParamDict) ZeroGrad() {
	for _, p := range d.List() {
		p.ZeroGrad()
	}
}

// SetGradReq sets the gradient request of every parameter.
func (d *ParamDict) SetGradReq(req nd.GradReq) {
	for _, p := range d.List() {
		p.SetGradReq(req)
	}
}

// ResetContext moves every parameter to devs.
func (d *ParamDict) ResetContext(devs []ctx.Context) error {
	for _, p := range d.List() {
		if err := p.ResetContext(devs); err != nil {
			return err
		}
	}
	return nil
}

// Initialize collects b's parameters and initialises them on devs.
func Initialize(b Component, init initializer.Initializer, devs ...ctx.Context) error {
	return CollectParams(b).Initialize(init, devs, false)
}

// Package onnx imports ONNX models as Goluon blocks and exports Goluon
// networks as ONNX models. Load reads a model file and returns a Model, a
// gluon Block (or MultiBlock, for several inputs and outputs) whose
// floating-point initializers are Parameters, so that it can be fine-tuned
// like any network. Save (Export) writes a network's inference form, opset
// 17, from the blocks' gluon.ONNXExporter forms: the nn layers and
// containers and the model zoo's ResNets, VGGs and MobileNetV2 have one,
// and so do gluon/data/audio's front-ends (Spectrogram, MelSpectrogram,
// AmplitudeToDB, MFCC: STFT and MatMul nodes) and its FFT Block (nd/fft's
// transforms as DFT nodes).
//
//	m, err := onnx.Load("resnet18.onnx")
//	y := m.Forward(x)
//	err = onnx.Save("mine.onnx", net, []int{1, 3, 224, 224}, onnx.ExportOpts{})
//
// The graph runs op by op on the input's context, recorded by autograd
// like any other ops. The supported ops are listed by Ops; a model with
// others fails at Load with an error that lists every one of them.
// BatchNormalization runs in its inference form (the model's running
// statistics), as ONNX defines it. DFT (opset 17's axis attribute and
// opset 20's axis input), STFT and MelWeightMatrix run through nd/fft,
// complex values a trailing axis of 2 in both; an inverse one-sided DFT
// is refused at Load.
package onnx

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/onnx/internal/onnxpb"
	"github.com/goluon/goluon/nd"
)

// Model is an imported ONNX graph.
type Model struct {
	gluon.BlockMeta
	// Inputs and Outputs are the graph's input and output names, in order.
	Inputs, Outputs []string
	// Opset is the default domain's opset version the model was saved with.
	Opset int

	nodes  []*onnxpb.NodeProto
	params map[string]*gluon.Parameter // float initializers
	consts map[string]*nd.NDArray      // other initializers, on cpu(0)

	mu    sync.Mutex
	onDev map[ctx.Context]map[string]*nd.NDArray // consts copied to a context
}

// Load reads an ONNX model file, with the tensors it keeps in external
// data files beside it (large models); its parameters are created on devs
// (default cpu(0)). A corrupt file, an unsupported op (every one is
// listed) or an unsupported attribute is an error.
func Load(path string, devs ...ctx.Context) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("onnx: %s is not an ONNX model: %w", path, err)
	}
	if err := loadExternal(mp.GetGraph(), filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	m, err := fromProto(&mp, devs)
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	return m, nil
}

func fromProto(mp *onnxpb.ModelProto, devs []ctx.Context) (*Model, error) {
	if len(devs) == 0 {
		devs = []ctx.Context{ctx.CPU(0)}
	}
	g := mp.GetGraph()
	if g == nil {
		return nil, fmt.Errorf("the model has no graph")
	}
	m := &Model{BlockMeta: gluon.NewBlockMeta("onnx"), nodes: g.GetNode(),
		params: map[string]*gluon.Parameter{}, consts: map[string]*nd.NDArray{}, onDev: map[ctx.Context]map[string]*nd.NDArray{}}
	for _, o := range mp.GetOpsetImport() {
		if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
			m.Opset = int(o.GetVersion())
		}
	}
	// Every op must be known before anything else is done.
	var missing []string
	seen := map[string]bool{}
	for _, n := range m.nodes {
		key := n.GetOpType()
		if d := n.GetDomain(); d != "" && d != "ai.onnx" {
			key = d + "." + key
		} else if ops[key] != nil {
			continue
		}
		if !seen[key] {
			seen[key] = true
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%d unsupported op types: %s (supported: %s)", len(missing), strings.Join(missing, ", "), strings.Join(Ops(), ", "))
	}
	for _, n := range m.nodes {
		if err := checkAttrs(n, m.Opset); err != nil {
			return nil, err
		}
	}
	if err := checkDataflow(g); err != nil {
		return nil, err
	}
	// BatchNormalization's running mean and variance (inputs 3 and 4) are
	// statistics, not weights: they load as parameters that take no
	// gradient, as nn.BatchNorm's running statistics.
	stats := map[string]bool{}
	for _, n := range m.nodes {
		if n.GetOpType() == "BatchNormalization" {
			for _, in := range n.GetInput()[min(3, len(n.GetInput())):] {
				stats[in] = true
			}
		}
	}
	inits := map[string]bool{}
	for _, t := range g.GetInitializer() {
		inits[t.GetName()] = true
		a, err := constArray(t, ctx.CPU(0))
		if err != nil {
			return nil, err
		}
		if a.DType().IsFloat() && a.NDim() > 0 {
			// Floating-point initializers of every width are weights: a
			// float16 or float64 model fine-tunes like a float32 one.
			p := gluon.NewParameter(t.GetName(), a.Shape()...)
			p.SetDType(a.DType())
			p.Init = valuesInit(a.Float64s())
			a.Release()
			if stats[t.GetName()] {
				p.Statistic = true
				p.SetGradReq(nd.GradNull)
			}
			m.AddParam(p)
			m.params[t.GetName()] = p
			continue
		}
		m.consts[t.GetName()] = a
	}
	if err := gluon.CollectParams(m).Initialize(nil, devs, false); err != nil {
		return nil, err
	}
	for _, in := range g.GetInput() {
		if !inits[in.GetName()] {
			m.Inputs = append(m.Inputs, in.GetName())
		}
	}
	for _, out := range g.GetOutput() {
		m.Outputs = append(m.Outputs, out.GetName())
	}
	if len(m.Outputs) == 0 {
		return nil, fmt.Errorf("the graph has no outputs")
	}
	return m, nil
}

// valuesInit initialises a parameter with an initializer's values (in
// float64, which holds every narrower float exactly).
type valuesInit []float64

// InitWeight copies the values.
func (v valuesInit) InitWeight(_ []int, data []float64, _ *rand.Rand) {
	copy(data, v)
}

// Forward runs a single-input, single-output model.
func (m *Model) Forward(x *nd.NDArray) *nd.NDArray {
	if len(m.Inputs) != 1 || len(m.Outputs) != 1 {
		nd.Panicf("onnx.Model", nd.ErrArgument, "the model has %d inputs and %d outputs: use ForwardMulti", len(m.Inputs), len(m.Outputs))
	}
	return m.ForwardMulti(x)[0]
}

// ForwardMulti runs the graph on one array per input (Inputs' order) and
// returns its outputs (Outputs' order), on the first input's context.
func (m *Model) ForwardMulti(inputs ...*nd.NDArray) []*nd.NDArray {
	const op = "onnx.Model"
	if len(inputs) != len(m.Inputs) {
		nd.Panicf(op, nd.ErrArgument, "%d inputs, the model takes %d (%s)", len(inputs), len(m.Inputs), strings.Join(m.Inputs, ", "))
	}
	for i, x := range inputs {
		if x == nil {
			nd.Panicf(op, nd.ErrArgument, "input %d (%s) is nil", i, m.Inputs[i])
		}
	}
	dev := ctx.CPU(0)
	if len(inputs) > 0 {
		dev = inputs[0].Context()
	}
	env := map[string]*nd.NDArray{"": nil}
	for name, p := range m.params {
		env[name] = p.Data(dev)
	}
	for name, c := range m.constsOn(dev) {
		env[name] = c
	}
	for i, name := range m.Inputs {
		env[name] = inputs[i]
	}
	for _, n := range m.nodes {
		in := make([]*nd.NDArray, len(n.GetInput()))
		for i, name := range n.GetInput() {
			v, ok := env[name]
			if !ok {
				nd.Panicf(op, nd.ErrArgument, "node %q (%s) reads %q, which no earlier node or input produces", n.GetName(), n.GetOpType(), name)
			}
			in[i] = v
		}
		out := runNode(ops[n.GetOpType()], &node{n: n, a: attrsOf(n), dev: dev, opset: m.Opset}, in)
		for i, name := range n.GetOutput() {
			if i < len(out) && name != "" {
				env[name] = out[i]
			}
		}
	}
	outs := make([]*nd.NDArray, len(m.Outputs))
	for i, name := range m.Outputs {
		v, ok := env[name]
		if !ok || v == nil {
			nd.Panicf(op, nd.ErrArgument, "graph output %q was not produced (its node gave fewer outputs)", name)
		}
		outs[i] = v
	}
	return outs
}

// runNode runs one node. A Go runtime error inside an op (an input it
// indexes that a malformed model lacks, a shape no check foresaw) is
// raised as an *nd.Error naming the node instead of crashing the program.
func runNode(f opFunc, n *node, in []*nd.NDArray) []*nd.NDArray {
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				nd.Panicf("onnx."+n.n.GetOpType(), nd.ErrArgument, "node %q: malformed inputs or attributes for %d inputs of shapes %v (%v)",
					n.n.GetName(), len(in), shapesOf(in), re)
			}
			panic(r)
		}
	}()
	return f(n, in)
}

// shapesOf lists the inputs' shapes (nil for an omitted one).
func shapesOf(in []*nd.NDArray) [][]int {
	out := make([][]int, len(in))
	for i, a := range in {
		if a != nil {
			out[i] = a.Shape()
		}
	}
	return out
}

// checkDataflow reports initializers that share a name, and values read
// before anything defines them: every node input must be a graph input,
// an initializer or an earlier node's output (ONNX graphs are in
// topological order), and so must every graph output.
func checkDataflow(g *onnxpb.GraphProto) error {
	defined := map[string]bool{"": true} // an empty name is an omitted optional input
	seen := map[string]bool{}
	for _, in := range g.GetInput() {
		defined[in.GetName()] = true
	}
	for _, t := range g.GetInitializer() {
		if t.GetName() == "" {
			return fmt.Errorf("an initializer has no name")
		}
		if seen[t.GetName()] {
			return fmt.Errorf("two initializers are named %q", t.GetName())
		}
		seen[t.GetName()] = true
		defined[t.GetName()] = true
	}
	for _, n := range g.GetNode() {
		for _, name := range n.GetInput() {
			if !defined[name] {
				return fmt.Errorf("node %q (%s) reads %q, which no graph input, initializer or earlier node defines", n.GetName(), n.GetOpType(), name)
			}
		}
		for _, name := range n.GetOutput() {
			defined[name] = true
		}
	}
	for _, out := range g.GetOutput() {
		if !defined[out.GetName()] {
			return fmt.Errorf("graph output %q is not produced by any node, input or initializer", out.GetName())
		}
	}
	return nil
}

// constsOn returns the constant initializers on dev (copied once).
func (m *Model) constsOn(dev ctx.Context) map[string]*nd.NDArray {
	if dev == ctx.CPU(0) {
		return m.consts
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.onDev[dev]; ok {
		return c
	}
	c := map[string]*nd.NDArray{}
	for name, a := range m.consts {
		c[name] = nd.PersistentSession().CopyOf(a, dev)
	}
	m.onDev[dev] = c
	return c
}

// Ops lists the supported op types.
func Ops() []string {
	var out []string
	for k := range ops {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

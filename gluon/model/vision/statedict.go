package vision

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
	"github.com/goluon/goluon/gluon/pytorch"
	"github.com/goluon/goluon/gluon/safetensors"
	"github.com/goluon/goluon/nd"
)

// batchesTracked is the suffix of PyTorch's BatchNorm counter buffer.
const batchesTracked = ".num_batches_tracked"

// The suffixes of a Swin window attention's bias table and of
// torchvision's buffer of its indices, which the model computes.
const (
	biasTable     = ".relative_position_bias_table"
	positionIndex = ".relative_position_index"
)

// skipped says whether a state dict's tensor is a buffer that no
// parameter takes: a BatchNorm's counter, or a Swin window attention's
// relative position index (computed from the window size).
func skipped(name string) bool {
	return strings.HasSuffix(name, batchesTracked) || strings.HasSuffix(name, positionIndex)
}

// windowSide is the side of the windows of a Swin bias table of rows
// rows: (2·side−1)² = rows.
func windowSide(rows int) int { return (int(math.Round(math.Sqrt(float64(rows)))) + 1) / 2 }

// LoadStateDict loads a PyTorch state dict into params: a file that
// torch.save wrote (a state dict, a whole module, or a checkpoint holding
// one; see package gluon/pytorch) or one saved as safetensors (see
// tools/torch2safetensors.py), onto devs for parameters not
// yet initialised. Every parameter must be in the file, with its shape,
// and every tensor of the file must be a parameter, except BatchNorm's
// num_batches_tracked counters and Swin's relative_position_index
// buffers (computed from the window size), which are skipped, and the
// auxiliary classifiers of GoogLeNet and Inception v3 checkpoints when
// the model has none (InceptionOptions.AuxLogits); on an error nothing
// changes. Files of DataParallel models ("module." names), ViTs saved by
// torchvision 0.13 or earlier (mlp.linear_1, mlp.linear_2) and the
// DenseNet checkpoints torchvision publishes (norm.1, conv.1, ... in the
// dense layers) load too.
func LoadStateDict(params *gluon.ParamDict, path string, devs []ctx.Context) error {
	// The auxiliary classifiers of a GoogLeNet or Inception v3
	// checkpoint are skipped when the model has none, as torchvision's
	// builders drop them after loading.
	has := map[string]bool{}
	for _, name := range params.Names() {
		for _, p := range auxPrefixes {
			has[p] = has[p] || strings.HasPrefix(name, p)
		}
	}
	return params.Load(path, devs, gluon.LoadOpts{
		Skip: func(name string) bool {
			for _, p := range auxPrefixes {
				if strings.HasPrefix(name, p) && !has[p] {
					return true
				}
			}
			return skipped(name)
		},
		Rename: torchName,
	})
}

// auxPrefixes name the auxiliary classifiers of torchvision's GoogLeNet
// (aux1, aux2) and Inception3 (AuxLogits).
var auxPrefixes = []string{"aux1.", "aux2.", "AuxLogits."}

// denseLayerName matches the names of the dense layers' parameters in
// torchvision's DenseNet checkpoints, which are from before "." was
// barred from module names: denselayer1.norm.1.weight for today's
// denselayer1.norm1.weight.
var denseLayerName = regexp.MustCompile(`^(.*denselayer\d+\.(?:norm|relu|conv))\.([12]\.(?:weight|bias|running_mean|running_var))$`)

// torchName maps names of older or wrapped torchvision state dicts to
// today's: DataParallel's "module." prefix goes, the ViT MLP blocks'
// mlp.linear_1 and mlp.linear_2 (torchvision 0.13 and before) become
// mlp.0 and mlp.3, as torchvision's MLPBlock loads them, and the DenseNet
// checkpoints' norm.1, conv.1, norm.2 and conv.2 become norm1, conv1,
// norm2 and conv2, as torchvision's densenet loader renames them.
func torchName(name string) string {
	name = strings.TrimPrefix(name, "module.")
	name = denseLayerName.ReplaceAllString(name, "$1$2")
	name = strings.Replace(name, ".mlp.linear_1.", ".mlp.0.", 1)
	return strings.Replace(name, ".mlp.linear_2.", ".mlp.3.", 1)
}

// SaveStateDict writes params as a PyTorch state dict, with a
// num_batches_tracked counter (0) beside every BatchNorm's running
// statistics and the relative_position_index of every Swin window
// attention, so that torch's load_state_dict(strict=True) accepts it. A
// path ending in ".pt", ".pth", ".bin", ".ckpt" or ".pth.tar" (any case;
// pytorch.IsTorchName) gets PyTorch's own format (torch.load reads it;
// see package gluon/pytorch), any other the safetensors form
// (`tools/torch2safetensors.py --to-torch` converts it). The file is
// replaced atomically.
func SaveStateDict(params *gluon.ParamDict, path string) error {
	if pytorch.IsTorchName(path) {
		return saveTorch(params, path)
	}
	extra := map[string]safetensors.Tensor{}
	for _, name := range params.Names() {
		if bn, ok := strings.CutSuffix(name, ".running_mean"); ok {
			extra[bn+batchesTracked] = safetensors.FromInt64(nil, []int64{0})
		}
		if attn, ok := strings.CutSuffix(name, biasTable); ok {
			idx := relativePositionIndex(windowSide(params.Get(name).Shape()[0]))
			extra[attn+positionIndex] = safetensors.FromInt64([]int{len(idx)}, idx)
		}
	}
	return params.SaveWith(path, extra)
}

// saveTorch writes params and the buffers (BatchNorm counters, Swin
// position indices) with torch.save's format, in the parameters' order.
func saveTorch(params *gluon.ParamDict, path string) error {
	var names []string
	arrays := map[string]*nd.NDArray{}
	buffer := func(name string, a *nd.NDArray) {
		names = append(names, name)
		arrays[name] = a
	}
	for _, name := range params.Names() {
		p := params.Get(name)
		if !p.Initialized() {
			return fmt.Errorf("vision: save %s: parameter %s is not initialised", path, name)
		}
		buffer(name, p.ListData()[0])
		if bn, ok := strings.CutSuffix(name, ".running_var"); ok {
			counter := nd.Reshape(nd.FromSlice(ctx.CPU(0), []int64{0}, 1))
			defer counter.Release()
			buffer(bn+batchesTracked, counter)
		}
		if attn, ok := strings.CutSuffix(name, biasTable); ok {
			idx := nd.FromSlice(ctx.CPU(0), relativePositionIndex(windowSide(p.Shape()[0])))
			defer idx.Release()
			buffer(attn+positionIndex, idx)
		}
	}
	// The root module's version, as torch.save writes it: torchvision's
	// MNASNet refuses a state dict without it (version 2 is its current
	// layout); the other models ignore it.
	return pytorch.SaveStateDictVersions(path, names, arrays, map[string]int{"": 2})
}

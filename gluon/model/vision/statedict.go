package vision

import (
	"fmt"
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

// LoadStateDict loads a PyTorch state dict into params: a file that
// torch.save wrote (a state dict, a whole module, or a checkpoint holding
// one; see package gluon/pytorch) or one saved as safetensors (see
// tools/torch2safetensors.py), onto devs for parameters not
// yet initialised. Every parameter must be in the file, with its shape,
// and every tensor of the file must be a parameter, except BatchNorm's
// num_batches_tracked counters, which are skipped; on an error nothing
// changes. Files of DataParallel models ("module." names), ViTs saved by
// torchvision 0.13 or earlier (mlp.linear_1, mlp.linear_2) and the
// DenseNet checkpoints torchvision publishes (norm.1, conv.1, ... in the
// dense layers) load too.
func LoadStateDict(params *gluon.ParamDict, path string, devs []ctx.Context) error {
	return params.Load(path, devs, gluon.LoadOpts{
		Skip:   func(name string) bool { return strings.HasSuffix(name, batchesTracked) },
		Rename: torchName,
	})
}

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
// statistics, so that torch's load_state_dict(strict=True) accepts it. A
// path ending in ".pt", ".pth", ".bin", ".ckpt" or ".pth.tar" (any case;
// pytorch.IsTorchName) gets PyTorch's own format (torch.load reads it;
// see package gluon/pytorch), any other the safetensors form
// (`tools/torch2safetensors.py --to-torch` converts it). The file is
// replaced atomically.
func SaveStateDict(params *gluon.ParamDict, path string) error {
	extra := map[string]safetensors.Tensor{}
	for _, name := range params.Names() {
		if bn, ok := strings.CutSuffix(name, ".running_mean"); ok {
			extra[bn+batchesTracked] = safetensors.FromInt64(nil, []int64{0})
		}
	}
	if pytorch.IsTorchName(path) {
		return saveTorch(params, path)
	}
	return params.SaveWith(path, extra)
}

// saveTorch writes params and the BatchNorm counters with torch.save's
// format, in the parameters' order.
func saveTorch(params *gluon.ParamDict, path string) error {
	var names []string
	arrays := map[string]*nd.NDArray{}
	for _, name := range params.Names() {
		p := params.Get(name)
		if !p.Initialized() {
			return fmt.Errorf("vision: save %s: parameter %s is not initialised", path, name)
		}
		names = append(names, name)
		arrays[name] = p.ListData()[0]
		if bn, ok := strings.CutSuffix(name, ".running_var"); ok {
			counter := nd.Reshape(nd.FromSlice(ctx.CPU(0), []int64{0}, 1))
			defer counter.Release()
			names = append(names, bn+batchesTracked)
			arrays[bn+batchesTracked] = counter
		}
	}
	return pytorch.SaveStateDict(path, names, arrays)
}

package text

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/goluon/goluon/ctx"
	"github.com/goluon/goluon/gluon"
)

// The names of a GPT2LMHeadModel state dict that are not parameters of
// its own: the tied head and the attention masks older transformers
// versions kept as buffers.
const (
	headKey = "lm_head.weight"
	wteKey  = "transformer.wte.weight"
)

var maskBuffer = regexp.MustCompile(`^transformer\.h\.\d+\.attn\.(bias|masked_bias)$`)

// hfName maps a key of the file to the name it loads as: keys of a bare
// GPT2Model (the hub's gpt2 checkpoint: wte.weight, h.0.ln_1.weight)
// take the "transformer." prefix; lm_head.weight stays.
func hfName(key string) string {
	if key == headKey || strings.HasPrefix(key, "transformer.") {
		return key
	}
	return "transformer." + key
}

// gpt2Layout is how GPT2LMHeadModel's files map onto a GPT2.
var gpt2Layout = layout{
	rename:     hfName,
	skip:       maskBuffer.MatchString,
	ties:       []tie{{headKey, wteKey}},
	transposed: "Conv1D weights are [in, out], nn.Linear's [out, in]",
}

// Load reads a GPT2LMHeadModel state dict saved as safetensors (Hugging
// Face's model.safetensors) or by torch.save (its pytorch_model.bin; see
// package gluon/pytorch) into m's parameters, onto devs (cpu(0) when none
// are given) for parameters not yet initialised. Keys with or without the
// "transformer." prefix load; lm_head.weight may be absent or equal to
// the token embedding; attn.bias and attn.masked_bias buffers are
// skipped. Any other missing or unexpected key, or a shape that differs,
// is reported in a *LoadError that lists them all; on any error m is
// unchanged.
func Load(m *GPT2, path string, devs ...ctx.Context) error {
	if len(devs) == 0 {
		devs = []ctx.Context{ctx.CPU(0)}
	}
	params := gluon.CollectParams(m)
	if err := checkFile(params, path, gpt2Layout); err != nil {
		return err
	}
	err := params.Load(path, devs, gluon.LoadOpts{Rename: hfName, Skip: gpt2Layout.skipped})
	if err != nil {
		return fmt.Errorf("text: %w", err)
	}
	return nil
}

// LoadGPT2 returns a GPT-2 of configuration cfg with its weights read
// from path, onto devs (cpu(0) when none are given); see Load.
func LoadGPT2(path string, cfg GPT2Config, devs ...ctx.Context) (*GPT2, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := NewGPT2(cfg)
	if err := Load(m, path, devs...); err != nil {
		return nil, err
	}
	return m, nil
}

// Save writes m's parameters to path as a GPT2LMHeadModel state dict, as
// Hugging Face's save_pretrained writes one: transformer.* keys, no
// lm_head.weight (tied), the Conv1D weights [in, out]. A path ending in
// .bin, .pt or .pth gets torch.save's format (pytorch_model.bin), any
// other the safetensors format with metadata format "pt" (which
// transformers' loader asks for). Float64 parameters are saved as
// float64, others as float32. The file is replaced atomically.
func Save(m *GPT2, path string) error {
	return saveParams(gluon.CollectParams(m), path)
}

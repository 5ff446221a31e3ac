#!/usr/bin/python3
"""Writes attention_goldens.json for gluon/nn's attention and transformer tests.

Run from the repository root with Debian's python3-torch:

    /usr/bin/python3 gluon/nn/testdata/make_goldens_attention.py

Each case builds a torch nn.MultiheadAttention, nn.TransformerEncoderLayer
or nn.TransformerDecoderLayer in float64 with a fixed seed (dropout 0),
runs it on random inputs and masks, then backpropagates random head
gradients through every output. The JSON holds the parameters under
PyTorch's state_dict names, the float inputs, the masks (bool or float),
the heads, the outputs and the gradients of the float inputs and of every
parameter. A case with "causal" set is run in torch with the explicit
upper-triangular mask and in Goluon with the layer's Causal option, so the
option is checked against the mask it stands for.

transformer_state_dict.safetensors is the float32 state_dict of a torch
module with children "encoder" (a pre-norm, GELU, batch-first
TransformerEncoderLayer) and "decoder" (a post-norm, batch-first
TransformerDecoderLayer), and transformer_state_dict.json its inputs and
output, so the Go test loads a real torch file by name.
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testdata"))
from lenet_interop import write_safetensors  # noqa: E402


def tensor(t):
    if t.dtype == torch.bool:
        return {"shape": list(t.shape), "data": [1.0 if v else 0.0 for v in t.reshape(-1).tolist()], "bool": True}
    t = t.detach().to(torch.float64).contiguous()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def causal(t, s):
    return torch.ones(t, s, dtype=torch.bool).triu(1 + s - t)


def padding(g, n, s):
    """A random key-padding mask that leaves at least the first key of each row."""
    m = torch.rand(n, s, generator=g) < 0.3
    m[:, 0] = False
    return m


def run(name, kind, config, module, floats, masks, call):
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    module = module.double()
    module.train()  # dropout is 0; train mode keeps torch off its fused inference path
    ins = {k: torch.randn(*shape, generator=g, dtype=torch.float64, requires_grad=True)
           for k, shape in floats.items()}
    ms = {k: f(g) for k, f in masks.items()}
    outs = call(module, ins, ms)
    heads = [torch.randn(*o.shape, generator=g, dtype=torch.float64) for o in outs]
    torch.autograd.backward(outs, heads)
    grads = {k: v.grad for k, v in ins.items()}
    grads.update({k: p.grad for k, p in module.named_parameters()})
    return {
        "name": name, "kind": kind, "config": config,
        "params": {k: tensor(v) for k, v in module.state_dict().items()},
        "inputs": {k: tensor(v) for k, v in ins.items()},
        "masks": {k: tensor(v) for k, v in ms.items() if not (config.get("causal") and k == "attn_mask")},
        "heads": [tensor(h) for h in heads],
        "outputs": [tensor(o) for o in outs],
        "grads": {k: tensor(v) for k, v in grads.items()},
    }


def mha_case(name, E, H, T, S, N, batch_first=False, bias=True, self_attn=False,
             pad=False, mask=None, is_causal=False):
    torch.manual_seed(sum(map(ord, name)) * 31)
    m = torch.nn.MultiheadAttention(E, H, bias=bias, batch_first=batch_first)
    lay = (lambda L: (N, L, E)) if batch_first else (lambda L: (L, N, E))
    floats = {"query": lay(T)} if self_attn else {"query": lay(T), "key": lay(S), "value": lay(S)}
    masks = {}
    if pad:
        masks["key_padding_mask"] = lambda g: padding(g, N, S)
    if is_causal:
        masks["attn_mask"] = lambda g: causal(T, S)
    elif mask == "bool":
        masks["attn_mask"] = lambda g: (torch.rand(T, S, generator=g) < 0.3) & ~torch.eye(T, S, dtype=torch.bool)
    elif mask == "float":
        masks["attn_mask"] = lambda g: torch.randn(T, S, generator=g, dtype=torch.float64)

    def call(mod, ins, ms):
        q = ins["query"]
        k = ins.get("key", q)
        v = ins.get("value", q)
        out, w = mod(q, k, v, key_padding_mask=ms.get("key_padding_mask"),
                     attn_mask=ms.get("attn_mask"), need_weights=True)
        return [out, w]
    cfg = {"embed": E, "heads": H, "batch_first": batch_first, "bias": bias, "causal": is_causal}
    return run(name, "mha", cfg, m, floats, masks, call)


def encoder_case(name, E, H, F, T, N, batch_first=False, norm_first=False,
                 activation="relu", pad=False, is_causal=False):
    torch.manual_seed(sum(map(ord, name)) * 37)
    m = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, activation=activation,
                                         batch_first=batch_first, norm_first=norm_first)
    floats = {"src": (N, T, E) if batch_first else (T, N, E)}
    masks = {}
    if pad:
        masks["src_key_padding_mask"] = lambda g: padding(g, N, T)
    if is_causal:
        masks["attn_mask"] = lambda g: causal(T, T)

    def call(mod, ins, ms):
        return [mod(ins["src"], src_mask=ms.get("attn_mask"), src_key_padding_mask=ms.get("src_key_padding_mask"))]
    cfg = {"embed": E, "heads": H, "ffn": F, "batch_first": batch_first, "norm_first": norm_first,
           "activation": activation, "causal": is_causal}
    return run(name, "encoder", cfg, m, floats, masks, call)


def decoder_case(name, E, H, F, T, S, N, batch_first=False, norm_first=False,
                 activation="relu", tgt_causal=True, mem_pad=False, tgt_pad=False, mem_mask=False):
    torch.manual_seed(sum(map(ord, name)) * 41)
    m = torch.nn.TransformerDecoderLayer(E, H, dim_feedforward=F, dropout=0.0, activation=activation,
                                         batch_first=batch_first, norm_first=norm_first)
    lay = (lambda L: (N, L, E)) if batch_first else (lambda L: (L, N, E))
    floats = {"tgt": lay(T), "memory": lay(S)}
    masks = {}
    if tgt_causal:
        masks["tgt_mask"] = lambda g: causal(T, T)
    if mem_mask:
        masks["memory_mask"] = lambda g: torch.randn(T, S, generator=g, dtype=torch.float64)
    if tgt_pad:
        masks["tgt_key_padding_mask"] = lambda g: padding(g, N, T)
    if mem_pad:
        masks["memory_key_padding_mask"] = lambda g: padding(g, N, S)

    def call(mod, ins, ms):
        return [mod(ins["tgt"], ins["memory"], tgt_mask=ms.get("tgt_mask"), memory_mask=ms.get("memory_mask"),
                    tgt_key_padding_mask=ms.get("tgt_key_padding_mask"),
                    memory_key_padding_mask=ms.get("memory_key_padding_mask"))]
    cfg = {"embed": E, "heads": H, "ffn": F, "batch_first": batch_first, "norm_first": norm_first,
           "activation": activation}
    return run(name, "decoder", cfg, m, floats, masks, call)


def scramble(m, name):
    """Gives every parameter its own random values (PyTorch's stacks copy
    one layer, so the layers would start equal, and LayerNorm starts at
    ones and zeros)."""
    g = torch.Generator().manual_seed(sum(map(ord, name)) * 43)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.3)


def encoder_stack_case(name, E, H, F, T, N, layers, norm, batch_first=False, norm_first=False,
                       activation="relu", pad=False, is_causal=False):
    torch.manual_seed(sum(map(ord, name)) * 47)
    layer = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, activation=activation,
                                             batch_first=batch_first, norm_first=norm_first)
    m = torch.nn.TransformerEncoder(layer, layers, norm=torch.nn.LayerNorm(E) if norm else None,
                                    enable_nested_tensor=False)
    scramble(m, name)
    floats = {"src": (N, T, E) if batch_first else (T, N, E)}
    masks = {}
    if pad:
        masks["src_key_padding_mask"] = lambda g: padding(g, N, T)
    if is_causal:
        masks["attn_mask"] = lambda g: causal(T, T)

    def call(mod, ins, ms):
        return [mod(ins["src"], mask=ms.get("attn_mask"), src_key_padding_mask=ms.get("src_key_padding_mask"))]
    cfg = {"embed": E, "heads": H, "ffn": F, "batch_first": batch_first, "norm_first": norm_first,
           "activation": activation, "causal": is_causal, "layers": layers, "norm": norm}
    return run(name, "encoder_stack", cfg, m, floats, masks, call)


def decoder_stack_case(name, E, H, F, T, S, N, layers, norm, batch_first=False, norm_first=False,
                       activation="relu", mem_pad=False):
    torch.manual_seed(sum(map(ord, name)) * 53)
    layer = torch.nn.TransformerDecoderLayer(E, H, dim_feedforward=F, dropout=0.0, activation=activation,
                                             batch_first=batch_first, norm_first=norm_first)
    m = torch.nn.TransformerDecoder(layer, layers, norm=torch.nn.LayerNorm(E) if norm else None)
    scramble(m, name)
    lay = (lambda L: (N, L, E)) if batch_first else (lambda L: (L, N, E))
    floats = {"tgt": lay(T), "memory": lay(S)}
    masks = {"tgt_mask": lambda g: causal(T, T)}
    if mem_pad:
        masks["memory_key_padding_mask"] = lambda g: padding(g, N, S)

    def call(mod, ins, ms):
        return [mod(ins["tgt"], ins["memory"], tgt_mask=ms.get("tgt_mask"),
                    memory_key_padding_mask=ms.get("memory_key_padding_mask"))]
    cfg = {"embed": E, "heads": H, "ffn": F, "batch_first": batch_first, "norm_first": norm_first,
           "activation": activation, "layers": layers, "norm": norm}
    return run(name, "decoder_stack", cfg, m, floats, masks, call)


def transformer_case(name, E, H, F, S, T, N, enc, dec, batch_first=False, norm_first=False,
                     activation="relu"):
    torch.manual_seed(sum(map(ord, name)) * 59)
    m = torch.nn.Transformer(d_model=E, nhead=H, num_encoder_layers=enc, num_decoder_layers=dec,
                             dim_feedforward=F, dropout=0.0, activation=activation,
                             batch_first=batch_first, norm_first=norm_first)
    scramble(m, name)
    lay = (lambda L: (N, L, E)) if batch_first else (lambda L: (L, N, E))
    floats = {"src": lay(S), "tgt": lay(T)}
    masks = {"tgt_mask": lambda g: causal(T, T),
             "src_key_padding_mask": lambda g: padding(g, N, S),
             "memory_key_padding_mask": lambda g: padding(g, N, S),
             "memory_mask": lambda g: torch.randn(T, S, generator=g, dtype=torch.float64)}

    def call(mod, ins, ms):
        return [mod(ins["src"], ins["tgt"], tgt_mask=ms["tgt_mask"], memory_mask=ms["memory_mask"],
                    src_key_padding_mask=ms["src_key_padding_mask"],
                    memory_key_padding_mask=ms["memory_key_padding_mask"])]
    cfg = {"embed": E, "heads": H, "ffn": F, "batch_first": batch_first, "norm_first": norm_first,
           "activation": activation, "enc_layers": enc, "dec_layers": dec}
    return run(name, "transformer", cfg, m, floats, masks, call)


def main():
    torch.set_default_dtype(torch.float64)
    cases = [
        mha_case("mha_self_tnc", 8, 2, 5, 5, 3, self_attn=True),
        mha_case("mha_cross_ntc_padding_boolmask", 8, 4, 4, 6, 2, batch_first=True, pad=True, mask="bool"),
        mha_case("mha_cross_float_mask_nobias", 6, 3, 3, 5, 2, bias=False, mask="float"),
        mha_case("mha_self_causal_ntc", 8, 2, 6, 6, 2, batch_first=True, self_attn=True, is_causal=True),
        mha_case("mha_self_padding_one_head", 4, 1, 5, 5, 3, self_attn=True, pad=True),
        encoder_case("encoder_postnorm_relu_tnc", 8, 2, 16, 5, 3, pad=True),
        encoder_case("encoder_prenorm_gelu_ntc_causal", 8, 4, 12, 6, 2, batch_first=True, norm_first=True,
                     activation="gelu", is_causal=True),
        decoder_case("decoder_postnorm_tnc", 8, 2, 16, 4, 6, 2, mem_pad=True, tgt_pad=True),
        decoder_case("decoder_prenorm_gelu_ntc", 8, 2, 10, 5, 3, 2, batch_first=True, norm_first=True,
                     activation="gelu", mem_mask=True),
        encoder_stack_case("encoder_stack_postnorm_tnc_padding", 8, 2, 16, 5, 3, 3, False, pad=True),
        encoder_stack_case("encoder_stack_prenorm_gelu_ntc_causal_norm", 8, 4, 12, 6, 2, 2, True,
                           batch_first=True, norm_first=True, activation="gelu", is_causal=True),
        decoder_stack_case("decoder_stack_postnorm_tnc_norm", 8, 2, 16, 4, 6, 2, 2, True, mem_pad=True),
        decoder_stack_case("decoder_stack_prenorm_ntc", 8, 2, 10, 5, 3, 2, 3, False, batch_first=True,
                           norm_first=True),
        transformer_case("transformer_tnc", 8, 2, 16, 5, 4, 2, 2, 2),
        transformer_case("transformer_prenorm_gelu_ntc", 8, 4, 12, 6, 3, 2, 1, 2, batch_first=True,
                         norm_first=True, activation="gelu"),
    ]
    with open(os.path.join(HERE, "attention_goldens.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
    print(f"wrote {len(cases)} cases")
    state_dict_file()


class EncDec(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu",
                                                        batch_first=True, norm_first=True)
        self.decoder = torch.nn.TransformerDecoderLayer(8, 2, 12, dropout=0.0, batch_first=True)

    def forward(self, src, tgt):
        mask = torch.ones(tgt.shape[1], tgt.shape[1], dtype=torch.bool).triu(1)
        return self.decoder(tgt, self.encoder(src), tgt_mask=mask)


def state_dict_file():
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(2026)
    m = EncDec().float().eval()
    g = torch.Generator().manual_seed(11)
    src = torch.randn(2, 5, 8, generator=g)
    tgt = torch.randn(2, 4, 8, generator=g)
    with torch.no_grad():
        out = m(src, tgt)
    write_safetensors(os.path.join(HERE, "transformer_state_dict.safetensors"), m.state_dict())
    with open(os.path.join(HERE, "transformer_state_dict.json"), "w") as f:
        json.dump({"src": tensor(src), "tgt": tensor(tgt), "out": tensor(out)}, f)
    print("wrote transformer_state_dict.safetensors")


if __name__ == "__main__":
    main()

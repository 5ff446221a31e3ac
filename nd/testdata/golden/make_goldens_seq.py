#!/usr/bin/python3
"""Generate PyTorch golden values, outputs and gradients, for Goluon's
activations and normalisations of sequence models (nd/golden_seq_test.go):
LeakyReLU, PReLU, ELU, GELU (erf and tanh), SiLU, LayerNorm, GroupNorm and
InstanceNorm; and Conv1D and Conv2DTranspose.

Run:  /usr/bin/python3 make_goldens_seq.py   (writes goldens_seq.json next to this file)

Debian's python3-torch (1.13) is enough; no network access is needed.
Everything is float64 on CPU with one fixed seed, so the output is
deterministic.

Every case computes y = op(inputs), draws a random head gradient h of y's
shape and runs y.backward(h), so the stored gradients are the
vector-Jacobian products h . dy/dt for every differentiable input t (x, and
alpha, gamma, beta where the case has them). The inputs of the activations
are kept at least 0.05 away from 0, where LeakyReLU, PReLU and ELU have
their kinks.

JSON schema (parsed by nd/golden_seq_test.go):
{
  "generator": "make_goldens_seq.py, torch <version>",
  "torch": "<version>",
  "cases": [
    {
      "name": "...",                 # unique
      "op": "...",                   # selects the Go expression
      "description": "...",          # the PyTorch expression
      "params": {...},               # slope, alpha, tanh, axis, eps, groups
      "tensors": {"<name>": {"shape": [...], "data": [flat row-major float64]}},
                                     # the inputs: x, and alpha, gamma, beta where given
      "head": {...},                 # the head gradient h, y's shape
      "outputs": {"y": {...}},
      "grads": {"<name>": {...}}     # the gradient of every input in tensors
    }, ...
  ]
}
"""

import json
import math
import os

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
GEN = torch.Generator().manual_seed(20240917)


def enc(t):
    """Encode a float tensor as {"shape": [...], "data": [flat row-major floats]}."""
    t = t.detach().to(torch.float64).contiguous()
    data = [float(v) for v in t.reshape(-1).tolist()]
    for v in data:
        if not math.isfinite(v):
            raise ValueError("non-finite value in golden tensor")
    return {"shape": list(t.shape), "data": data}


def uniform(lo, hi, *shape):
    return torch.rand(tuple(shape), generator=GEN) * (hi - lo) + lo


def normal(*shape, scale=1.0, shift=0.0):
    return torch.randn(tuple(shape), generator=GEN) * scale + shift


def away(*shape, lo=-3.0, hi=3.0, gap=0.05):
    """Uniform values in [lo, hi] with none closer than gap to 0 (the kinks)."""
    x = uniform(lo, hi, *shape)
    x = torch.where(x.abs() < gap, torch.where(x < 0, -gap - x.abs(), gap + x.abs()), x)
    assert bool((x.abs() >= gap).all())
    # both sides of the kink must be exercised
    assert bool((x > 0).any()) and bool((x < 0).any())
    return x


CASES = []


def case(name, op, description, params, inputs, fn):
    """inputs: name -> tensor, all differentiable; fn(**inputs) -> y.
    Records the inputs, a random head gradient h, y and every input's
    gradient after y.backward(h)."""
    assert all(c["name"] != name for c in CASES), name
    ins = {k: v.detach().clone().requires_grad_(True) for k, v in inputs.items()}
    y = fn(**ins)
    h = normal(*y.shape)
    y.backward(h)
    for k, v in ins.items():
        assert v.grad is not None, (name, k)
    CASES.append({
        "name": name,
        "op": op,
        "description": description,
        "params": params,
        "tensors": {k: enc(v) for k, v in ins.items()},
        "head": enc(h),
        "outputs": {"y": enc(y)},
        "grads": {k: enc(v.grad) for k, v in ins.items()},
    })


# ----------------------------------------------------------------------------
# activations
# ----------------------------------------------------------------------------

def cases_leaky_relu():
    for name, shape, slope in [("leaky_relu_2d_slope0.01", (3, 4), 0.01),
                               ("leaky_relu_3d_slope0.2", (2, 3, 4), 0.2),
                               ("leaky_relu_1d_slope0", (9,), 0.0),
                               ("leaky_relu_2d_slope1.5", (4, 5), 1.5)]:
        case(name, "leaky_relu",
             "y = F.leaky_relu(x%s, %g)" % (list(shape), slope),
             {"slope": slope}, {"x": away(*shape)},
             lambda x, s=slope: F.leaky_relu(x, s))


def cases_prelu():
    # torch's prelu puts the channels at dim 1: nd.PReLU(x, alpha, 1)
    specs = [("prelu_2d_per_channel", (4, 3), 3, (0.05, 0.5)),
             ("prelu_3d_per_channel", (2, 3, 4), 3, (0.05, 0.5)),
             ("prelu_4d_per_channel_signed", (2, 4, 2, 3), 4, (-0.8, 0.8)),
             ("prelu_3d_shared", (2, 3, 4), 1, (0.05, 0.5))]
    for name, shape, c, (lo, hi) in specs:
        case(name, "prelu",
             "y = F.prelu(x%s, alpha[%d]) (channels at dim 1)" % (list(shape), c),
             {"axis": 1}, {"x": away(*shape), "alpha": uniform(lo, hi, c)},
             lambda x, alpha: F.prelu(x, alpha))


def cases_elu():
    for name, shape, alpha, (lo, hi) in [("elu_2d_alpha1", (3, 4), 1.0, (-3, 3)),
                                         ("elu_3d_alpha0.5", (2, 3, 4), 0.5, (-3, 3)),
                                         ("elu_2d_alpha2_wide", (4, 5), 2.0, (-12, 12))]:
        case(name, "elu", "y = F.elu(x%s, %g)" % (list(shape), alpha),
             {"alpha": alpha}, {"x": away(*shape, lo=lo, hi=hi)},
             lambda x, a=alpha: F.elu(x, a))


def cases_gelu():
    for name, shape, tanh, (lo, hi) in [("gelu_erf_2d", (3, 5), False, (-3, 3)),
                                        ("gelu_tanh_2d", (3, 5), True, (-3, 3)),
                                        ("gelu_erf_3d_wide", (2, 3, 4), False, (-7, 7)),
                                        ("gelu_tanh_3d_wide", (2, 3, 4), True, (-7, 7))]:
        if tanh:
            desc, fn = "y = F.gelu(x%s, approximate='tanh')", lambda x: F.gelu(x, approximate="tanh")
        else:
            desc, fn = "y = F.gelu(x%s)", lambda x: F.gelu(x)
        case(name, "gelu", desc % list(shape), {"tanh": tanh},
             {"x": away(*shape, lo=lo, hi=hi)}, fn)


def cases_silu():
    for name, shape, (lo, hi) in [("silu_2d", (3, 4), (-3, 3)),
                                  ("silu_3d_wide", (2, 3, 4), (-12, 12))]:
        case(name, "silu", "y = F.silu(x%s)" % list(shape), {},
             {"x": away(*shape, lo=lo, hi=hi)}, lambda x: F.silu(x))


# ----------------------------------------------------------------------------
# normalisations
# ----------------------------------------------------------------------------

def affine_inputs(x, c, gamma, beta):
    ins = {"x": x}
    if gamma:
        ins["gamma"] = uniform(0.5, 1.5, c)
    if beta:
        ins["beta"] = normal(c, scale=0.5)
    return ins


def affine_desc(ins):
    return "%s, %s" % ("gamma" if "gamma" in ins else "None", "beta" if "beta" in ins else "None")


def cases_layer_norm():
    # nd.LayerNorm(x, gamma, beta, -1, eps) == F.layer_norm(x, (x.shape[-1],), ...)
    specs = [("layer_norm_2d_affine", (4, 6), True, True, 1e-5, 0.0),
             ("layer_norm_3d_affine", (2, 3, 5), True, True, 1e-5, 0.0),
             ("layer_norm_2d_plain", (3, 7), False, False, 1e-5, 0.0),
             ("layer_norm_3d_plain_eps1e-3", (2, 4, 3), False, False, 1e-3, 0.0),
             ("layer_norm_3d_gamma_only", (2, 2, 6), True, False, 1e-5, 0.0),
             ("layer_norm_2d_affine_offset", (3, 8), True, True, 1e-5, 50.0)]
    for name, shape, gamma, beta, eps, shift in specs:
        x = normal(*shape, scale=2.0, shift=shift)
        ins = affine_inputs(x, shape[-1], gamma, beta)
        case(name, "layer_norm",
             "y = F.layer_norm(x%s, (%d,), %s, eps=%g)" % (list(shape), shape[-1], affine_desc(ins), eps),
             {"axis": -1, "eps": eps}, ins,
             lambda x, gamma=None, beta=None, n=shape[-1], eps=eps:
                 F.layer_norm(x, (n,), gamma, beta, eps))


def cases_group_norm():
    specs = [("group_norm_3d_groups1_affine", (2, 4, 5), 1, True, True),
             ("group_norm_3d_groups2_affine", (2, 4, 5), 2, True, True),
             ("group_norm_3d_groupsC_plain", (3, 4, 3), 4, False, False),
             ("group_norm_4d_groups1_plain", (2, 4, 3, 3), 1, False, False),
             ("group_norm_4d_groups2_affine", (2, 4, 3, 3), 2, True, True),
             ("group_norm_4d_groupsC_affine", (2, 6, 2, 3), 6, True, True)]
    for name, shape, groups, gamma, beta in specs:
        x = normal(*shape, scale=1.5, shift=0.3)
        ins = affine_inputs(x, shape[1], gamma, beta)
        case(name, "group_norm",
             "y = F.group_norm(x%s, %d, %s, eps=1e-5)" % (list(shape), groups, affine_desc(ins)),
             {"groups": groups, "eps": 1e-5}, ins,
             lambda x, gamma=None, beta=None, g=groups: F.group_norm(x, g, gamma, beta, 1e-5))


def cases_instance_norm():
    specs = [("instance_norm_4d_affine", (2, 3, 4, 4), True, True, 1e-5),
             ("instance_norm_3d_plain", (3, 2, 6), False, False, 1e-3)]
    for name, shape, gamma, beta, eps in specs:
        x = normal(*shape, scale=1.5, shift=-0.4)
        ins = affine_inputs(x, shape[1], gamma, beta)

        def fn(x, gamma=None, beta=None, eps=eps):
            y = F.instance_norm(x, None, None, gamma, beta, True, 0.1, eps)
            # the same as group_norm with one channel per group
            assert torch.allclose(y, F.group_norm(x, x.shape[1], gamma, beta, eps), rtol=0, atol=1e-12)
            return y

        case(name, "instance_norm",
             "y = F.instance_norm(x%s, %s, eps=%g) == F.group_norm(x, %d, %s, eps=%g)"
             % (list(shape), affine_desc(ins), eps, shape[1], affine_desc(ins), eps),
             {"eps": eps}, ins, fn)


# ----------------------------------------------------------------------------
# convolutions of sequence and generative models
# ----------------------------------------------------------------------------

def cases_conv1d():
    # nd.Conv1D(x, w, b, Conv1DOpts{stride, pad, dilate, groups})
    specs = [("conv1d_k3_bias", (2, 3, 9), (4, 3, 3), True, 1, 0, 1, 1),
             ("conv1d_stride2_pad1", (2, 3, 9), (2, 3, 3), False, 2, 1, 1, 1),
             ("conv1d_dilate2_pad2_bias", (1, 2, 10), (3, 2, 3), True, 1, 2, 2, 1),
             ("conv1d_groups2_bias", (2, 4, 7), (6, 2, 2), True, 1, 0, 1, 2)]
    for name, xs, ws, bias, st, pd, dl, gr in specs:
        ins = {"x": normal(*xs), "w": normal(*ws, scale=0.5)}
        if bias:
            ins["b"] = normal(ws[0], scale=0.5)
        case(name, "conv1d",
             "y = F.conv1d(x%s, w%s, %s, stride=%d, padding=%d, dilation=%d, groups=%d)"
             % (list(xs), list(ws), "b" if bias else "None", st, pd, dl, gr),
             {"stride": [st], "pad": [pd], "dilate": [dl], "groups": gr}, ins,
             lambda x, w, b=None, st=st, pd=pd, dl=dl, gr=gr: F.conv1d(x, w, b, st, pd, dl, gr))


def cases_conv_transpose2d():
    # nd.Conv2DTranspose(x, w, b, ConvTransposeOpts{stride, pad, outpad, dilate, groups})
    specs = [("conv_transpose2d_k3_bias", (2, 3, 4, 4), (3, 2, 3, 3), True, (1, 1), (0, 0), (0, 0), (1, 1), 1),
             ("conv_transpose2d_stride2_pad1_outpad1", (2, 2, 3, 3), (2, 3, 3, 3), True, (2, 2), (1, 1), (1, 1), (1, 1), 1),
             ("conv_transpose2d_k4_stride2_pad1", (1, 3, 4, 4), (3, 2, 4, 4), False, (2, 2), (1, 1), (0, 0), (1, 1), 1),
             ("conv_transpose2d_dilate2_nonsquare", (1, 2, 3, 4), (2, 2, 2, 3), True, (1, 2), (0, 1), (0, 1), (2, 1), 1),
             ("conv_transpose2d_groups2", (2, 4, 3, 3), (4, 3, 2, 2), True, (2, 1), (0, 0), (0, 0), (1, 1), 2)]
    for name, xs, ws, bias, st, pd, op, dl, gr in specs:
        ins = {"x": normal(*xs), "w": normal(*ws, scale=0.5)}
        if bias:
            ins["b"] = normal(ws[1] * gr, scale=0.5)
        case(name, "conv_transpose2d",
             "y = F.conv_transpose2d(x%s, w%s, %s, stride=%s, padding=%s, output_padding=%s, groups=%d, dilation=%s)"
             % (list(xs), list(ws), "b" if bias else "None", st, pd, op, gr, dl),
             {"stride": list(st), "pad": list(pd), "outpad": list(op), "dilate": list(dl), "groups": gr}, ins,
             lambda x, w, b=None, st=st, pd=pd, op=op, gr=gr, dl=dl:
                 F.conv_transpose2d(x, w, b, st, pd, op, gr, dl))


# ----------------------------------------------------------------------------

def main():
    for f in [cases_leaky_relu, cases_prelu, cases_elu, cases_gelu, cases_silu,
              cases_layer_norm, cases_group_norm, cases_instance_norm,
              cases_conv1d, cases_conv_transpose2d]:
        f()
    doc = {"generator": "make_goldens_seq.py, torch " + torch.__version__,
           "torch": torch.__version__, "cases": CASES}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens_seq.json")
    # one case a line, so that a regenerated file diffs case by case
    head = json.dumps({k: v for k, v in doc.items() if k != "cases"}, allow_nan=False)
    with open(path, "w") as f:
        f.write(head[:-1] + ', "cases": [\n')
        f.write(",\n".join(json.dumps(c, allow_nan=False) for c in CASES))
        f.write("\n]}\n")
    json.load(open(path))
    print("wrote %s (%d bytes, %d cases), torch %s"
          % (path, os.path.getsize(path), len(CASES), torch.__version__))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Goldens for higher_order_test.go: second-order training workloads in
PyTorch (Debian's python3-torch 1.13, float64), with
torch.autograd.grad(create_graph=True):

  wgan_gp       a conv critic's WGAN-GP loss, mean(D(fake)) - mean(D(real))
                + 10 * mean((||dD/dx_hat||_2 - 1)^2) on interpolates;
  r1_batchnorm  an R1 penalty (sum of squared input gradients) through a
                training-mode BatchNorm, ReLU and max pooling;
  maml          MAML's outer gradient after one and two inner SGD steps of
                a Dense-tanh-Dense classifier;
  hvp           a Hessian-vector product of a classifier's cross-entropy
                with respect to all its parameters.

Every case stores the torch-initialised parameters (in the order of
module.parameters(): each layer's weight, then its bias), the inputs, and
the losses and gradients to match.

Run from the repository root:
    /usr/bin/python3 gluon/testdata/make_higher_order_goldens.py
It writes gluon/testdata/higher_order_goldens.json.
"""
import json

import torch
import torch.nn.functional as F
from torch import nn

torch.set_default_dtype(torch.float64)
torch.manual_seed(20240611)


def arr(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": t.reshape(-1).tolist()}


def arrs(ts):
    return [arr(t) for t in ts]


def wgan_gp():
    critic = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(4, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 1))
    params = list(critic.parameters())
    init = arrs(params)
    real = torch.randn(4, 1, 8, 8)
    fake = torch.randn(4, 1, 8, 8) * 0.5 + 0.3
    eps = torch.rand(4, 1, 1, 1)
    x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
    d_hat = critic(x_hat)
    g, = torch.autograd.grad(d_hat.sum(), x_hat, create_graph=True)
    penalty = ((g.reshape(4, -1).norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
    loss.backward()
    return {"params": init, "real": arr(real), "fake": arr(fake), "eps": arr(eps),
            "input_grad": arr(g), "penalty": float(penalty), "loss": float(loss),
            "grads": arrs(p.grad for p in params)}


def r1_batchnorm():
    net = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 1))
    bn = net[1]  # the convolution has no bias: its gradient would be 0 up to rounding
    with torch.no_grad():  # not the trivial 1 and 0
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.normal_(0, 0.2)
    net.train()
    params = list(net.parameters())
    init = arrs(params)
    x = torch.randn(6, 2, 8, 8).requires_grad_(True)
    out = net(x)
    g, = torch.autograd.grad(out.sum(), x, create_graph=True)
    penalty = g.pow(2).sum()
    loss = F.softplus(-out).mean() + 5 * penalty
    loss.backward()
    return {"params": init, "x": arr(x), "input_grad": arr(g), "penalty": float(penalty),
            "loss": float(loss), "grads": arrs(p.grad for p in params),
            "running_mean": arr(bn.running_mean), "running_var": arr(bn.running_var)}


def mlp_forward(p, x):
    """The Dense-tanh-Dense classifier on explicit weights."""
    return F.linear(torch.tanh(F.linear(x, p[0], p[1])), p[2], p[3])


def maml(steps, alpha):
    net = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
    params = list(net.parameters())
    init = arrs(params)
    x_tr, y_tr = torch.randn(8, 5), torch.randint(0, 3, (8,))
    x_val, y_val = torch.randn(10, 5), torch.randint(0, 3, (10,))
    fast = params
    train_losses = []
    for _ in range(steps):
        l_tr = F.cross_entropy(mlp_forward(fast, x_tr), y_tr)
        train_losses.append(float(l_tr))
        grads = torch.autograd.grad(l_tr, fast, create_graph=True)
        fast = [w - alpha * g for w, g in zip(fast, grads)]
    l_val = F.cross_entropy(mlp_forward(fast, x_val), y_val)
    l_val.backward()
    return {"steps": steps, "alpha": alpha, "params": init,
            "x_train": arr(x_tr), "y_train": y_tr.tolist(), "x_val": arr(x_val), "y_val": y_val.tolist(),
            "train_losses": train_losses, "fast": arrs(fast), "val_loss": float(l_val),
            "grads": arrs(p.grad for p in params)}


def hvp():
    net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 4))
    params = list(net.parameters())
    x, y = torch.randn(7, 6), torch.randint(0, 4, (7,))
    v = [torch.randn_like(p) for p in params]
    loss = F.cross_entropy(net(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    dot = sum((g * u).sum() for g, u in zip(grads, v))
    hv = torch.autograd.grad(dot, params)
    return {"params": arrs(params), "x": arr(x), "y": y.tolist(), "v": arrs(v),
            "loss": float(loss), "grads": arrs(grads), "hvp": arrs(hv)}


goldens = {"wgan_gp": wgan_gp(), "r1_batchnorm": r1_batchnorm(),
           "maml": [maml(1, 0.4), maml(2, 0.3)], "hvp": hvp()}
with open("gluon/testdata/higher_order_goldens.json", "w") as f:
    json.dump(goldens, f)
    f.write("\n")

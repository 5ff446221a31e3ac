#!/usr/bin/python3
"""Goldens for probability_test.go: torch.distributions' Normal,
Categorical, Bernoulli, Uniform and MultivariateNormal (Debian's
python3-torch) in float64: log_prob, entropy, cdf/icdf and KL divergences,
with the gradient of sum(y * head) (head a ramp) with respect to every
parameter and value.

Run from the repository root:
    /usr/bin/python3 gluon/probability/testdata/make_goldens.py
It writes gluon/probability/testdata/goldens.json.
"""
import json

import torch
import torch.distributions as D

torch.manual_seed(41)
torch.set_default_dtype(torch.float64)


def num(v):
    """JSON has no NaN or infinities: they are written as strings."""
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return v


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [num(float(v)) for v in t.reshape(-1).tolist()]}


def ramp(t):
    n = t.numel()
    return (torch.linspace(-1, 1, n) if n > 1 else torch.ones(n)).reshape(t.shape)


cases = []


def case(name, inputs, f):
    xs = {k: v.clone().requires_grad_(v.is_floating_point()) for k, v in inputs.items()}
    y = f(**xs)
    diff = [k for k in xs if xs[k].requires_grad]
    gs = torch.autograd.grad((y * ramp(y)).sum(), [xs[k] for k in diff], allow_unused=True)
    cases.append({"name": name, "inputs": {k: enc(v) for k, v in inputs.items()},
                  "dtypes": {k: str(v.dtype).replace("torch.", "") for k, v in inputs.items()},
                  "y": enc(y),
                  "grads": {k: enc(g if g is not None else torch.zeros_like(xs[k])) for k, g in zip(diff, gs)}})


loc, scale = torch.randn(2, 3), torch.rand(2, 3) + 0.5
x = torch.randn(2, 3)
case("normal_log_prob", {"loc": loc, "scale": scale, "x": x}, lambda loc, scale, x: D.Normal(loc, scale).log_prob(x))
case("normal_log_prob_bcast", {"loc": torch.randn(3), "scale": torch.rand(2, 1) + 0.5, "x": torch.randn(4, 1, 1)},
     lambda loc, scale, x: D.Normal(loc, scale).log_prob(x))
case("normal_entropy", {"loc": loc, "scale": scale}, lambda loc, scale: D.Normal(loc, scale).entropy())
case("normal_cdf", {"loc": loc, "scale": scale, "x": x}, lambda loc, scale, x: D.Normal(loc, scale).cdf(x))
case("normal_icdf", {"loc": loc, "scale": scale, "p": torch.rand(2, 3) * 0.9 + 0.05},
     lambda loc, scale, p: D.Normal(loc, scale).icdf(p))
case("normal_kl", {"loc": loc, "scale": scale, "loc2": torch.randn(2, 3), "scale2": torch.rand(2, 3) + 0.5},
     lambda loc, scale, loc2, scale2: D.kl_divergence(D.Normal(loc, scale), D.Normal(loc2, scale2)))
logits = torch.randn(3, 4)
logits[1, 2] = -1e9  # a class of probability ~0
idx = torch.tensor([0, 2, 3])
case("categorical_log_prob", {"logits": logits, "idx": idx}, lambda logits, idx: D.Categorical(logits=logits).log_prob(idx))
case("categorical_entropy", {"logits": logits}, lambda logits: D.Categorical(logits=logits).entropy())
case("categorical_kl", {"logits": logits, "logits2": torch.randn(3, 4)},
     lambda logits, logits2: D.kl_divergence(D.Categorical(logits=logits), D.Categorical(logits=logits2)))
probs = torch.rand(2, 5) + 0.1
case("categorical_probs_log_prob", {"probs": probs, "idx": torch.tensor([[4], [1]])},
     lambda probs, idx: D.Categorical(probs=probs).log_prob(idx))
bl = torch.tensor([-30.0, -1.5, 0.0, 2.0, 40.0])
bx = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
case("bernoulli_log_prob", {"logits": bl, "x": bx}, lambda logits, x: D.Bernoulli(logits=logits).log_prob(x))
case("bernoulli_entropy", {"logits": bl}, lambda logits: D.Bernoulli(logits=logits).entropy())
case("bernoulli_kl", {"logits": bl, "logits2": torch.randn(5)},
     lambda logits, logits2: D.kl_divergence(D.Bernoulli(logits=logits), D.Bernoulli(logits=logits2)))
case("uniform_log_prob", {"low": torch.tensor([0.0, -1.0, 2.0]), "high": torch.tensor([1.0, 3.0, 2.5]),
                          "x": torch.tensor([0.5, 2.0, 2.25])},
     lambda low, high, x: D.Uniform(low, high).log_prob(x))
case("uniform_entropy", {"low": torch.tensor([0.0, -1.0]), "high": torch.tensor([1.0, 3.0])},
     lambda low, high: D.Uniform(low, high).entropy())
a = torch.randn(2, 3, 3)
cov = a @ a.mT + 3 * torch.eye(3)
L = torch.linalg.cholesky(cov)
mloc = torch.randn(2, 3)
mx = torch.randn(4, 2, 3)
case("mvn_log_prob_tril", {"loc": mloc, "scale_tril": L, "x": mx},
     lambda loc, scale_tril, x: D.MultivariateNormal(loc, scale_tril=scale_tril).log_prob(x))
case("mvn_log_prob_cov", {"loc": mloc, "cov": cov, "x": mx},
     lambda loc, cov, x: D.MultivariateNormal(loc, covariance_matrix=cov).log_prob(x))
case("mvn_entropy", {"loc": mloc, "scale_tril": L},
     lambda loc, scale_tril: D.MultivariateNormal(loc, scale_tril=scale_tril).entropy())

# Gamma, Beta, Dirichlet, Poisson, Exponential, Laplace.
conc, rate = torch.rand(2, 3) * 3 + 0.2, torch.rand(2, 3) + 0.5
gx = torch.rand(2, 3) * 4 + 0.01
case("gamma_log_prob", {"conc": conc, "rate": rate, "x": gx}, lambda conc, rate, x: D.Gamma(conc, rate).log_prob(x))
case("gamma_entropy", {"conc": conc, "rate": rate}, lambda conc, rate: D.Gamma(conc, rate).entropy())
ba, bb = torch.rand(4) * 3 + 0.3, torch.rand(4) * 3 + 0.3
bx = torch.rand(4) * 0.98 + 0.01
case("beta_log_prob", {"a": ba, "b": bb, "x": bx}, lambda a, b, x: D.Beta(a, b).log_prob(x))
case("beta_entropy", {"a": ba, "b": bb}, lambda a, b: D.Beta(a, b).entropy())
dc = torch.rand(2, 4) * 2 + 0.3
dx = torch.softmax(torch.randn(2, 4), -1)
case("dirichlet_log_prob", {"conc": dc, "x": dx}, lambda conc, x: D.Dirichlet(conc).log_prob(x))
case("dirichlet_entropy", {"conc": dc}, lambda conc: D.Dirichlet(conc).entropy())
case("poisson_log_prob", {"rate": torch.rand(5) * 4 + 0.1, "k": torch.tensor([0.0, 1, 3, 7, 2])},
     lambda rate, k: D.Poisson(rate).log_prob(k))
er = torch.rand(3) + 0.5
case("exponential_log_prob", {"rate": er, "x": torch.rand(3) * 2}, lambda rate, x: D.Exponential(rate).log_prob(x))
case("exponential_entropy", {"rate": er}, lambda rate: D.Exponential(rate).entropy())
case("laplace_log_prob", {"loc": torch.randn(3), "scale": torch.rand(3) + 0.5, "x": torch.randn(3)},
     lambda loc, scale, x: D.Laplace(loc, scale).log_prob(x))
case("laplace_entropy", {"loc": torch.randn(3), "scale": torch.rand(3) + 0.5},
     lambda loc, scale: D.Laplace(loc, scale).entropy())

# KL divergences of the families above.
case("gamma_kl", {"a1": conc, "b1": rate, "a2": torch.rand(2, 3) * 3 + 0.2, "b2": torch.rand(2, 3) + 0.5},
     lambda a1, b1, a2, b2: D.kl_divergence(D.Gamma(a1, b1), D.Gamma(a2, b2)))
case("beta_kl", {"a1": ba, "b1": bb, "a2": torch.rand(4) * 3 + 0.3, "b2": torch.rand(4) * 3 + 0.3},
     lambda a1, b1, a2, b2: D.kl_divergence(D.Beta(a1, b1), D.Beta(a2, b2)))
case("dirichlet_kl", {"c1": dc, "c2": torch.rand(2, 4) * 2 + 0.3},
     lambda c1, c2: D.kl_divergence(D.Dirichlet(c1), D.Dirichlet(c2)))
case("exponential_kl", {"r1": er, "r2": torch.rand(3) + 0.5},
     lambda r1, r2: D.kl_divergence(D.Exponential(r1), D.Exponential(r2)))
case("laplace_kl", {"l1": torch.randn(3), "s1": torch.rand(3) + 0.5, "l2": torch.randn(3), "s2": torch.rand(3) + 0.5},
     lambda l1, s1, l2, s2: D.kl_divergence(D.Laplace(l1, s1), D.Laplace(l2, s2)))

# From a review: zero probabilities, a -Inf logit.
zp = torch.tensor([[0.0, 0.3, 0.7], [0.2, 0.0, 0.8]])
case("categorical_probs_log_prob", {"probs": zp, "idx": torch.tensor([1, 0])},
     lambda probs, idx: D.Categorical(probs=probs).log_prob(idx))
case("categorical_probs_log_prob", {"probs": zp, "idx": torch.tensor([0, 1])},
     lambda probs, idx: D.Categorical(probs=probs).log_prob(idx))
case("categorical_entropy", {"logits": torch.tensor([0.0, float("-inf"), 1.0])},
     lambda logits: D.Categorical(logits=logits).entropy())
case("categorical_probs_kl", {"probs": torch.tensor([0.0, 0.5, 0.5]), "probs2": torch.tensor([0.2, 0.3, 0.5])},
     lambda probs, probs2: D.kl_divergence(D.Categorical(probs=probs), D.Categorical(probs=probs2)))

with open("gluon/probability/testdata/goldens.json", "w") as fh:
    json.dump({"generator": "make_goldens.py, torch " + torch.__version__, "cases": cases}, fh, indent=1)
    fh.write("\n")
print("wrote", len(cases), "cases")

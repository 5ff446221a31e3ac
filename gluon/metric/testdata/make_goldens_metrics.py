#!/usr/bin/python3
"""Generate golden values for the gluon/metric tests of Goluon.

Run:  /usr/bin/python3 make_goldens_metrics.py
      (writes goldens_metrics.json next to this file)

Inputs are drawn from numpy with a fixed seed and everything is float64, so
the output is deterministic. The expected values come from scikit-learn
(f1_score, fbeta_score, matthews_corrcoef, accuracy_score,
mean_absolute_error, mean_squared_error, cosine_similarity), SciPy
(pearsonr, minkowski), PyTorch (nll_loss) and plain numpy, never from the
Go code. Where two libraries apply, the script asserts that they agree.

The conventions of Goluon's metrics (MXNet's, documented in the Go files)
are applied here on top of those libraries:

  * an Update is one "batch", made of one (label, pred) shard per device;
  * binary predictions [N, 2] are scores, the positive class being the
    argmax (first maximum); other predictions are probabilities, positive
    when > 0.5 (BinaryAccuracy: > threshold);
  * "macro" is the mean over batches of the batch's score, "micro" the
    score of all samples together; without true positives F1 and F-beta
    are 0 (zero_division=0);
  * regression metrics average per-sample means over samples (axis 0);
    RMSE is the root of the overall MSE;
  * NaN (and infinities) are written as the strings "NaN", "Infinity",
    "-Infinity", since JSON has no such numbers.

JSON schema (parsed by golden_test.go):
{
  "generator": "...",
  "cases": [
    {"name": "...",
     "metric": "f1|fbeta|mcc|binary_accuracy|mae|mse|rmse|pearsonr|nll-loss|mpd|cos_sim",
     "config": {"average": "macro|micro", "beta": b, "threshold": t or null,
                "p": p, "eps": e},
     "batches": [[{"label": T, "pred": T}, ...], ...],
     "value": v}
  ]
}
where T = {"shape": [...], "data": [flat row-major float64]}.
"""

import json
import math
import os

import numpy as np
import scipy
import scipy.spatial.distance
import scipy.stats
import sklearn
import sklearn.metrics as skm
import sklearn.metrics.pairwise as skp
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20250611)


def num(x):
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def enc(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def case(name, metric, config, batches, value):
    return {
        "name": name,
        "metric": metric,
        "config": config,
        "batches": [[{"label": enc(l), "pred": enc(p)} for l, p in b] for b in batches],
        "value": num(value),
    }


def close(a, b, tol=1e-12):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * (1 + abs(b))


# ---------------------------------------------------------------- binary


def binary_pred(label, pred, threshold=0.5):
    """Predicted 0/1 classes of one shard, per the conventions above."""
    label, pred = np.asarray(label), np.asarray(pred)
    if pred.ndim == 2 and pred.shape[1] == 2 and pred.shape[0] == label.size \
            and pred.shape != label.shape:
        return np.argmax(pred, axis=1).astype(np.int64)
    return (pred.reshape(-1) > threshold).astype(np.int64)


def batch_classes(batch):
    y = np.concatenate([np.asarray(l).reshape(-1).astype(np.int64) for l, _ in batch])
    yhat = np.concatenate([binary_pred(l, p) for l, p in batch])
    return y, yhat


def f1(y, yhat):
    return skm.f1_score(y, yhat, zero_division=0)


def fbeta(beta):
    return lambda y, yhat: skm.fbeta_score(y, yhat, beta=beta, zero_division=0)


def mcc(y, yhat):
    return skm.matthews_corrcoef(y, yhat)


def averaged(score, batches, average):
    if average == "macro":
        return float(np.mean([score(*batch_classes(b)) for b in batches]))
    ys, yhats = zip(*[batch_classes(b) for b in batches])
    return float(score(np.concatenate(ys), np.concatenate(yhats)))


def labels01(*shape):
    return rng.integers(0, 2, size=shape).astype(np.float64)


def scores(n):
    return rng.normal(size=(n, 2))


def probs(*shape):
    return rng.uniform(0, 1, size=shape)


def binary_cases():
    out = []
    # Scores [N, 2], three batches of two shards of different sizes.
    sc = [[(labels01(5), scores(5)), (labels01(3), scores(3))],
          [(labels01(4), scores(4)), (labels01(6), scores(6))],
          [(labels01(7), scores(7)), (labels01(2), scores(2))]]
    # Probabilities, labels [N] or [N, 1]; the second batch predicts no
    # positive (its F1 is 0), the third has an exact 0.5 (negative).
    pr = [[(labels01(6), probs(6)), (labels01(4, 1), probs(4))],
          [(np.array([1., 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.49]))],
          [(np.array([1., 0, 1, 0, 1]), np.array([0.5, 0.9, 0.8, 0.1, 0.7]))]]
    # A batch with no positive label and no positive prediction (F1 0,
    # MCC 0), a tie in scores (the first maximum: negative) and labels
    # 1.0 stored as 1.7 (truncated to 1).
    edge = [[(np.array([0., 0, 0]), np.array([[1, 0], [0.3, 0.2], [2, -1]]))],
            [(np.array([1., 1.7, 0, 0]), np.array([[0.4, 0.4], [0, 1], [1, 0], [0.2, 0.6]]))],
            [(labels01(8), scores(8))]]
    # Constant predictions in one batch (MCC 0), then a mix.
    const = [[(labels01(6), np.full(6, 0.9))],
             [(labels01(9), probs(9)), (labels01(5), probs(5))]]
    for avg in ("macro", "micro"):
        out.append(case(f"f1_scores_{avg}", "f1", {"average": avg}, sc, averaged(f1, sc, avg)))
        out.append(case(f"f1_probs_{avg}", "f1", {"average": avg}, pr, averaged(f1, pr, avg)))
        out.append(case(f"f1_edge_{avg}", "f1", {"average": avg}, edge, averaged(f1, edge, avg)))
        for beta in (0.5, 2.0):
            out.append(case(f"fbeta{beta:g}_scores_{avg}", "fbeta", {"average": avg, "beta": beta},
                            sc, averaged(fbeta(beta), sc, avg)))
            out.append(case(f"fbeta{beta:g}_probs_{avg}", "fbeta", {"average": avg, "beta": beta},
                            pr, averaged(fbeta(beta), pr, avg)))
        out.append(case(f"fbeta1_equals_f1_{avg}", "fbeta", {"average": avg, "beta": 1.0},
                        edge, averaged(f1, edge, avg)))
        out.append(case(f"mcc_scores_{avg}", "mcc", {"average": avg}, sc, averaged(mcc, sc, avg)))
        out.append(case(f"mcc_probs_{avg}", "mcc", {"average": avg}, pr, averaged(mcc, pr, avg)))
        out.append(case(f"mcc_edge_{avg}", "mcc", {"average": avg}, edge, averaged(mcc, edge, avg)))
        out.append(case(f"mcc_constant_{avg}", "mcc", {"average": avg}, const,
                        averaged(mcc, const, avg)))
    # Nothing predicted positive anywhere: micro F1 is 0, not NaN.
    none = [[(labels01(5), probs(5) * 0.4)], [(labels01(3), probs(3) * 0.4)]]
    out.append(case("f1_no_positive_micro", "f1", {"average": "micro"}, none,
                    averaged(f1, none, "micro")))

    # BinaryAccuracy: elementwise p > threshold against 0/1 labels.
    def bacc(batches, threshold):
        y = np.concatenate([np.asarray(l).reshape(-1) for b in batches for l, _ in b])
        p = np.concatenate([np.asarray(q).reshape(-1) for b in batches for _, q in b])
        return skm.accuracy_score(y.astype(np.int64), (p > threshold).astype(np.int64))

    ba = [[(labels01(6), probs(6)), (labels01(3), probs(3))],
          [(np.array([0., 1, 0]), np.array([0.5, 0.6, 0.61]))]]
    out.append(case("binary_accuracy_default", "binary_accuracy", {"threshold": None},
                    ba, bacc(ba, 0.5)))
    out.append(case("binary_accuracy_0.6", "binary_accuracy", {"threshold": 0.6},
                    ba, bacc(ba, 0.6)))
    logits = [[(labels01(4, 3), rng.normal(size=(4, 3)))], [(labels01(2, 3), rng.normal(size=(2, 3)))]]
    out.append(case("binary_accuracy_multilabel_logits", "binary_accuracy", {"threshold": 0.0},
                    logits, bacc(logits, 0.0)))
    return out


# ------------------------------------------------------------ regression


def sample_means(batches, f):
    """Mean over samples of the per-sample mean of f(label - pred)."""
    per = []
    for b in batches:
        for l, p in b:
            p = np.asarray(p)
            l = np.asarray(l).reshape(p.shape)
            d = (l - p).reshape(p.shape[0], -1)
            per.extend(f(d).mean(axis=1))
    return float(np.mean(per))


def flat(batches):
    y = np.concatenate([np.asarray(l).reshape(-1) for b in batches for l, _ in b])
    p = np.concatenate([np.asarray(q).reshape(-1) for b in batches for _, q in b])
    return y, p


def regression_cases():
    out = []
    r = lambda *s: rng.normal(size=s)
    # Labels [N] with predictions [N, 1] (read as a reshape), batches of
    # different sizes: the mean is over samples, not over batches.
    col = [[(r(5), r(5, 1)), (r(2), r(2, 1))], [(r(9), r(9, 1))], [(r(1), r(1, 1))]]
    wide = [[(r(4, 3), r(4, 3))], [(r(2, 3), r(2, 3)), (r(6, 3), r(6, 3))]]
    for name, b in (("column", col), ("wide", wide)):
        y, p = flat(b)
        mae = skm.mean_absolute_error(y, p)
        mse = skm.mean_squared_error(y, p)
        assert close(mae, sample_means(b, np.abs))
        assert close(mse, sample_means(b, np.square))
        out.append(case(f"mae_{name}", "mae", {}, b, mae))
        out.append(case(f"mse_{name}", "mse", {}, b, mse))
        out.append(case(f"rmse_{name}", "rmse", {}, b,
                        skm.mean_squared_error(y, p, squared=False)))
    # Samples of different sizes in different batches: each sample counts
    # once (Gluon 2.0), so this is not the mean over elements.
    mixed = [[(r(4, 2), r(4, 2))], [(r(3, 5), r(3, 5))], [(r(2, 2, 3), r(2, 2, 3))]]
    out.append(case("mae_mixed_widths", "mae", {}, mixed, sample_means(mixed, np.abs)))
    out.append(case("mse_mixed_widths", "mse", {}, mixed, sample_means(mixed, np.square)))
    out.append(case("rmse_mixed_widths", "rmse", {}, mixed,
                    math.sqrt(sample_means(mixed, np.square))))

    # Pearson over every element seen.
    def pearson(batches):
        y, p = flat(batches)
        if np.all(y == y[0]) or np.all(p == p[0]):
            return float("nan")
        v = scipy.stats.pearsonr(y, p)[0]
        assert close(v, np.corrcoef(y, p)[0, 1], 1e-10)
        return v

    def correlated(n, offset=0.0, slope=0.8, shape=None):
        x = r(n)
        y = slope * x + 0.5 * r(n)
        shape = shape or (n,)
        return offset + x.reshape(shape), offset + y.reshape(shape)

    pb = [[correlated(7), correlated(3, shape=(3, 1))], [correlated(10, shape=(2, 5))],
          [correlated(1)], [correlated(6)]]
    out.append(case("pearsonr_batches", "pearsonr", {}, pb, pearson(pb)))
    neg = [[correlated(8, slope=-1.5)], [correlated(5, slope=-1.5)]]
    out.append(case("pearsonr_negative", "pearsonr", {}, neg, pearson(neg)))
    # A large common offset: naive sums of squares lose every digit here.
    big = [[correlated(50, offset=1e8)], [correlated(30, offset=1e8)],
           [correlated(20, offset=1e8)]]
    out.append(case("pearsonr_offset_1e8", "pearsonr", {}, big, pearson(big)))
    const = [[(r(4), np.full(4, 3.0))], [(r(3), np.full(3, 3.0))]]
    out.append(case("pearsonr_constant_pred", "pearsonr", {}, const, float("nan")))
    # Constant within each batch, but not over both: over all samples the
    # correlation is defined.
    steps = [[(np.array([1., 2, 3]), np.full(3, 1.0))], [(np.array([4., 5, 7]), np.full(3, 2.0))]]
    out.append(case("pearsonr_constant_per_batch", "pearsonr", {}, steps, pearson(steps)))
    return out


# --------------------------------------------------- probabilities, distances


def nll_cases():
    out = []

    def softmax(n, c):
        z = rng.normal(size=(n, c))
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def classes(n, c):
        return rng.integers(0, c, size=n).astype(np.float64)

    zero = softmax(3, 4)
    zero[1, 2] = 0.0
    b = [[(classes(5, 4), softmax(5, 4)), (np.array([0., 2, 3]), zero)],
         [(classes(6, 4).reshape(6, 1), softmax(6, 4))]]
    for eps in (1e-12, 1e-6):
        lab = torch.tensor(np.concatenate([np.asarray(l).reshape(-1) for x in b for l, _ in x])).long()
        pr = torch.tensor(np.concatenate([p for x in b for _, p in x]))
        v = F.nll_loss(torch.log(pr + eps), lab).item()
        out.append(case(f"nll_eps{eps:g}", "nll-loss", {"eps": eps}, b, v))
    return out


def distance_cases():
    out = []
    r = lambda *s: rng.normal(size=s)
    b = [[(r(4, 3), r(4, 3)), (r(2, 3), r(2, 3))], [(r(3, 2, 3), r(3, 2, 3))], [(r(5), r(5))]]

    def mpd(batches, p):
        d = []
        for x in batches:
            for l, q in x:
                q = np.asarray(q)
                diff = (np.asarray(l).reshape(q.shape) - q).reshape(q.shape[0], -1)
                for row, lrow, qrow in zip(diff, np.asarray(l).reshape(q.shape[0], -1),
                                           q.reshape(q.shape[0], -1)):
                    v = np.linalg.norm(row, ord=p)
                    if p == math.inf:
                        assert close(v, scipy.spatial.distance.chebyshev(lrow, qrow))
                    elif p >= 1:
                        assert close(v, scipy.spatial.distance.minkowski(lrow, qrow, p), 1e-10)
                    d.append(v)
        return float(np.mean(d))

    for p in (2.0, 1.0, 3.0, 0.5, math.inf):
        out.append(case(f"mpd_p{p:g}", "mpd", {"p": num(p)}, b, mpd(b, p)))

    def cos(batches, eps):
        s = []
        for x in batches:
            for l, q in x:
                q = np.asarray(q)
                q2 = q.reshape(-1, q.shape[-1])
                l2 = np.asarray(l).reshape(q2.shape)
                dot = (l2 * q2).sum(axis=1)
                v = dot / np.maximum(np.linalg.norm(l2, axis=1) * np.linalg.norm(q2, axis=1), eps)
                # scikit-learn has no floor: compare where it does not bite.
                ok = np.linalg.norm(l2, axis=1) * np.linalg.norm(q2, axis=1) > eps
                if ok.any():
                    sk = np.diag(skp.cosine_similarity(l2[ok], q2[ok]))
                    assert np.allclose(v[ok], sk, rtol=1e-12, atol=1e-12)
                s.extend(v)
        return float(np.mean(s))

    zero = r(3, 4)
    zero[1] = 0.0
    cb = [[(r(4, 4), r(4, 4)), (r(2, 4), zero[:2])], [(r(2, 3, 4), r(2, 3, 4))],
          [(r(4), r(4))], [(r(3, 4), zero)]]
    out.append(case("cos_sim_default", "cos_sim", {"eps": 1e-8}, cb, cos(cb, 1e-8)))
    small = [[(np.array([[1e-3, 0], [3., 4]]), np.array([[1e-3, 1e-3], [4., 3]]))]]
    out.append(case("cos_sim_eps_floor", "cos_sim", {"eps": 1e-4}, small, cos(small, 1e-4)))
    return out


def main():
    cases = binary_cases() + regression_cases() + nll_cases() + distance_cases()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    out = {
        "generator": "make_goldens_metrics.py: numpy %s, scikit-learn %s, scipy %s, torch %s"
                     % (np.__version__, sklearn.__version__, scipy.__version__, torch.__version__),
        "cases": cases,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens_metrics.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, allow_nan=False)
        f.write("\n")
    print("wrote", len(cases), "cases to", path)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Repeats a char-lm run in PyTorch, for the side-by-side comparison.

    go run ./tutorials/char-lm                      # writes out/char-lm
    /usr/bin/python3 tutorials/char-lm/pytorch_char_lm.py out/char-lm
    /usr/bin/python3 tutorials/char-lm/pytorch_char_lm.py --bench gpt 40   # step time only

It reads what the Go program wrote into its output directory: the text
(input.txt), the settings (run.json) and Goluon's initial parameters
(init.safetensors). It builds the same model with the same parameter
names (torch.nn.TransformerEncoderLayer blocks, or nn.LSTM), loads those
initial values, draws the same batches with the same splitmix64 sampler,
and trains with AdamW, the same warm-up and cosine schedule, the same
weight-decay groups and gradient clipping. It prints the evaluations and
a JSON line with val_loss and tokens_per_sec, like the Go program.
Debian's python3-torch is enough (safetensors is read by hand), but its
BLAS is whatever libblas.so.3 points at: with Debian's reference BLAS the
run is ~20x slower than with OpenBLAS (apt-get install libopenblas0-pthread,
as bench/compare.sh does); the script warns when no optimised BLAS is
loaded. For the timings in README.md it ran with THREADS=1
OPENBLAS_NUM_THREADS=2 (the faster of the two splits on 2 cores).
"""
import json
import math
import os
import struct
import sys
import time

import torch

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.s = seed & MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def batch(rng, data, n, t):
    span = len(data) - t - 1
    starts = [rng.next() % span for _ in range(n)]
    x = torch.stack([data[i:i + t] for i in starts])
    y = torch.stack([data[i + 1:i + t + 1] for i in starts])
    return x, y


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    dtypes = {"F32": torch.float32, "F64": torch.float64}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        buf = bytearray(raw[8 + n + b:8 + n + e])
        t = torch.frombuffer(buf, dtype=dtypes[info["dtype"]]) if buf else torch.empty(0)
        out[name] = t.reshape(info["shape"]).float()
    return out


class GPT(torch.nn.Module):
    def __init__(self, c, vocab):
        super().__init__()
        E = c["embed"]
        self.wte = torch.nn.Embedding(vocab, E)
        self.wpe = torch.nn.Embedding(c["context"], E)
        self.nblocks = c["layers"]
        for i in range(c["layers"]):
            setattr(self, f"h{i}", torch.nn.TransformerEncoderLayer(
                E, c["heads"], 4 * E, dropout=c["dropout"], activation="gelu",
                batch_first=True, norm_first=True))
        self.ln_f = torch.nn.LayerNorm(E)
        self.head = torch.nn.Linear(E, vocab)

    def forward(self, idx):
        t = idx.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool, device=idx.device).triu(1)
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for i in range(self.nblocks):
            x = getattr(self, f"h{i}")(x, src_mask=mask)
        return self.head(self.ln_f(x))


class LSTMLM(torch.nn.Module):
    def __init__(self, c, vocab):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, c["embed"])
        self.lstm = torch.nn.LSTM(c["embed"], c["hidden"], num_layers=c["layers"],
                                  dropout=c["dropout"], batch_first=True)
        self.head = torch.nn.Linear(c["hidden"], vocab)

    def forward(self, idx):
        return self.head(self.lstm(self.wte(idx))[0])


def load_goluon(model, path):
    """Loads Goluon's parameters: LayerNorm's gamma and beta are PyTorch's
    weight and bias; every other name is the same."""
    src = read_safetensors(path)
    renamed = {}
    for k, v in src.items():
        k = k[:-len("gamma")] + "weight" if k.endswith("gamma") else k
        k = k[:-len("beta")] + "bias" if k.endswith("beta") else k
        renamed[k] = v
    model.load_state_dict(renamed, strict=True)


def cosine_lr(step, c):
    """Goluon's optimizer.Cosine with linear warm-up from 0 (1-based steps)."""
    W, M, base, final = c["warmup"], c["steps"], c["lr"], c["min_lr"]
    if step < W:
        return base * step / W
    if step >= M:
        return final
    frac = (step - W) / (M - W)
    return final + (base - final) * (1 + math.cos(math.pi * frac)) / 2


def warn_reference_blas():
    torch.ones(64, 64) @ torch.ones(64, 64)
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return
    if not any(k in maps for k in ("openblas", "libmkl", "libblis")):
        print("warning: PyTorch is using the reference BLAS (slow); "
              "apt-get install libopenblas0-pthread", file=sys.stderr)


def bench(model_kind, steps):
    """Times training steps of a model at the tutorial's default sizes on
    synthetic tokens (as BenchmarkStep does in Go) and prints tokens/s.
    DEVICE=cuda runs it on the GPU (each step ends with reading the loss,
    as Goluon's does)."""
    dev = torch.device(os.environ.get("DEVICE", "cpu"))
    c = {"model": model_kind, "embed": 128, "context": 64, "layers": 4 if model_kind == "gpt" else 2,
         "heads": 4, "hidden": 256, "dropout": 0.0}
    V, B, T = 117, 12, 64
    model = (GPT if model_kind == "gpt" else LSTMLM)(c, V).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    data = torch.tensor([(i * 7919) % V for i in range(100_000)], dtype=torch.long)
    rng = SplitMix64(1)

    def step():
        x, y = batch(rng, data, B, T)
        x, y = x.to(dev), y.to(dev)
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss.item()
    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    dt = (time.perf_counter() - t0) / steps
    print(json.dumps({"model": model_kind, "ms_per_step": dt * 1e3, "tokens_per_sec": B * T / dt,
                      "threads": torch.get_num_threads(), "device": str(dev)}))


def main():
    warn_reference_blas()
    torch.set_num_threads(int(os.environ.get("THREADS", os.cpu_count())))
    if len(sys.argv) > 1 and sys.argv[1] == "--bench":
        bench(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40)
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "out/char-lm"
    with open(os.path.join(out, "run.json")) as f:
        c = json.load(f)
    with open(os.path.join(out, "input.txt"), "rb") as f:
        text = f.read()
    chars = sorted(set(text))
    ids = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([ids[ch] for ch in text], dtype=torch.long)
    cut = len(data) * 9 // 10
    train, val = data[:cut], data[cut:]
    model = (GPT if c["model"] == "gpt" else LSTMLM)(c, len(chars))
    load_goluon(model, os.path.join(out, "init.safetensors"))
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=c["lr"], betas=(0.9, c["beta2"]), eps=1e-8)
    B, T = c["batch"], c["context"]

    @torch.no_grad()
    def estimate(split, seed):
        model.eval()
        rng = SplitMix64(seed)
        total = 0.0
        for _ in range(c["eval_iters"]):
            x, y = batch(rng, split, B, T)
            total += torch.nn.functional.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1)).item()
        model.train()
        return total / c["eval_iters"]

    def evaluate(step):
        tl, vl = estimate(train, c["seed"] + 1), estimate(val, c["seed"] + 2)
        print(f"step {step}: train loss {tl:.4f}, val loss {vl:.4f} (perplexity {math.exp(vl):.2f})", flush=True)
        return tl, vl

    rng = SplitMix64(c["seed"])
    model.train()
    evaluate(0)
    seconds = 0.0
    for step in range(1, c["steps"] + 1):
        x, y = batch(rng, train, B, T)
        t0 = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = cosine_lr(step, c)
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip"])
        opt.step()
        seconds += time.perf_counter() - t0
        if step % c["eval_interval"] == 0 or step == c["steps"]:
            tl, vl = evaluate(step)
    print(json.dumps({"program": "pytorch_char_lm", "model": c["model"], "steps": c["steps"],
                      "train_loss": tl, "val_loss": vl,
                      "tokens_per_sec": round(c["steps"] * B * T / seconds),
                      "torch": torch.__version__, "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()

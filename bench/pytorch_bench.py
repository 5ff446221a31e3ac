#!/usr/bin/python3
"""PyTorch side of `make bench`: the workloads of bench/*_test.go.

Same models, batch 128, optimizers and synthetic data as the Go
benchmarks; warm-up, then a fixed number of timed iterations. Prints one
JSON object {workload: value} with the Go benchmark names (without the
Benchmark prefix and the /Nctx suffix) and units: samples/s, or GFLOP/s for
MatMul and ConvLayer.

--rss-only runs nothing but LeNet's training step (2 warm-up steps and
200 x --scale timed ones, as BenchmarkTrainStepLeNetRSS) and prints
{"TrainStepLeNetRSS": peak RSS of the process in MiB} (ru_maxrss), so run
it in a process of its own.

Threading is set by the caller: --threads N calls torch.set_num_threads(N);
OPENBLAS_NUM_THREADS and the glibc MALLOC_* variables come from the
environment (see compare.sh, which runs two configurations and keeps the
better one per workload).
"""
import argparse
import json
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 128

# The tutorials' convolutions (bench/conv_test.go): name, in channels,
# input height = width, out channels, kernel size, padding; stride 1.
CONV_LAYERS = (
    ("lenet1", 1, 28, 6, 5, 0),
    ("lenet2", 6, 12, 16, 3, 0),
    ("cifar1", 3, 32, 32, 3, 1),
    ("cifar2", 32, 32, 32, 3, 0),
    ("cifar3", 32, 15, 64, 3, 1),
    ("cifar4", 64, 15, 64, 3, 0),
)


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, 10),
    )


def mlp():
    return nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(),
        nn.Linear(256, 256), nn.ReLU(),
        nn.Linear(256, 10),
    )


def keras_cifar():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 32, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(64 * 6 * 6, 512), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(512, 10),
    )


def timed(fn, warmup, iters, sync=None):
    """Seconds for iters calls of fn after warmup ones; sync, when given,
    waits for queued device work before each clock reading."""
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    if sync:
        sync()
    return time.perf_counter() - t0


def train_step(net, opt, shape, warmup, iters, device=None):
    """Samples/s of training steps on synthetic data; with a device, each
    step copies the batch and labels there from host memory."""
    torch.manual_seed(1)
    net.train()
    x = torch.rand(*shape)
    y = torch.arange(shape[0]) % 10
    lossfn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        if device is None:
            lossfn(net(x), y).backward()
        else:
            lossfn(net(x.to(device)), y.to(device)).backward()
        opt.step()

    return shape[0] * iters / timed(step, warmup, iters, sync_for(device))


def infer(net, shape, warmup, iters, device=None):
    """Samples/s of forward passes in eval mode; with a device, each pass
    copies the batch there and the scores back."""
    torch.manual_seed(1)
    net.eval()
    x = torch.rand(*shape)

    def step():
        with torch.no_grad():
            if device is None:
                net(x)
            else:
                net(x.to(device)).cpu()

    return shape[0] * iters / timed(step, warmup, iters, sync_for(device))


def sync_for(device):
    """The synchronisation timed needs for device (None on the CPU)."""
    if device is None or torch.device(device).type != "cuda":
        return None
    return torch.cuda.synchronize


def matmul(n, warmup, iters, dtype=torch.float32):
    torch.manual_seed(1)
    a = (torch.rand(n, n) * 2 - 1).to(dtype)
    b = (torch.rand(n, n) * 2 - 1).to(dtype)
    return 2 * n ** 3 * iters / timed(lambda: torch.mm(a, b), warmup, iters) / 1e9


def conv_layer(c, hw, oc, k, pad, fwdbwd, warmup, iters):
    """GFLOP/s of one convolution with bias at batch B: forward under
    no_grad, or (fwdbwd) forward plus backward from a ones head gradient
    into the input, weight and bias; 2*N*OC*OH*OW*C*K*K flops forward, 3x
    that for fwdbwd (same formula as conv_test.go)."""
    torch.manual_seed(1)
    o = hw + 2 * pad - k + 1
    x = torch.rand(B, c, hw, hw)
    w = torch.rand(oc, c, k, k) * 0.2 - 0.1
    b = torch.rand(oc) * 0.2 - 0.1
    flops = 2 * B * oc * o * o * c * k * k
    if fwdbwd:
        for t in (x, w, b):
            t.requires_grad_(True)
        ones = torch.ones(B, oc, o, o)

        def step():
            x.grad = w.grad = b.grad = None
            F.conv2d(x, w, b, padding=pad).backward(ones)

        flops *= 3
    else:
        def step():
            with torch.no_grad():
                F.conv2d(x, w, b, padding=pad)

    return flops * iters / timed(step, warmup, iters) / 1e9


def peak_rss_mib():
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# The workload groups, each run alone by make bench beside its Go side.
GROUPS = ("cifar", "lenet", "lenet32", "mlp", "infer", "matmul", "conv", "resnet", "resnet50", "hybrid")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the timed iteration counts")
    ap.add_argument("--rss-only", action="store_true",
                    help="run only LeNet's training step and print its peak RSS")
    ap.add_argument("--only", default="",
                    help="comma-separated groups to run (default: all): " + ", ".join(GROUPS))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    def it(n):
        return max(1, int(n * a.scale))

    lenet_net = lenet()
    if a.rss_only:
        train_step(lenet_net, torch.optim.SGD(lenet_net.parameters(), lr=0.04),
                   [B, 1, 28, 28], 2, it(200))
        json.dump({"TrainStepLeNetRSS": peak_rss_mib()}, sys.stdout)
        print()
        return
    groups = a.only.split(",") if a.only else list(GROUPS)
    for g in groups:
        if g not in GROUPS:
            sys.exit("pytorch_bench.py: unknown group %s (known: %s)" % (g, ", ".join(GROUPS)))
    res = {}
    if "cifar" in groups:
        kc = keras_cifar()
        res["TrainStepKerasCIFAR"] = train_step(
            kc, torch.optim.RMSprop(kc.parameters(), lr=1e-4, alpha=0.9), [B, 3, 32, 32], 3, it(15))
    if "lenet" in groups:
        res["TrainStepLeNet"] = train_step(
            lenet_net, torch.optim.SGD(lenet_net.parameters(), lr=0.04), [B, 1, 28, 28], 10, it(200))
    if "lenet32" in groups:
        net32 = lenet()
        res["TrainStepLeNetB32"] = train_step(
            net32, torch.optim.SGD(net32.parameters(), lr=0.04), [32, 1, 28, 28], 10, it(400))
    if "mlp" in groups:
        m = mlp()
        res["TrainStepMLP"] = train_step(
            m, torch.optim.SGD(m.parameters(), lr=0.1), [B, 784], 20, it(400))
    if "infer" in groups:
        res["InferLeNet"] = infer(lenet(), [B, 1, 28, 28], 20, it(400))
    if "hybrid" in groups:
        # The workloads of Goluon's BenchmarkHybrid* (eager and hybridized
        # there; PyTorch eager here): LeNet's step at batch 32, the MLP's
        # at batch 128, LeNet's inference at batch 1.
        h32 = lenet()
        res["HybridTrainLeNetB32"] = train_step(
            h32, torch.optim.SGD(h32.parameters(), lr=0.04), [32, 1, 28, 28], 10, it(400))
        hm = mlp()
        res["HybridTrainMLP"] = train_step(
            hm, torch.optim.SGD(hm.parameters(), lr=0.1), [B, 784], 20, it(200))
        res["HybridInferLeNetB1"] = infer(lenet(), [1, 1, 28, 28], 100, it(4000))
    if "resnet" in groups or "resnet50" in groups:
        from torchvision.models import resnet
    if "resnet" in groups:
        # torchvision's ResNet-18 at CIFAR's shape, as Goluon's model zoo
        # builds it (gluon/model/vision): batch 128, SGD momentum 0.9.
        r = resnet.resnet18(num_classes=10)
        res["TrainStepResNet18CIFAR"] = train_step(
            r, torch.optim.SGD(r.parameters(), lr=0.01, momentum=0.9), [B, 3, 32, 32], 2, it(10))
        res["InferResNet18CIFAR"] = infer(resnet.resnet18(num_classes=10), [B, 3, 32, 32], 2, it(20))
    if "resnet50" in groups:
        r = resnet.resnet50()
        res["TrainStepResNet50"] = train_step(
            r, torch.optim.SGD(r.parameters(), lr=0.01, momentum=0.9), [32, 3, 224, 224], 1, it(3))
        res["InferResNet50"] = infer(resnet.resnet50(), [32, 3, 224, 224], 1, it(5))
    if "matmul" in groups:
        # Iteration counts as compare.sh's Go runs: about 1 s per size.
        for n, iters in ((128, 20000), (256, 4000), (512, 500), (1024, 80), (2048, 12)):
            res["MatMul/n=%d" % n] = matmul(n, 3, it(iters))
        for n, iters in ((256, 3000), (512, 500), (1024, 80)):
            res["MatMulBF16/n=%d" % n] = matmul(n, 3, it(iters), torch.bfloat16)
    if "conv" in groups:
        for name, c, hw, oc, k, pad in CONV_LAYERS:
            iters = it(400 if name.startswith("lenet") else 40)
            for pas in ("forward", "fwdbwd"):
                res["ConvLayer/%s/%s" % (name, pas)] = conv_layer(
                    c, hw, oc, k, pad, pas == "fwdbwd", 2, iters)
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()

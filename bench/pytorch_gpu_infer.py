#!/usr/bin/python3
"""LeNet inference on cuda:0 taken apart, the PyTorch side of
cuda/bench_test.go's BenchmarkInferLeNetGPUParts: the batch's copy alone,
the forward pass on a batch already on the GPU (synchronised, scores left
there), that pass with the scores read back, and the whole step. Prints
one JSON object of samples/s keyed like the Go benchmarks; with --profile,
also torch.profiler's table of the whole step's GPU kernels (to stderr).
"""
import argparse
import json
import sys

import torch

from pytorch_bench import infer, lenet, timed

B = 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--full-only", action="store_true", help="time the whole step only")
    a = ap.parse_args()
    dev = torch.device("cuda:0")
    torch.manual_seed(1)
    net = lenet().to(dev).eval()
    x = torch.rand(B, 1, 28, 28)
    xd = x.to(dev)
    sync = torch.cuda.synchronize

    def copy():
        x.to(dev)

    def forward():
        with torch.no_grad():
            net(xd)

    def forward_read():
        with torch.no_grad():
            net(xd).cpu()

    res = {}
    parts = [] if a.full_only else [("copy", copy), ("forward", forward), ("forward+read", forward_read)]
    for name, f in parts:
        res["InferLeNetGPUParts/" + name] = B * a.iters / timed(lambda: (f(), sync()), 20, a.iters, sync)
    res["InferLeNetGPU"] = infer(net, [B, 1, 28, 28], 20, a.iters, dev)
    print(json.dumps(res))
    if a.profile:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
            for _ in range(100):
                with torch.no_grad():
                    net(x.to(dev)).cpu()
            sync()
        print("torch.profiler, 100 inference steps:", file=sys.stderr)
        print(p.key_averages().table(sort_by="cuda_time_total", row_limit=20), file=sys.stderr)


if __name__ == "__main__":
    main()

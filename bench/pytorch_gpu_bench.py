#!/usr/bin/python3
"""PyTorch side of bench/gpu_compare.sh: the workloads of cuda/bench_test.go
in PyTorch eager on cuda:0.

Same models (from pytorch_bench.py), batch 128, optimizers and synthetic
data as the Go GPU benchmarks. As there, every training step copies its
batch and labels from host memory to the GPU, inference copies the scores
back, and the clock stops once the GPU's work is done. Prints one JSON
object {workload: value} keyed by the Go benchmark names (without the
Benchmark prefix): samples/s, or us/op for the per-op costs.

  OpOverhead: x + x on 64 float32 elements, queued back to back with the
              GPU busy, synchronised once at the end (the host cost of an op)
  OpLatency:  the same op with its result copied to host memory each time
              (launch to result)
"""
import argparse
import json
import sys

import torch

from pytorch_bench import infer, keras_cifar, lenet, mlp, timed, train_step

B = 128


def op_us(latency, warmup, iters):
    x = torch.ones(64, device="cuda")
    if latency:
        def step():
            (x + x).cpu()
    else:
        def step():
            x + x
    return timed(step, warmup, iters, torch.cuda.synchronize) * 1e6 / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the timed iteration counts")
    ap.add_argument("--no-tf32", action="store_true",
                    help="turn TF32 off for convolutions too (PyTorch allows it there by default; "
                         "Goluon's cuDNN convolutions use full float32 unless GOLUON_CUDNN_TF32=1)")
    ap.add_argument("--only", default="",
                    help="comma-separated workloads to run (default: all)")
    a = ap.parse_args()
    if a.no_tf32:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False

    def it(n):
        return max(1, int(n * a.scale))

    dev = torch.device("cuda:0")

    def lenet_step():
        net = lenet().to(dev)
        return train_step(net, torch.optim.SGD(net.parameters(), lr=0.04), [B, 1, 28, 28], 20, it(500), dev)

    def mlp_step():
        net = mlp().to(dev)
        return train_step(net, torch.optim.SGD(net.parameters(), lr=0.1), [B, 784], 20, it(1000), dev)

    def cifar_step():
        net = keras_cifar().to(dev)
        return train_step(net, torch.optim.RMSprop(net.parameters(), lr=1e-4, alpha=0.9),
                          [B, 3, 32, 32], 10, it(300), dev)

    workloads = {
        "TrainStepLeNetGPU/gpu0": lenet_step,
        "TrainStepMLPGPU/gpu0": mlp_step,
        "TrainStepKerasCIFARGPU/gpu0": cifar_step,
        "InferLeNetGPU": lambda: infer(lenet().to(dev), [B, 1, 28, 28], 20, it(1000), dev),
        "OpOverhead": lambda: op_us(False, 100, it(20000)),
        "OpLatency": lambda: op_us(True, 100, it(5000)),
    }
    only = [w for w in a.only.split(",") if w] if a.only else list(workloads)
    res = {}
    for w in only:
        if w not in workloads:
            sys.exit("pytorch_gpu_bench.py: unknown workload %s (known: %s)" % (w, ", ".join(workloads)))
        res[w] = workloads[w]()
    json.dump(res, sys.stdout)
    print()
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                      "cudnn_tf32": torch.backends.cudnn.allow_tf32,
                      "matmul_tf32": torch.backends.cuda.matmul.allow_tf32}),
          file=sys.stderr)


if __name__ == "__main__":
    main()

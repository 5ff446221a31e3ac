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
  HybridInferLeNetGPUB1: InferLeNetGPU at batch 1 (latency)
  TrainStepAMPGPU/{KerasCIFAR,LeNet,ResNet18}/{float32,float16,bfloat16}: the
              training step under torch.autocast (float16 with
              torch.amp.GradScaler; not in the default list)
  TrainStepResNet50GPU/gpu0, InferResNet50GPU: torchvision's resnet50
              (weights=None, 1000 classes) at 3x224x224, batch 32, SGD with
              learning rate 0.01 and momentum 0.9 (cuda/bench_resnet_test.go;
              run with --tf32 beside GOLUON_CUDNN_TF32=1 for TF32 on both
              sides)

TF32: PyTorch's defaults allow it in cuDNN's convolutions and not in
matmuls; --tf32 allows it in both, --no-tf32 in neither. The settings in
force go to standard error with the device and versions, as one JSON line.
"""
import argparse
import json
import sys

import torch

from pytorch_bench import infer, keras_cifar, lenet, mlp, sync_for, timed, train_step

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


def new_tf32_api():
    """Whether this torch has the fp32_precision settings (2.9 and later),
    which replace the allow_tf32 flags; mixing the two makes torch raise.
    (Older torch.backends.cuda.matmul raises AssertionError for unknown
    attributes, so hasattr does not do.)"""
    try:
        torch.backends.cuda.matmul.fp32_precision
        torch.backends.cudnn.conv.fp32_precision
        return True
    except (AttributeError, AssertionError):
        return False


def set_tf32(on):
    """Allows TF32 in cuDNN and matmuls, or forbids it in both."""
    mode = "tf32" if on else "ieee"
    if new_tf32_api():
        # cuDNN's own setting and its conv and rnn ones alike, so that no
        # getter sees the mixture torch reports as an error.
        for obj in (torch.backends.cudnn, torch.backends.cudnn.conv,
                    getattr(torch.backends.cudnn, "rnn", None), torch.backends.cuda.matmul):
            if obj is not None and hasattr(obj, "fp32_precision"):
                obj.fp32_precision = mode
    else:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def tf32_state():
    """Whether convolutions and matmuls may use TF32, read through the API
    that set_tf32 writes (with the settings themselves under the new one)."""
    if new_tf32_api():
        conv = torch.backends.cudnn.conv.fp32_precision
        mm = torch.backends.cuda.matmul.fp32_precision
        return {"cudnn_tf32": conv == "tf32", "matmul_tf32": mm == "tf32",
                "cudnn_conv_fp32_precision": conv, "matmul_fp32_precision": mm}
    return {"cudnn_tf32": torch.backends.cudnn.allow_tf32,
            "matmul_tf32": torch.backends.cuda.matmul.allow_tf32}


def resnet18_cifar():
    from torchvision.models import resnet18 as build
    return build(num_classes=10)


def resnet50():
    from torchvision.models import resnet50 as build
    return build(weights=None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies the timed iteration counts")
    ap.add_argument("--no-tf32", action="store_true",
                    help="turn TF32 off for convolutions too (PyTorch allows it there by default; "
                         "Goluon's cuDNN convolutions use full float32 unless GOLUON_CUDNN_TF32=1)")
    ap.add_argument("--tf32", action="store_true",
                    help="allow TF32 in matmuls too (the pairing of GOLUON_CUDNN_TF32=1, "
                         "as gpu_compare.sh's resnet50 workload runs it)")
    ap.add_argument("--only", default="",
                    help="comma-separated workloads to run (default: all but the ResNet-50 ones)")
    a = ap.parse_args()
    if a.no_tf32 and a.tf32:
        sys.exit("pytorch_gpu_bench.py: --tf32 and --no-tf32 exclude each other")
    if a.no_tf32 or a.tf32:
        set_tf32(a.tf32)

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

    def resnet50_step():
        net = resnet50().to(dev)
        return train_step(net, torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9),
                          [32, 3, 224, 224], 5, it(40), dev)

    def amp_step(make, make_opt, shape, warmup, iters, dtype):
        """A training step under torch.autocast (float16 with a GradScaler,
        bfloat16 without; float32: neither)."""
        torch.manual_seed(1)
        net = make().to(dev)
        net.train()
        opt = make_opt(net)
        scaler = torch.amp.GradScaler("cuda", enabled=dtype == torch.float16)
        x = torch.rand(*shape)
        y = torch.arange(shape[0]) % 10
        lossfn = torch.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16 if dtype == torch.float32 else dtype,
                                enabled=dtype != torch.float32):
                loss = lossfn(net(x.to(dev)), y.to(dev))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()

        return shape[0] * iters / timed(step, warmup, iters, sync_for(dev))

    def amp_workloads():
        nets = {
            "KerasCIFAR": (keras_cifar, lambda n: torch.optim.RMSprop(n.parameters(), lr=1e-4, alpha=0.9),
                           [B, 3, 32, 32], 300),
            "LeNet": (lenet, lambda n: torch.optim.SGD(n.parameters(), lr=0.04), [B, 1, 28, 28], 500),
            "ResNet18": (resnet18_cifar, lambda n: torch.optim.SGD(n.parameters(), lr=0.01, momentum=0.9),
                         [B, 3, 32, 32], 100),
        }
        out = {}
        for name, (make, make_opt, shape, n) in nets.items():
            for dtn, dt in (("float32", torch.float32), ("float16", torch.float16), ("bfloat16", torch.bfloat16)):
                out["TrainStepAMPGPU/%s/%s" % (name, dtn)] = (
                    lambda make=make, make_opt=make_opt, shape=shape, n=n, dt=dt:
                    amp_step(make, make_opt, shape, 10, it(n), dt))
        return out

    workloads = {
        "TrainStepLeNetGPU/gpu0": lenet_step,
        "TrainStepMLPGPU/gpu0": mlp_step,
        "TrainStepKerasCIFARGPU/gpu0": cifar_step,
        "InferLeNetGPU": lambda: infer(lenet().to(dev), [B, 1, 28, 28], 20, it(1000), dev),
        "HybridInferLeNetGPUB1": lambda: infer(lenet().to(dev), [1, 1, 28, 28], 50, it(1000), dev),
        "HybridTrainLeNetGPU": lambda: (lambda net: train_step(net, torch.optim.SGD(net.parameters(), lr=0.04),
                                                               [32, 1, 28, 28], 20, it(500), dev))(lenet().to(dev)),
        "OpOverhead": lambda: op_us(False, 100, it(20000)),
        "OpLatency": lambda: op_us(True, 100, it(5000)),
        "TrainStepResNet50GPU/gpu0": resnet50_step,
        "InferResNet50GPU": lambda: infer(resnet50().to(dev), [32, 3, 224, 224], 5, it(100), dev),
    }
    workloads.update(amp_workloads())
    only = ([w for w in a.only.split(",") if w] if a.only
            else [w for w in workloads if "ResNet50" not in w and "AMP" not in w])
    res = {}
    for w in only:
        if w not in workloads:
            sys.exit("pytorch_gpu_bench.py: unknown workload %s (known: %s)" % (w, ", ".join(workloads)))
        res[w] = workloads[w]()
    json.dump(res, sys.stdout)
    print()
    info = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()}
    info.update(tf32_state())
    print(json.dumps(info), file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""PyTorch reference for tutorials/mnist-convnet-bn.

The same model, initialisation, optimizer, batch size and epochs as the Go
program, on the same Fashion-MNIST files, so that the accuracy Goluon reaches
can be set beside PyTorch's:

    Conv 32@3x3 relu, Conv 256@3x3 relu, BatchNorm (Keras' momentum .99,
    eps 1e-3), Conv 128@3x3 relu, maxpool 2, dropout .25, Flatten,
    Dense 128 relu, dropout .5, Dense 10; Glorot-uniform weights, zero biases;
    RMSprop lr 1e-3, rho (alpha) .9, eps 1e-7 (after the square root, as in
    Keras and Goluon's KerasEpsilon); softmax cross-entropy; batch 128.

Runs on the CPU with Debian's python3-torch (1.13) and numpy. Its fastest
setting found on our 2-core machines: channels-last tensors (the default here;
--contiguous turns it off, about 20% slower), OPENBLAS_NUM_THREADS=1 and glibc's
malloc kept from returning memory to the system (bench/compare.sh sets the same):

    export OPENBLAS_NUM_THREADS=1 MALLOC_MMAP_THRESHOLD_=33554432 \
        MALLOC_TRIM_THRESHOLD_=4294967296 MALLOC_TOP_PAD_=67108864

    /usr/bin/python3 tutorials/mnist-convnet-bn/pytorch_mnist_convnet_bn.py            # 12 epochs
    /usr/bin/python3 tutorials/mnist-convnet-bn/pytorch_mnist_convnet_bn.py --epochs 1 --limit 1000

Prints one Keras-like line per epoch (with the epoch's training time),
"total: Xs", and last a JSON line with the fields of the Go program's summary.
"""
import argparse
import gzip
import json
import os
import time

import numpy as np
import torch
from torch import nn


def read_idx(path, offset):
    """Returns the bytes of a gzip-compressed IDX file after its header."""
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(data_dir, train, limit):
    """Loads images as float32 [N,1,28,28] in [0,1] and labels as int64 [N]."""
    prefix = "train" if train else "t10k"
    x = read_idx(os.path.join(data_dir, prefix + "-images-idx3-ubyte.gz"), 16)
    y = read_idx(os.path.join(data_dir, prefix + "-labels-idx1-ubyte.gz"), 8)
    x = x.reshape(-1, 1, 28, 28)
    if limit > 0:  # the Go program's -limit: N training, N/5 test samples
        n = limit if train else max(limit // 5, 1)
        x, y = x[:n], y[:n]
    return torch.from_numpy(x.astype(np.float32) / 255.0), torch.from_numpy(y.astype(np.int64))


def make_net():
    """Builds the notebook's ConvNet, initialised as Keras does."""
    net = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(),
        nn.Conv2d(32, 256, 3), nn.ReLU(),
        nn.BatchNorm2d(256, eps=1e-3, momentum=0.01),  # Keras momentum .99
        nn.Conv2d(256, 128, 3), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(128 * 11 * 11, 128), nn.ReLU(),
        nn.Dropout(0.5),
        nn.Linear(128, 10),
    )
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(m.weight)
            nn.init.zeros_(m.bias)
    return net


def evaluate(net, loss_fn, x, y, batch, fmt):
    """Returns mean loss and accuracy in eval mode."""
    net.eval()
    total_loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = net(x[i:i + batch].contiguous(memory_format=fmt))
            total_loss += loss_fn(out, y[i:i + batch]).item() * len(out)
            correct += (out.argmax(1) == y[i:i + batch]).sum().item()
    return total_loss / len(x), correct / len(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist", help="directory of the idx .gz files")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--limit", type=int, default=0, help="train on the first N samples (test on N/5); 0: all")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--contiguous", action="store_true",
                   help="keep NCHW tensors instead of channels-last (slower on the CPU)")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x_train, y_train = load(a.data, True, a.limit)
    x_test, y_test = load(a.data, False, a.limit)
    print(f"pytorch {torch.__version__}: {len(x_train)} training, {len(x_test)} test samples; "
          f"batch {a.batch_size}, {a.threads} threads", flush=True)

    net = make_net()
    fmt = torch.contiguous_format if a.contiguous else torch.channels_last
    net = net.to(memory_format=fmt)
    opt = torch.optim.RMSprop(net.parameters(), lr=a.lr, alpha=0.9, eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    start = time.time()
    epoch_seconds, samples = [], 0
    for epoch in range(1, a.epochs + 1):
        net.train()
        t0 = time.time()
        order = torch.randperm(len(x_train))
        total_loss, correct = 0.0, 0
        for i in range(0, len(order), a.batch_size):
            idx = order[i:i + a.batch_size]
            xb, yb = x_train[idx], y_train[idx]
            opt.zero_grad()
            out = net(xb.contiguous(memory_format=fmt))
            loss = loss_fn(out, yb)
            loss.backward()
            opt.step()
            total_loss += loss.item() * len(idx)
            correct += (out.argmax(1) == yb).sum().item()
        dt = time.time() - t0
        epoch_seconds.append(round(dt, 3))
        samples += len(order)
        train_loss, train_acc = total_loss / len(order), correct / len(order)
        val_loss, val_acc = evaluate(net, loss_fn, x_test, y_test, a.batch_size, fmt)
        print(f"Epoch {epoch}/{a.epochs} - {dt:.1f}s - {len(order) / dt:.0f} samples/s - loss: {train_loss:.4f} - "
              f"accuracy: {train_acc:.4f} - val_loss: {val_loss:.4f} - val_accuracy: {val_acc:.4f}", flush=True)
    seconds = round(time.time() - start, 3)
    print(f"total: {seconds:.1f}s - {a.epochs} epochs - mean epoch {sum(epoch_seconds) / a.epochs:.1f}s")
    print(json.dumps({
        "program": "pytorch-mnist-convnet-bn",
        "epochs": a.epochs,
        "contexts": [f"cpu ({a.threads} threads)"],
        "train_acc": train_acc, "val_acc": val_acc,
        "train_loss": train_loss, "val_loss": val_loss,
        "samples_per_sec": round(samples / sum(epoch_seconds), 1),
        "seconds": seconds,
        "extra": {"torch": torch.__version__, "batch_size": a.batch_size, "channels_last": not a.contiguous,
                  "epoch_seconds": epoch_seconds},
    }))


if __name__ == "__main__":
    main()

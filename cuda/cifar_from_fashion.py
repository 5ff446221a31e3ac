#!/usr/bin/env python3
"""Writes Fashion-MNIST as CIFAR-10 binary files, for running the CIFAR
tutorials on a machine that has no CIFAR-10 (the device machines cannot
download it, and Debian does not package it).

Each 28x28 grey image is zero-padded to 32x32 and copied into the three
colour planes; records are <label byte><3072 pixel bytes> as CIFAR-10's.
The 60,000 training images fill data_batch_1..5.bin (12,000 each; CIFAR's
hold 10,000), the 10,000 test images test_batch.bin.

usage: cifar_from_fashion.py FASHION_DIR OUT_DIR
       (writes OUT_DIR/cifar-10-batches-bin/; pass OUT_DIR as -data)
"""
import gzip
import os
import struct
import sys


def idx(path):
    """Returns (dims, body bytes) of a gzipped idx file."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def records(images, labels):
    """One CIFAR record per image: label, then the padded image three times."""
    (n, h, w), pix = images
    assert (h, w) == (28, 28) and labels[0] == (n,), "not 28x28 images with one label each"
    blank = bytes(32 * 2)
    out = []
    for i in range(n):
        img = pix[i * 784:(i + 1) * 784]
        plane = blank + b"".join(b"\0\0" + img[r * 28:(r + 1) * 28] + b"\0\0" for r in range(28)) + blank
        out.append(bytes([labels[1][i]]) + plane * 3)
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    out = os.path.join(dst, "cifar-10-batches-bin")
    os.makedirs(out, exist_ok=True)
    tr = records(idx(os.path.join(src, "train-images-idx3-ubyte.gz")),
                 idx(os.path.join(src, "train-labels-idx1-ubyte.gz")))
    te = records(idx(os.path.join(src, "t10k-images-idx3-ubyte.gz")),
                 idx(os.path.join(src, "t10k-labels-idx1-ubyte.gz")))
    per = len(tr) // 5
    for i in range(5):
        with open(os.path.join(out, "data_batch_%d.bin" % (i + 1)), "wb") as f:
            f.write(b"".join(tr[i * per:(i + 1) * per]))
    with open(os.path.join(out, "test_batch.bin"), "wb") as f:
        f.write(b"".join(te))
    print("wrote %d training and %d test records to %s" % (len(tr), len(te), out))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Converts a PyTorch state dict (.pth, as torch.save(model.state_dict())
writes it) to safetensors, the format Goluon loads (gluon/model/vision
LoadStateDict, gluon.ParamDict.Load). It needs only Debian's python3-torch:
the safetensors Python package is not used.

usage: torch2safetensors.py IN.pth OUT.safetensors

A checkpoint that wraps the state dict ({"state_dict": ...} or
{"model": ...}) is unwrapped. Tensors are written contiguous, in name order,
with their own dtype (F32, F64, F16, BF16, I64, I32, U8, BOOL).
"""
import json
import struct
import sys

import torch

DTYPES = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
    torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
    torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
}


def tensor_bytes(t):
    """The tensor's elements as little-endian bytes, row-major."""
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: go through int16
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} to path in the safetensors format."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in DTYPES:
            raise ValueError("%s: unsupported dtype %s" % (name, t.dtype))
        b = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # align the data to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    sd = torch.load(argv[1], map_location="cpu")
    for key in ("state_dict", "model"):
        if isinstance(sd, dict) and key in sd and isinstance(sd[key], dict):
            sd = sd[key]
    tensors = {k: v for k, v in sd.items() if torch.is_tensor(v)}
    write_safetensors(argv[2], tensors, {"format": "pt"})
    print("%s: %d tensors" % (argv[2], len(tensors)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

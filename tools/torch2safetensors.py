#!/usr/bin/python3
"""Converts a PyTorch state dict (.pth, as torch.save(model.state_dict())
writes it) to safetensors, the format Goluon loads (gluon/model/vision
LoadStateDict, gluon.ParamDict.Load), and back. It needs only Debian's
python3-torch: the safetensors Python package is not used.

usage: torch2safetensors.py IN.pth OUT.safetensors
       torch2safetensors.py --to-torch IN.safetensors OUT.pth

The state dict is found in the common checkpoint layouts: the dict itself,
{"state_dict": ...}, {"model": ...}, {"model_state_dict": ...} (PyTorch's
checkpoint tutorial) or another single "*state_dict" entry, and a whole
module saved with torch.save(model) (its state_dict()). A file in which no
tensors are found, or whose nested dicts or objects would be dropped, is an
error that lists its top-level keys. Tensors are written contiguous, in name
order, with their own dtype (F32, F64, F16, BF16, I64, I32, I16, I8, U8,
BOOL). --to-torch writes a safetensors file (Goluon's SaveStateDict) as a
state dict that torch.load and load_state_dict read.
"""
import json
import struct
import sys

import collections
import torch

DTYPES = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
    torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
    torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
}
TORCH = {v: k for k, v in DTYPES.items()}


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


def read_safetensors(path):
    """Reads a safetensors file into {name: tensor}."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("%s: too short for a safetensors file" % path)
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError("%s: the header runs past the end of the file" % path)
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        if h["dtype"] not in TORCH:
            raise ValueError("%s: tensor %s has unsupported dtype %s" % (path, name, h["dtype"]))
        lo, hi = h["data_offsets"]
        if not 0 <= lo <= hi <= len(body):
            raise ValueError("%s: tensor %s's data lies outside the file" % (path, name))
        dt = TORCH[h["dtype"]]
        raw = bytearray(body[lo:hi])
        if dt == torch.bfloat16:
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16) if raw else torch.empty(0, dtype=dt)
        else:
            t = torch.frombuffer(raw, dtype=dt) if raw else torch.empty(0, dtype=dt)
        out[name] = t.reshape(h["shape"]).clone()
    return out


def state_dict_of(obj):
    """Finds the state dict in a torch.load result, or raises ValueError."""
    if isinstance(obj, torch.nn.Module):
        return obj.state_dict()
    if not isinstance(obj, dict):
        raise ValueError("the file holds a %s, not a state dict or a checkpoint dict" % type(obj).__name__)
    for key in ("state_dict", "model_state_dict", "model"):
        if key in obj and isinstance(obj[key], (dict, torch.nn.Module)):
            return state_dict_of(obj[key])
    nested = [k for k, v in obj.items() if isinstance(v, dict) and str(k).endswith("state_dict")]
    if not any(torch.is_tensor(v) for v in obj.values()) and len(nested) == 1:
        return state_dict_of(obj[nested[0]])
    return obj


def main(argv):
    if len(argv) == 4 and argv[1] == "--to-torch":
        tensors = collections.OrderedDict(read_safetensors(argv[2]))
        # The root module's version, as torch.save keeps it in the state
        # dict's _metadata: torchvision's MNASNet refuses a state dict
        # without it (2 is its current layout); other modules ignore it.
        tensors._metadata = collections.OrderedDict({"": {"version": 2}})
        torch.save(tensors, argv[3])
        print("%s: %d tensors" % (argv[3], len(tensors)))
        return 0
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    obj = torch.load(argv[1], map_location="cpu")
    try:
        sd = state_dict_of(obj)
    except ValueError as e:
        sys.stderr.write("%s: %s\n" % (argv[1], e))
        return 1
    tensors = {k: v for k, v in sd.items() if torch.is_tensor(v)}
    dropped = [k for k, v in sd.items() if not torch.is_tensor(v)]
    if not tensors or dropped:
        what = "no tensors" if not tensors else "entries that are not tensors (%s)" % ", ".join(map(str, dropped[:8]))
        keys = ", ".join(map(str, list(obj.keys())[:20])) if isinstance(obj, dict) else type(obj).__name__
        sys.stderr.write("%s: found %s; the top-level keys are: %s\n" % (argv[1], what, keys))
        return 1
    write_safetensors(argv[2], tensors, {"format": "pt"})
    print("%s: %d tensors" % (argv[2], len(tensors)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

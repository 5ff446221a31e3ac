#!/usr/bin/python3
"""Write half_goldens.json: float32 values (as bit patterns) and PyTorch's
conversions of them to float16 and bfloat16 (as bit patterns), for
nd/backend's TestHalfAgainstPyTorch. Values: specials (±0, ±Inf, NaN,
float16's and bfloat16's extremes and subnormals), exact ties between
neighbouring half values, and seeded random values over many magnitudes.

usage: /usr/bin/python3 nd/testdata/golden/make_half_goldens.py   (Debian's python3-torch)
"""
import json
import os
import struct

import torch


def bits32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def main():
    g = torch.Generator().manual_seed(20261126)
    vals = [0.0, -0.0, float("inf"), float("-inf"), 65504.0, 65519.99, 65520.0, -65520.0,
            6.103515625e-05, 5.960464477539063e-08, 2.980232238769531e-08, 2.9802326e-08,
            1e-45, 1.17549435e-38, 3.4028235e38, 1.0, 1.5, -2.75, 1.0009765625, 1.00048828125,
            1.00146484375, 0.1, 1.0 / 3.0]
    # ties between neighbouring float16 and bfloat16 values
    for h in range(0, 0x7c00, 97):
        a = torch.tensor([h], dtype=torch.int16).view(torch.float16).float().item()
        b = torch.tensor([h + 1], dtype=torch.int16).view(torch.float16).float().item()
        vals += [(a + b) / 2, -(a + b) / 2]
    for e in range(-130, 128, 3):
        u = torch.rand(8, generator=g) * 2 - 1
        vals += [float(x) * 2.0 ** e for x in u]
    x = torch.tensor(vals, dtype=torch.float32)
    nan = torch.tensor([float("nan")], dtype=torch.float32)
    x = torch.cat([x, nan])
    f16 = x.half().view(torch.int16).tolist()
    bf16 = x.bfloat16().view(torch.int16).tolist()
    rows = [[bits32(v), a & 0xffff, b & 0xffff] for v, a, b in zip(x.tolist(), f16, bf16)]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "half_goldens.json")
    with open(out, "w") as f:
        json.dump({"torch": torch.__version__, "rows": rows}, f)
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main()

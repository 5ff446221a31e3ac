#!/usr/bin/python3
"""Writes external.onnx, whose two weights sit in external.weights.bin
beside it (onnx.save_model with save_as_external_data, as large models are
saved), and external_io.safetensors with an input and the output numpy
computes, for gluon/onnx's external-data test (Debian's python3-onnx).

usage: /usr/bin/python3 make_external.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "tools"))
from torch2safetensors import write_safetensors  # noqa: E402
import torch  # noqa: E402


def main(out):
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"])],
        "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save_model(m, os.path.join(out, "external.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="external.weights.bin", size_threshold=0)
    write_safetensors(os.path.join(out, "external_io.safetensors"),
                      {"input": torch.from_numpy(x), "output": torch.from_numpy(x @ w + b)})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

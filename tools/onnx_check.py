#!/usr/bin/python3
"""Run ONNX's own checker (full check, with shape inference) on models
exported by goluon's gluon/onnx.Export: `make onnx-check`.

usage: /usr/bin/python3 tools/onnx_check.py FILE.onnx...
Needs Debian's python3-onnx. Prints one line per file and exits non-zero
if any model fails.
"""
import sys

import onnx


def main(paths):
    bad = 0
    for path in paths:
        try:
            model = onnx.load(path)
            onnx.checker.check_model(model, full_check=True)
            inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
            out = inferred.graph.output[0].type.tensor_type.shape
            dims = [d.dim_param or d.dim_value for d in out.dim]
            ops = sorted({n.op_type for n in model.graph.node})
            print(f"ok   {path}: opset {model.opset_import[0].version}, {len(model.graph.node)} nodes, output {dims}, ops {' '.join(ops)}")
        except Exception as e:  # the checker raises several kinds
            bad += 1
            print(f"FAIL {path}: {type(e).__name__}: {e}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

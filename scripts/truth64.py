#!/usr/bin/env python3
"""Float64 ground truth for the exported models (make truth64).

The reference outputs that ../shared/tools/export writes are one float32
PyTorch run, whose own rounding (amplified through a deep network) can
exceed `cuvil check -rtol 1e-3 -atol 1e-4`: on inception_v3 the float64
result itself misses 2 of the 1000 float32 reference logits. This rebuilds
each model exactly as the exporter does (models_def's seeded build, so the
same float32 weights), runs it in float64 (model.double()) on each
test_data_set_K's inputs and writes CACHE/<name>_opN/truth64/test_data_set_K
(the inputs copied, the outputs rounded to float32), which
`make check-breadth BENCH_TRUTH=1` checks against instead.

Usage: truth64.py [--cache DIR] [--shared DIR] [NAME_opN ...]  (default: every
model folder in the cache whose model models_def knows). Needs the
exporter's Python (torch, onnx: /usr/bin/python3 after model.sh set-up).
"""
import argparse
import glob
import os
import shutil
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--cache", default=os.environ.get("CUVIL_MODELS") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cuvil-models"))
ap.add_argument("--shared", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
ap.add_argument("models", nargs="*")
args = ap.parse_args()
sys.path.insert(0, os.path.join(args.shared, "tools", "export"))
try:
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper as nh
    from models_def import MODELS
except ImportError as e:
    sys.exit(f"truth64: {e} (run ../shared/tools/export/model.sh once to install the exporter)")

torch.set_num_threads(os.cpu_count() or 1)
folders = args.models or sorted(os.path.basename(d) for d in glob.glob(os.path.join(args.cache, "*_op*")))
for f in folders:
    name = f.rsplit("_op", 1)[0]
    d = os.path.join(args.cache, f)
    if name not in MODELS or not os.path.isfile(os.path.join(d, "model.onnx")):
        print(f"truth64: {f}: not a models_def model in {args.cache}, skipped", file=sys.stderr)
        continue
    spec = MODELS[name]
    model = spec["build"]().eval().double()
    for src in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
        ins = []
        for i in range(len(spec["input_names"])):
            t = onnx.TensorProto()
            with open(os.path.join(src, f"input_{i}.pb"), "rb") as fh:
                t.ParseFromString(fh.read())
            a = nh.to_array(t)
            ins.append(torch.from_numpy(a.astype(np.float64) if a.dtype == np.float32 else a.copy()))
        with torch.no_grad():
            out = model(*ins)
        out = out if isinstance(out, (tuple, list)) else (out,)
        dst = os.path.join(d, "truth64", os.path.basename(src))
        os.makedirs(dst, exist_ok=True)
        for p in glob.glob(os.path.join(src, "input_*.pb")):
            shutil.copy(p, dst)
        for i, o in enumerate(out):
            ref = onnx.TensorProto()
            with open(os.path.join(src, f"output_{i}.pb"), "rb") as fh:
                ref.ParseFromString(fh.read())
            a = o.numpy()
            if a.dtype == np.float64:
                a = a.astype(np.float32)
            t = nh.from_array(a, ref.name)
            with open(os.path.join(dst, f"output_{i}.pb"), "wb") as fh:
                fh.write(t.SerializeToString())
        print(f"truth64: {f}/{os.path.basename(src)}: {[tuple(o.shape) for o in out]}", file=sys.stderr)

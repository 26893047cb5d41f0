"""Classifies the sample digit with the cuvil-compiled mnist library.

Run from this folder after `make -C mnist/capi`:  python3 classify.py
"""
import os
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "mnist", "python"))
import mnist  # noqa: E402  (the generated wrapper)

image = np.fromfile(os.path.join(here, "..", "mnist", "input_0.f32"), dtype=np.float32).reshape(1, 1, 28, 28)
with mnist.Model(os.path.join(here, "mnist", "capi", "libmnist.so")) as model:
    print("inputs:", [(a.name, a.dims) for a in model.inputs])
    log_probs = model.run({"input": image})["log_probs"]
    print("predicted class:", int(log_probs.argmax()))
    print("log-probs:", np.round(log_probs.ravel(), 4))

#!/usr/bin/python3
"""Trains the small CNN of `make demo` and writes it to testdata/digits/.

The data set is scikit-learn's handwritten digits (sklearn.datasets.load_digits:
1797 images of 8x8 pixels, values 0..16, shipped inside scikit-learn, so nothing
is downloaded). A fixed, stratified 80/20 split holds back 360 images that
training never sees. Pixels are scaled to [0, 1]; the model takes a batch of
them as float32 [batch, 1, 8, 8] and returns log-probabilities [batch, 10].

Writes (all small):
  testdata/digits/model.onnx                      the trained model (opset 13)
  testdata/digits/test_data_set_0/input_0.pb      the held-back images, TensorProto float32 [360, 1, 8, 8]
  testdata/digits/test_data_set_0/output_0.pb     PyTorch's log-probabilities on them, float32 [360, 10]
  testdata/digits/labels.pb                       their true digits, TensorProto int64 [360]

Needs Debian's python3-torch (1.13), python3-onnx, python3-numpy and
python3-sklearn (`apt-get install python3-sklearn`). Rerun from the repository
root with

    /usr/bin/python3 tools/train_digits.py

It is deterministic (seeded, one thread, deterministic algorithms): a rerun on
the same packages writes byte-identical files. It prints the accuracy on the
held-back images.
"""

import argparse
import os
import random

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0


class DigitsCNN(nn.Module):
    """Conv-ReLU-Conv-ReLU-MaxPool-Linear-ReLU-Linear-LogSoftmax (about 10k weights)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 4 * 4, 32), nn.ReLU(),
            nn.Linear(32, 10),
            nn.LogSoftmax(dim=1),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="testdata/digits", help="output folder (default testdata/digits)")
    ap.add_argument("--epochs", type=int, default=30)
    args = ap.parse_args()

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=SEED, stratify=y)

    model = DigitsCNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.NLLLoss()
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    gen = torch.Generator().manual_seed(SEED)
    batch = 64
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        if epoch % 10 == 9 or epoch == args.epochs - 1:
            print(f"epoch {epoch + 1}: train loss {total / len(xt):.4f}")

    model.eval()
    xs = torch.from_numpy(x_test)
    with torch.no_grad():
        logp = model(xs)
    pred = logp.argmax(dim=1).numpy()
    acc = float((pred == y_test).mean())
    print(f"held-back accuracy (PyTorch): {acc * 100:.2f}% of {len(y_test)}")

    os.makedirs(os.path.join(args.out, "test_data_set_0"), exist_ok=True)
    path = os.path.join(args.out, "model.onnx")
    torch.onnx.export(
        model, xs[:1], path, opset_version=13,
        input_names=["image"], output_names=["log_probs"],
        dynamic_axes={"image": {0: "batch"}, "log_probs": {0: "batch"}},
        do_constant_folding=True)
    m = onnx.load(path)
    m.producer_name = "cuvil tools/train_digits.py"
    m.producer_version = torch.__version__
    m.doc_string = ("Small CNN trained on sklearn.datasets.load_digits (8x8, pixels/16), "
                    f"seed {SEED}; held-back accuracy {acc * 100:.2f}% of {len(y_test)}")
    onnx.checker.check_model(m)
    onnx.save(m, path)

    def save(arr, name, file):
        t = numpy_helper.from_array(arr, name)
        with open(os.path.join(args.out, file), "wb") as f:
            f.write(t.SerializeToString())

    save(x_test, "image", "test_data_set_0/input_0.pb")
    save(logp.numpy().astype(np.float32), "log_probs", "test_data_set_0/output_0.pb")
    save(y_test, "labels", "labels.pb")
    print(f"wrote {args.out}/model.onnx, test_data_set_0/input_0.pb, test_data_set_0/output_0.pb, labels.pb")


if __name__ == "__main__":
    main()

"""Make mxnet_optimizer_values.npz: MXNet 1.9.1's weights after three updates of each
optimizer configuration that ndrt has, with dense and row_sparse gradients (the reference
of tests/runtime/test_optim_mxnet.py).  Run with MXNet 1.9.1 (it needs NumPy < 2; its
``np.bool`` is patched for NumPy >= 1.24):

    python -m venv /tmp/mxvenv && /tmp/mxvenv/bin/pip install "numpy<2" "mxnet==1.9.1"
    /tmp/mxvenv/bin/python tests/runtime/data/make_mxnet_optimizer_values.py
"""
import json
import os

import numpy as np

np.bool = bool          # MXNet 1.9.1 still says np.bool
import mxnet as mx     # noqa: E402

# (name, kwargs); the same list is read back by the test from the file.
CONFIGS = [
    ("sgd", {"learning_rate": 0.1, "wd": 0.01}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "clip_gradient": 0.5}),
    ("sgd", {"learning_rate": 0.1, "momentum": 0.9, "lazy_update": False}),
    # wd 0: MXNet's in-place nag_mom_update reads the new weight in its wd term
    ("nag", {"learning_rate": 0.1, "momentum": 0.9, "clip_gradient": 0.5}),
    ("adam", {"learning_rate": 0.01, "wd": 0.01, "rescale_grad": 0.5}),
    ("adam", {"learning_rate": 0.01, "lazy_update": False}),
    ("adagrad", {"learning_rate": 0.1, "wd": 0.0}),
    ("rmsprop", {"learning_rate": 0.01, "wd": 0.01}),
    ("rmsprop", {"learning_rate": 0.01, "centered": True, "clip_weights": 2.0}),
    ("ftrl", {"learning_rate": 0.1, "lamda1": 0.01, "wd": 0.01}),
    ("signum", {"learning_rate": 0.01, "momentum": 0.9, "wd": 0.01, "wd_lh": 0.05}),
    ("signum", {"learning_rate": 0.01, "momentum": 0.0}),
    ("adamax", {"learning_rate": 0.01, "wd": 0.01}),
    ("adadelta", {"rho": 0.9, "wd": 0.01}),
    ("nadam", {"learning_rate": 0.01, "wd": 0.01}),
    ("dcasgd", {"learning_rate": 0.1, "momentum": 0.9, "lamda": 0.1}),
    ("lamb", {"learning_rate": 0.01, "wd": 0.01}),
    ("ftml", {"learning_rate": 0.05, "wd": 0.01, "clip_gradient": 0.5}),
    ("lars", {"learning_rate": 0.1, "momentum": 0.9, "eta": 0.01, "wd": 0.01}),
    ("lars", {"learning_rate": 0.1, "eta": 0.05, "eps": 0.1, "rescale_grad": 0.5}),
]
SHAPE, STEPS, ROWS = (6, 4), 3, ([0, 2, 5], [1, 2], [3, 5])


def inputs():
    rng = np.random.default_rng(2024)
    w0 = rng.standard_normal(SHAPE).astype(np.float32)
    grads = [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(STEPS)]
    return w0, grads


def run(name, kw, sparse):
    w0, grads = inputs()
    opt = mx.optimizer.create(name, **kw)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array(w0)
    for g, rows in zip(grads, ROWS):
        if sparse:
            ga = mx.nd.sparse.row_sparse_array((g[rows], np.array(rows)), shape=SHAPE)
        else:
            ga = mx.nd.array(g)
        updater(0, ga, w)
    return w.asnumpy()


def main():
    out, done = {}, []
    w0, grads = inputs()
    out["w0"], out["grads"] = w0, np.stack(grads)
    for i, (name, kw) in enumerate(CONFIGS):
        for sparse in (False, True):
            try:
                out[f"{i}_{int(sparse)}"] = run(name, kw, sparse)
                done.append([i, int(sparse)])
            except Exception as e:      # MXNet refuses some optimizers' sparse gradients
                print(f"MXNet refuses {name} {kw} sparse={sparse}: {str(e).splitlines()[0]}")
    out["configs"] = np.array(json.dumps({"configs": CONFIGS, "done": done, "rows": ROWS}))
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "mxnet_optimizer_values.npz"), **out)
    print(f"{len(done)} cases written with MXNet {mx.__version__}")


if __name__ == "__main__":
    main()

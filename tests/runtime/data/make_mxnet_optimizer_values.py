"""Make mxnet_optimizer_values.npz: MXNet 1.9.1's weights after three updates of each
optimizer configuration that ndrt has, with dense and row_sparse gradients, and the
outputs of LAMB's phase operators (the reference of tests/runtime/test_optim_mxnet.py).  Run with MXNet 1.9.1 (it needs NumPy < 2; its
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
    # LBSGD: counts 1..3 with batch_scale 3 (one update, the mean of 3 gradients, linear
    # warm-up); power2 and sqrt warm-ups (begin_epoch shifts the counts); lars
    ("lbsgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "warmup_epochs": 2,
               "updates_per_epoch": 2, "batch_scale": 3}),
    ("lbsgd", {"learning_rate": 0.1, "warmup_strategy": "power2", "warmup_epochs": 2,
               "updates_per_epoch": 2, "batch_scale": 2, "clip_gradient": 0.5}),
    ("lbsgd", {"learning_rate": 0.1, "momentum": 0.5, "warmup_strategy": "sqrt",
               "warmup_epochs": 3, "updates_per_epoch": 1, "batch_scale": 2,
               "begin_epoch": 1, "rescale_grad": 0.5}),
    ("lbsgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01, "warmup_strategy": "lars"}),
    ("lamb", {"learning_rate": 0.01, "wd": 0.01, "bias_correction": False,
              "upper_bound": 1.0, "clip_gradient": 0.5, "rescale_grad": 2.0}),
    ("lamb", {"learning_rate": 0.01, "beta1": 0.8, "lower_bound": 10.0}),
]
# lamb_update_phase1 attributes (t, wd ...) and lamb_update_phase2 bounds of the op cases
PHASES = [
    ({"t": 1, "wd": 0.1}, {"lr": 0.01}),
    ({"t": 3, "wd": 0.0, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-4, "rescale_grad": 2.0,
      "clip_gradient": 0.7, "bias_correction": False}, {"lr": 0.1, "upper_bound": 0.5}),
    ({"t": 2, "wd": 0.01}, {"lr": 0.1, "lower_bound": 100.0}),
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


def phases(out):
    """Each PHASES case on the same inputs: phase 1's g and states, then phase 2's
    weight with r1, r2 the norms; and the mp_ forms on the weight cast to float16."""
    rng = np.random.default_rng(7)
    w, g, mean = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3))
    var = rng.random(SHAPE).astype(np.float32)
    out["phase_in"] = np.stack([w, g, mean, var])
    for i, (a1, a2) in enumerate(PHASES):
        m, v = mx.nd.array(mean), mx.nd.array(var)
        gg = mx.nd.lamb_update_phase1(mx.nd.array(w), mx.nd.array(g), m, v, **a1)
        w2 = mx.nd.lamb_update_phase2(mx.nd.array(w), gg, mx.nd.array(w).norm(), gg.norm(),
                                      **a2)
        out[f"phase_{i}"] = np.stack([gg.asnumpy(), m.asnumpy(), v.asnumpy(), w2.asnumpy()])
        m, v, w32 = mx.nd.array(mean), mx.nd.array(var), mx.nd.array(w)
        w16 = mx.nd.array(w, dtype=np.float16)
        gg = mx.nd.mp_lamb_update_phase1(w16, mx.nd.array(g, dtype=np.float16), m, v, w32,
                                         **a1)
        w2 = mx.nd.mp_lamb_update_phase2(w16, gg, w32.norm(), gg.norm(), w32, **a2)
        out[f"mp_phase_{i}"] = np.stack([gg.asnumpy(), m.asnumpy(), v.asnumpy(),
                                         w2.asnumpy().astype(np.float32)])


def main():
    out, done = {}, []
    w0, grads = inputs()
    out["w0"], out["grads"] = w0, np.stack(grads)
    phases(out)
    for i, (name, kw) in enumerate(CONFIGS):
        for sparse in (False, True):
            try:
                out[f"{i}_{int(sparse)}"] = run(name, kw, sparse)
                done.append([i, int(sparse)])
            except Exception as e:      # MXNet refuses some optimizers' sparse gradients
                print(f"MXNet refuses {name} {kw} sparse={sparse}: {str(e).splitlines()[0]}")
    out["configs"] = np.array(json.dumps({"configs": CONFIGS, "done": done, "rows": ROWS,
                                          "phases": PHASES}))
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "mxnet_optimizer_values.npz"), **out)
    print(f"{len(done)} cases written with MXNet {mx.__version__}")


if __name__ == "__main__":
    main()

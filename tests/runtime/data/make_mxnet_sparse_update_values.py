"""Write mxnet_sparse_update_values.npz: MXNet 1.9.1's optimizer update operators on
row_sparse weights, gradients and states (two updates in a row, ``out=weight``), the
cases of ``CASES``.  Run with an interpreter where ``import mxnet`` is MXNet 1.9.1 (the
recipe is in the peers' README), with MXNet's naive engine so that a refused case does
not stall the next::

    MXNET_ENGINE_TYPE=NaiveEngine python make_mxnet_sparse_update_values.py out.npz

For each case it stores the weight and the states after each update (``<key>_w1`` ...)
or, where MXNet refuses the case, ``<key>_error`` with its message.  The inputs are
``inputs()``: both sides make them from it.
"""

import json
import sys

import numpy as np

SHAPE = (6, 3)
ROWS = ([1, 3], [0, 3, 5])          # the gradient's rows at the first and second update
STATES = {"sgd_update": 0, "sgd_mom_update": 1, "adam_update": 2, "adagrad_update": 1,
          "ftrl_update": 2, "rmsprop_update": 1, "nag_mom_update": 1, "signum_update": 1,
          "signsgd_update": 0, "ftml_update": 3, "rmspropalex_update": 3}
ATTRS = {"sgd_update": dict(lr=0.1, wd=0.05, rescale_grad=0.5, clip_gradient=1.5),
         "sgd_mom_update": dict(lr=0.1, momentum=0.9, wd=0.05, rescale_grad=0.5),
         "adam_update": dict(lr=0.1, beta1=0.8, beta2=0.9, epsilon=1e-3, wd=0.05,
                             clip_gradient=2.0),
         "adagrad_update": dict(lr=0.1, epsilon=1e-3, rescale_grad=0.5),
         "ftrl_update": dict(lr=0.1, lamda1=0.05, beta=1.0, wd=0.05),
         "rmsprop_update": dict(lr=0.1, gamma1=0.9, epsilon=1e-3, wd=0.05),
         "nag_mom_update": dict(lr=0.1, momentum=0.9, wd=0.05),
         "signum_update": dict(lr=0.1, momentum=0.9, wd=0.05, wd_lh=0.01),
         "signsgd_update": dict(lr=0.1, wd=0.05),
         "ftml_update": dict(lr=0.1, beta1=0.6, beta2=0.9, epsilon=1e-3, wd=0.05),
         "rmspropalex_update": dict(lr=0.1, gamma1=0.9, gamma2=0.8, epsilon=1e-3, wd=0.05)}
D, R = "default", "row_sparse"


def _cases():
    out = []
    for op, n in STATES.items():
        combos = [(R, R, R), (R, R, D), (D, R, D), (D, R, R), (R, D, R), (R, D, D)]
        for w, g, s in combos:
            if n == 0 and s == R:
                continue
            for lazy in ((True, False) if op in ("sgd_update", "sgd_mom_update",
                                                  "adam_update") else (None,)):
                for init in (("zero", "values") if n and s == R else ("zero",)):
                    key = f"{op}-{w[0]}{g[0]}{s[0] if n else ''}-{init}"
                    if lazy is not None:
                        key += f"-lazy{int(lazy)}"
                    out.append(dict(key=key, op=op, w=w, g=g, s=s, lazy=lazy, init=init))
    return out


CASES = _cases()


def inputs(case):
    """(weight, [gradient values of each update], [initial state values]) as NumPy
    float32 arrays; the gradients are dense (SHAPE) with zeros outside ROWS."""
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    grads = []
    for rows in ROWS:
        g = np.zeros(SHAPE, np.float32)
        g[rows] = rng.uniform(-3, 3, (len(rows), SHAPE[1])).astype(np.float32)
        grads.append(g)
    n = STATES[case["op"]]
    if case["init"] == "zero":
        states = [np.zeros(SHAPE, np.float32) for _ in range(n)]
    else:       # positive: n and v of rmsprop, ftrl and ftml must stay >= 0
        states = [rng.uniform(0.1, 1, SHAPE).astype(np.float32) for _ in range(n)]
    if case["op"] == "rmspropalex_update" and case["init"] == "values":
        states[1] = states[1] * 0.1           # g_avg^2 < n
    return w, grads, states


def _run(mx, case, arrays):
    nd = mx.nd
    w0, grads, s0 = inputs(case)

    def make(a, stype, rows=None):
        if stype == D:
            return nd.array(a)
        if rows is None:        # every row (a weight) or none (a zero state)
            if not a.any():
                return nd.sparse.zeros(R, SHAPE)
            rows = list(range(SHAPE[0]))
        return nd.sparse.row_sparse_array((a[rows], rows), shape=SHAPE)
    w = make(w0, case["w"])
    states = [make(s, case["s"]) for s in s0]
    fn = getattr(nd.sparse, case["op"], None) or getattr(nd, case["op"])
    attrs = dict(ATTRS[case["op"]])
    if case["lazy"] is not None:
        attrs["lazy_update"] = case["lazy"]
    key = case["key"]
    try:
        for t, (g, rows) in enumerate(zip(grads, ROWS), 1):
            if case["op"] == "ftml_update":
                attrs["t"] = t
            fn(w, make(g, case["g"], rows), *states, out=w, **attrs)
            arrays[f"{key}_w{t}"] = w.asnumpy()
            for i, s in enumerate(states):
                arrays[f"{key}_s{i}_{t}"] = s.asnumpy()
    except mx.base.MXNetError as e:
        lines = [x for x in str(e).splitlines() if "Check failed" in x or "rror" in x]
        arrays[f"{key}_error"] = np.array((lines or [str(e)])[-1][:300])
        for t in (1, 2):
            arrays.pop(f"{key}_w{t}", None)
            for i in range(len(states)):
                arrays.pop(f"{key}_s{i}_{t}", None)


def main(path):
    import mxnet as mx
    assert mx.__version__ == "1.9.1", mx.__version__
    arrays = {}
    for case in CASES:
        _run(mx, case, arrays)
    arrays["cases"] = np.array(json.dumps(CASES))
    np.savez_compressed(path, **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
